#include "estimate/device_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "util/strings.h"

namespace cloudfit {

namespace {

bool IsGddr(const Accelerator& gpu) {
  return ToLower(gpu.memory_type).find("gddr") != std::string::npos;
}

// A CPU we know nothing about: AVX2 with two FMA units at 2 GHz, one vCPU per hyper-thread
// (16 FP32 FLOP/cycle per thread), and 5 GB/s of DRAM bandwidth per vCPU.
constexpr double kUnknownCpuFlopsPerVcpu = 32e9;
constexpr double kUnknownCpuBytesPerSPerVcpu = 5e9;

// The fraction of datasheet bandwidth a STREAM-style copy reaches on a memory type: rows of
// data/efficiency.csv (parameter achievable_bandwidth, group = memory type), each citing the
// measurements behind it. Measured per-GPU figures, where the accelerator row has one, win.
// GDDR boards without in-band ECC take the "<type>-ecc-off" row where there is one: the
// measurements of a memory type's row are of data-centre boards with ECC on.
double AchievableBandwidth(const EfficiencyTable& efficiency, const Accelerator& gpu,
                           std::vector<std::string>* notes) {
  if (gpu.measured_bandwidth_bytes_per_s > 0) return gpu.measured_bandwidth_bytes_per_s;
  const EfficiencyFactor* row = nullptr;
  if (IsGddr(gpu) && !RunsInBandEcc(gpu)) {
    std::string group = gpu.memory_type + "-ecc-off";
    double fraction = efficiency.Lookup("achievable_bandwidth", "*", group, 0, &row);
    if (row != nullptr && row->group == group) return gpu.memory_bandwidth_bytes_per_s * fraction;
    row = nullptr;
  }
  double fraction = efficiency.Lookup("achievable_bandwidth", "*", gpu.memory_type, 0.85, &row);
  if (row == nullptr || row->group == "*") {
    notes->push_back(
        fmt::format("no bandwidth measurement for {} memory: {:.0f}% of the "
                    "datasheet assumed",
                    gpu.memory_type.empty() ? "this GPU's" : gpu.memory_type, 100 * fraction));
  }
  return gpu.memory_bandwidth_bytes_per_s * fraction;
}

// Tensor cores arrived with Volta (compute capability 7.0); AMD's matrix cores with CDNA. Pascal's
// FP16 rate is the vector units' double rate.
bool HasMatrixUnits(const Accelerator& gpu) {
  if (!gpu.compute_capability.empty()) return std::atof(gpu.compute_capability.c_str()) >= 7.0;
  return gpu.architecture.rfind("CDNA", 0) == 0;
}

// The peak a format runs at on this GPU: a format the GPU lacks falls back to the next wider
// one it has (bf16 -> fp16 on Volta/Turing, fp8 -> fp16 before Ada/Hopper, tf32 -> fp32).
void ChooseMathUnit(const Accelerator& gpu, NumericFormat format, DeviceModel* d) {
  std::vector<Precision> chain;
  switch (format) {
    case NumericFormat::kFp32:
      chain = {Precision::kFp32};
      break;
    case NumericFormat::kTf32:
      chain = {Precision::kTf32, Precision::kFp32};
      break;
    case NumericFormat::kFp16:
      chain = {Precision::kFp16, Precision::kFp32};
      break;
    case NumericFormat::kBf16:
      chain = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
      break;
    case NumericFormat::kFp8:
      chain = {Precision::kFp8, Precision::kBf16, Precision::kFp16, Precision::kFp32};
      break;
    // 8-bit weights and activations (W8A8) dot 8-bit integers on the tensor cores. 4-bit formats
    // quantise the weights only: matrix products dequantise them into 16-bit tiles and multiply
    // in FP16 (llama.cpp's prompt processing on 4,030 vs 4,445 tokens/s for Q4_K_M and F16 on
    // one RTX 3090; Marlin and AWQ kernels likewise), so they run at the FP16 rate.
    case NumericFormat::kInt8:
      chain = {Precision::kInt8, Precision::kFp16, Precision::kFp32};
      break;
    case NumericFormat::kInt4:
      chain = {Precision::kFp16, Precision::kFp32};
      break;
  }
  for (Precision p : chain) {
    std::optional<double> peak = gpu.peak(p);
    if (!peak) continue;
    d->peak_matrix_flops = *peak;
    switch (p) {
      case Precision::kFp32:
        d->math_unit = "simt-fp32";
        break;
      case Precision::kTf32:
        d->math_unit = "tensor-tf32";
        break;
      case Precision::kFp16:
      case Precision::kBf16:
        d->math_unit = HasMatrixUnits(gpu) ? "tensor-fp16" : "simt-fp16";
        break;
      case Precision::kFp8:
        d->math_unit = "tensor-fp8";
        break;
      case Precision::kInt8:
        d->math_unit = "tensor-int8";
        break;
    }
    if (p != chain.front()) {
      d->notes.push_back(fmt::format("{} has no {} units: runs at its {} rate", gpu.name,
                                     NumericFormatName(format), PrecisionName(p)));
    }
    return;
  }
  d->peak_matrix_flops = gpu.peak(Precision::kFp32).value_or(1e12);
  d->math_unit = "simt-fp32";
}

// The share of its datasheet peak a board sustains in large GEMMs: measured where published
// (its FP16/BF16 GEMM over its FP16 peak, which folds in the clock it holds under its power
// limit and any half-rate accumulation); else its sustained clock over the datasheet's clock
// times what cuBLAS reaches at a steady clock; else the median of the measured boards.
double SustainedFraction(const EfficiencyTable& efficiency, const Accelerator& gpu,
                         std::vector<std::string>* notes) {
  std::optional<double> peak16 = gpu.peak(Precision::kFp16);
  if (gpu.measured_gemm_fp16_flops && peak16 && *peak16 > 0) {
    return *gpu.measured_gemm_fp16_flops / *peak16;
  }
  if (gpu.sustained_clock_mhz > 0 && gpu.peak_clock_mhz > 0) {
    return std::min(1.0, gpu.sustained_clock_mhz / gpu.peak_clock_mhz) *
           efficiency.Lookup("large_gemm_fraction", "*", "steady-clock", 0.9);
  }
  double typical = efficiency.Lookup("large_gemm_fraction", "*", "unmeasured", 0.8);
  notes->push_back(
      fmt::format("{}: no published GEMM measurement or sustained clock; {:.0f}% of "
                  "the datasheet peak assumed (the median of the boards measured)",
                  gpu.name, 100 * typical));
  return typical;
}

DeviceModel GpuDevice(const EfficiencyTable& efficiency, const Hardware& hw, NumericFormat format) {
  const Accelerator& gpu = *hw.gpu;
  DeviceModel d;
  d.name = gpu.name;
  d.gpu = true;
  ChooseMathUnit(gpu, format, &d);
  d.clock_ratio = SustainedFraction(efficiency, gpu, &d.notes);
  d.matrix_flops = d.peak_matrix_flops * d.clock_ratio;
  // A measurement at the very format wins over the ratio carried from FP16.
  if (d.math_unit == "tensor-tf32" && gpu.measured_gemm_tf32_flops) {
    d.matrix_flops = *gpu.measured_gemm_tf32_flops;
  } else if (d.math_unit == "tensor-fp8" && gpu.measured_gemm_fp8_flops) {
    d.matrix_flops = *gpu.measured_gemm_fp8_flops;
  } else if (d.math_unit == "tensor-fp16" && gpu.measured_gemm_fp16_flops) {
    d.matrix_flops = *gpu.measured_gemm_fp16_flops;
  }
  // The vector units keep the datasheet clock unless a sustained clock is published: the
  // measured GEMM ratio describes the tensor units under their power draw, not FP32 FMAs.
  double vector_ratio = gpu.sustained_clock_mhz > 0 && gpu.peak_clock_mhz > 0
                            ? std::min(1.0, gpu.sustained_clock_mhz / gpu.peak_clock_mhz)
                            : 1.0;
  d.vector_flops = gpu.peak(Precision::kFp32).value_or(0) * vector_ratio;
  if (d.math_unit == "simt-fp32" || d.math_unit == "simt-fp16") {
    d.matrix_flops = d.peak_matrix_flops * vector_ratio;
  }
  if (d.math_unit == "tensor-fp16" && gpu.fp16_acc16_flops) {
    // A GeForce board's FP32-accumulate GEMM runs at half its tensor rate and, drawing less
    // power, boosts above the datasheet clock (the RTX 3090's measured torch.mm is 107% of
    // 71 TFLOP/s); at the full FP16-accumulate rate the power limit holds the clock down, so
    // that ratio does not carry: the measured FP16-accumulate share of the peak caps it.
    double full_rate = efficiency.Lookup("large_gemm_fraction", "*", "fp16-accumulate", 1.0);
    d.fp16_acc16_flops = *gpu.fp16_acc16_flops * std::min(d.clock_ratio, full_rate);
  }
  d.int8_flops = gpu.peak(Precision::kInt8).value_or(0) * d.clock_ratio;
  d.datasheet_bandwidth = gpu.memory_bandwidth_bytes_per_s;
  d.bandwidth = AchievableBandwidth(efficiency, gpu, &d.notes);
  d.sm_count = gpu.sm_count;
  d.sm_clock_ghz =
      (gpu.sustained_clock_mhz > 0 ? gpu.sustained_clock_mhz : gpu.peak_clock_mhz) / 1000;
  if (d.sm_count <= 0) {
    // Not in the data: derived from the FP32 peak, 128 FP32 lanes x 2 FLOP per SM per clock at
    // 1.5 GHz (Ampere and later; an assumption a data row should replace).
    d.sm_count = std::max(1, static_cast<int>(std::lround(
                                 gpu.peak(Precision::kFp32).value_or(1e13) / (128 * 2 * 1.5e9))));
  }
  d.l2_bytes = gpu.l2_cache_bytes;
  d.memory_bytes = hw.gpu_memory_bytes;
  return d;
}

DeviceModel CpuDevice(const EfficiencyTable& efficiency, const Hardware& hw, NumericFormat format) {
  DeviceModel d;
  d.gpu = false;
  d.math_unit = "cpu";
  int vcpus = std::max(1, hw.vcpus_per_node);
  d.sm_count = vcpus;
  d.memory_bytes = hw.host_memory_bytes_per_node;
  bool sixteen_bit = format == NumericFormat::kBf16 || format == NumericFormat::kFp16 ||
                     format == NumericFormat::kInt4;
  if (hw.cpu == nullptr) {
    d.name = "unknown CPU";
    d.peak_matrix_flops = vcpus * kUnknownCpuFlopsPerVcpu;
    d.datasheet_bandwidth = vcpus * kUnknownCpuBytesPerSPerVcpu;
    d.notes.push_back("CPU generation unknown: AVX2 at 2 GHz and 5 GB/s per vCPU assumed");
  } else {
    const CpuGeneration& c = *hw.cpu;
    d.name = c.name;
    d.peak_matrix_flops = vcpus * c.fp32_flops_per_vcpu;
    if (sixteen_bit && c.bf16_flops_per_vcpu) d.peak_matrix_flops = vcpus * *c.bf16_flops_per_vcpu;
    if (format == NumericFormat::kInt8 && c.int8_ops_per_vcpu) {
      d.peak_matrix_flops = vcpus * *c.int8_ops_per_vcpu;
    }
    // A VM gets the socket's bandwidth in proportion to its share of the socket's threads.
    double threads_per_socket = std::max(1, c.cores_per_socket) * std::max(1, c.threads_per_core);
    double bw = c.memory_bandwidth_bytes_per_s_per_socket;
    d.datasheet_bandwidth =
        bw > 0 ? bw * vcpus / threads_per_socket : vcpus * kUnknownCpuBytesPerSPerVcpu;
  }
  d.matrix_flops = d.peak_matrix_flops;
  d.vector_flops = vcpus * (hw.cpu ? hw.cpu->fp32_flops_per_vcpu : kUnknownCpuFlopsPerVcpu);
  d.bandwidth = d.datasheet_bandwidth * efficiency.Lookup("achievable_bandwidth", "*", "ddr", 0.75);
  return d;
}

}  // namespace

bool RunsInBandEcc(const Accelerator& gpu) {
  bool workstation = StartsWith(gpu.name, "RTX-") || StartsWith(gpu.name, "Quadro-") ||
                     StartsWith(gpu.name, "TITAN") || StartsWith(gpu.name, "GTX");
  return IsGddr(gpu) && gpu.vgpu && !workstation;
}

DeviceModel BuildDeviceModel(const EfficiencyTable& efficiency, const Hardware& hardware,
                             NumericFormat format, const RateScale& calibration) {
  DeviceModel d = hardware.has_gpu() ? GpuDevice(efficiency, hardware, format)
                                     : CpuDevice(efficiency, hardware, format);
  bool wide = format == NumericFormat::kFp32 || format == NumericFormat::kTf32;
  d.activation_bytes = wide ? 4 : 2;
  d.weight_bytes = BytesPerWeight(format);
  d.matrix_flops *= calibration.compute;
  d.vector_flops *= calibration.compute;
  d.fp16_acc16_flops *= calibration.compute;
  d.int8_flops *= calibration.compute;
  d.bandwidth *= calibration.bandwidth;
  return d;
}

void ApplySoftwareToolkit(const EfficiencyTable& efficiency, const Hardware& hardware,
                          double cuda_version, DeviceModel* device) {
  // CUDA 12.0 is the first toolkit whose cuBLAS and cuDNN dispatch wgmma kernels on sm_90.
  constexpr double kFirstHopperToolkit = 12.0;
  if (!hardware.has_gpu() || cuda_version <= 0 || cuda_version >= kFirstHopperToolkit) return;
  if (hardware.gpu->architecture != "Hopper") return;
  if (device->math_unit.rfind("tensor", 0) != 0) return;
  double fraction = efficiency.Lookup("matrix_rate_fraction", "*", "hopper-mma-sync", 1.0);
  device->matrix_flops *= fraction;
  device->int8_flops *= fraction;
  device->notes.push_back(fmt::format(
      "CUDA {:.1f} libraries have no Hopper (wgmma) kernels: matrix products at {:.0f}% of "
      "the rate",
      cuda_version, 100 * fraction));
}

TileShape MatrixTile(const DeviceModel& device) {
  if (device.math_unit.rfind("tensor", 0) == 0) return {128, 128};
  return {128, 64};
}

}  // namespace cloudfit
