#include <fmt/format.h>

#include "catalog/loaders.h"
#include "util/dtype_names.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr std::string_view kPrecisionNames[kPrecisionCount] = {"fp32", "tf32", "fp16",
                                                               "bf16", "fp8",  "int8"};
// The CSV column holding each precision's peak, in tera-operations per second.
constexpr std::string_view kPeakColumns[kPrecisionCount] = {
    "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops"};

// No accelerator comes near these; a larger figure is a typo in the file.
constexpr double kMaxMemoryGb = 4096;
constexpr double kMaxBandwidthGbps = 100000;
constexpr double kMaxTflops = 100000;

}  // namespace

std::string_view PrecisionName(Precision precision) {
  return kPrecisionNames[static_cast<int>(precision)];
}

bool ParsePrecision(std::string_view name, Precision* out) {
  std::string key = CanonicalDtypeName(name);  // float16 and bfloat16 too
  for (int i = 0; i < kPrecisionCount; ++i) {
    if (key == kPrecisionNames[i]) {
      *out = static_cast<Precision>(i);
      return true;
    }
  }
  return false;
}

Status ParseAccelerators(const CsvTable& table, std::vector<Accelerator>* out) {
  Status s = table.RequireColumns({"name", "vendor", "aliases", "memory_gb", "memory_bw_gbps",
                                   "fp32_tflops", "source", "as_of"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    Accelerator a;
    a.name = r.RequiredName("name");
    a.vendor = r.RequiredText("vendor");
    a.aliases = SplitList(r.Text("aliases"), '|');
    a.architecture = r.Text("architecture");
    a.compute_capability = r.Text("compute_capability");
    a.form_factor = r.Text("form_factor");
    a.memory_bytes = r.Number("memory_gb", 0.001, kMaxMemoryGb) * kBytesPerGib;
    a.memory_type = r.Text("memory_type");
    a.memory_bandwidth_bytes_per_s = r.Number("memory_bw_gbps", 1, kMaxBandwidthGbps) * 1e9;
    for (int i = 0; i < kPrecisionCount; ++i) {
      if (auto tflops = r.OptionalNumber(kPeakColumns[i], 0.001, kMaxTflops)) {
        a.peak_flops[i] = *tflops * 1e12;
      }
    }
    if (!a.peak_flops[static_cast<int>(Precision::kFp32)] && r.status().ok()) {
      r.Fail("fp32_tflops", "missing value");
    }
    a.sm_count = static_cast<int>(r.OptionalNumber("sm_count", 1, 10000).value_or(0));
    a.peak_clock_mhz = r.OptionalNumber("peak_clock_mhz", 100, 10000).value_or(0);
    a.sustained_clock_mhz = r.OptionalNumber("sustained_clock_mhz", 100, 10000).value_or(0);
    if (a.sustained_clock_mhz > 0 && a.peak_clock_mhz <= 0 && r.status().ok()) {
      r.Fail("peak_clock_mhz", "a sustained clock needs the clock the peaks are computed at");
    }
    if (auto tflops = r.OptionalNumber("fp16_acc16_tflops", 0.001, kMaxTflops)) {
      a.fp16_acc16_flops = *tflops * 1e12;
    }
    a.l2_cache_bytes = r.OptionalNumber("l2_cache_mb", 0, 100000).value_or(0) * 1024 * 1024;
    a.measured_bandwidth_bytes_per_s =
        r.OptionalNumber("measured_bw_gbps", 1, kMaxBandwidthGbps).value_or(0) * 1e9;
    if (a.measured_bandwidth_bytes_per_s > a.memory_bandwidth_bytes_per_s * 1.05 &&
        r.status().ok()) {
      r.Fail("measured_bw_gbps", "above the datasheet memory bandwidth");
    }
    auto measured = [&](std::string_view column) -> std::optional<double> {
      if (auto tflops = r.OptionalNumber(column, 0.001, kMaxTflops)) return *tflops * 1e12;
      return std::nullopt;
    };
    a.measured_gemm_fp16_flops = measured("measured_gemm_fp16_tflops");
    a.measured_gemm_tf32_flops = measured("measured_gemm_tf32_tflops");
    a.measured_gemm_fp8_flops = measured("measured_gemm_fp8_tflops");
    a.physics_source = r.Text("physics_source");
    if (!a.physics_source.empty() || a.measured_gemm_fp16_flops) {
      if (a.physics_source.empty() && r.status().ok()) {
        r.Fail("physics_source", "measured figures need their source");
      }
    }
    a.nvlink_bytes_per_s = r.OptionalNumber("nvlink_gbps", 0, kMaxBandwidthGbps).value_or(0) * 1e9;
    a.pcie_gen = static_cast<int>(r.OptionalNumber("pcie_gen", 1, 7).value_or(0));
    a.tdp_w = r.OptionalNumber("tdp_w", 1, 10000).value_or(0);
    a.rt_cores = static_cast<int>(r.OptionalNumber("rt_cores", 0, 10000).value_or(0));
    a.nvenc = static_cast<int>(r.OptionalNumber("nvenc", 0, 64).value_or(0));
    a.av1_encode = r.YesNo("av1_encode");
    a.vgpu = r.YesNo("vgpu");
    a.launch_year = static_cast<int>(r.OptionalNumber("launch_year", 1990, 2100).value_or(0));
    a.source = r.RequiredText("source");
    a.as_of = r.RequiredText("as_of");
    a.notes = r.Text("notes");
    if (a.av1_encode && a.nvenc == 0) r.Fail("av1_encode", "AV1 encode without any NVENC engine");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(a));
  }
  return Status::OK();
}

}  // namespace cloudfit
