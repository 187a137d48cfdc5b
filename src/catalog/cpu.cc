#include <fmt/format.h>

#include <algorithm>

#include "catalog/loaders.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

Status ParseCpus(const CsvTable& table, std::vector<CpuGeneration>* out) {
  Status s = table.RequireColumns(
      {"name", "vendor", "aliases", "arch", "isa", "fp32_gflops_per_vcpu", "source", "as_of"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    CpuGeneration c;
    c.name = r.RequiredName("name");
    c.vendor = r.RequiredText("vendor");
    c.aliases = SplitList(r.Text("aliases"), '|');
    c.arch = r.RequiredText("arch");
    if (r.status().ok() && c.arch != "x86_64" && c.arch != "arm64") {
      r.Fail("arch", fmt::format("'{}' is not x86_64 or arm64", Shown(c.arch)));
    }
    c.isa = ToLower(r.RequiredText("isa"));
    c.sustained_hz = r.OptionalNumber("sustained_ghz", 0.1, 10).value_or(0) * 1e9;
    c.threads_per_core = static_cast<int>(r.OptionalNumber("threads_per_core", 1, 8).value_or(1));
    c.fp32_flops_per_vcpu = r.Number("fp32_gflops_per_vcpu", 0.1, 10000) * 1e9;
    if (auto v = r.OptionalNumber("bf16_gflops_per_vcpu", 0.1, 100000)) {
      c.bf16_flops_per_vcpu = *v * 1e9;
    }
    if (auto v = r.OptionalNumber("int8_gops_per_vcpu", 0.1, 100000)) {
      c.int8_ops_per_vcpu = *v * 1e9;
    }
    c.cores_per_socket =
        static_cast<int>(r.OptionalNumber("cores_per_socket", 1, 1024).value_or(0));
    c.memory_channels = static_cast<int>(r.OptionalNumber("memory_channels", 1, 64).value_or(0));
    c.memory_type = r.Text("memory_type");
    c.memory_bandwidth_bytes_per_s_per_socket =
        r.OptionalNumber("memory_bw_gbps_per_socket", 1, 10000).value_or(0) * 1e9;
    c.launch_year = static_cast<int>(r.OptionalNumber("launch_year", 1990, 2100).value_or(0));
    c.source = r.RequiredText("source");
    c.as_of = r.RequiredText("as_of");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(c));
  }
  return Status::OK();
}

double Fp32PeakPerThread(const CpuGeneration& cpu, int logical_cpus, int physical_cores) {
  bool siblings_hidden = physical_cores > 0 && physical_cores >= logical_cpus;
  return cpu.fp32_flops_per_vcpu * (siblings_hidden ? std::max(1, cpu.threads_per_core) : 1);
}

}  // namespace cloudfit
