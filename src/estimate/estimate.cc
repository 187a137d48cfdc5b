// Dispatches a workload to the estimator of its kind, and holds what they share: device rates,
// compute classes, explanation terms, and data preprocessing (the simplest kind).
#include "cloudfit/estimate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"

namespace cloudfit {

namespace {

// A CPU we know nothing about: AVX2 with two FMA units at 2 GHz, one vCPU per hyper-thread
// (16 FP32 FLOP/cycle per thread), and 5 GB/s of DRAM bandwidth per vCPU.
constexpr double kUnknownCpuFlopsPerVcpu = 32e9;
constexpr double kUnknownCpuBytesPerSPerVcpu = 5e9;

}  // namespace

DeviceRates GpuRates(const Accelerator& gpu, NumericFormat format) {
  DeviceRates r;
  r.architecture = gpu.compute_capability.empty() ? gpu.architecture : gpu.compute_capability;
  r.bandwidth_bytes_per_s = gpu.memory_bandwidth_bytes_per_s;
  r.memory_bytes = gpu.memory_bytes;
  // The order in which formats fall back when the hardware lacks one.
  std::vector<Precision> chain;
  switch (format) {
    case NumericFormat::kFp32: chain = {Precision::kFp32}; break;
    case NumericFormat::kTf32: chain = {Precision::kTf32, Precision::kFp32}; break;
    case NumericFormat::kFp16: chain = {Precision::kFp16, Precision::kFp32}; break;
    case NumericFormat::kBf16:
      chain = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
      break;
    // 4-bit weights: llama.cpp's quantised matmuls (MMQ) and W4A8 kernels dot 8-bit integers on
    // the tensor cores; without int8 units they dequantise to 16 bit.
    case NumericFormat::kInt4:
      chain = {Precision::kInt8, Precision::kFp16, Precision::kFp32};
      break;
    case NumericFormat::kFp8: chain = {Precision::kFp8, Precision::kBf16, Precision::kFp16, Precision::kFp32}; break;
    case NumericFormat::kInt8: chain = {Precision::kInt8, Precision::kFp16, Precision::kFp32}; break;
  }
  for (Precision p : chain) {
    if (auto peak = gpu.peak(p)) {
      r.peak_flops = *peak;
      // bf16 and fp16 share tensor-core rates and efficiency rows; 4-bit weights run 16-bit
      // arithmetic but dequantise on the fly, so they keep efficiency rows of their own.
      r.precision_key = p == Precision::kBf16 ? "fp16" : std::string(PrecisionName(p));
      if (format == NumericFormat::kInt4) r.precision_key = "int4";
      return r;
    }
  }
  r.peak_flops = gpu.peak(Precision::kFp32).value_or(1e12);
  r.precision_key = "fp32";
  return r;
}

DeviceRates CpuRates(const Hardware& hw, NumericFormat format) {
  DeviceRates r;
  r.architecture = "cpu";
  r.precision_key = "fp32";
  int vcpus = std::max(1, hw.vcpus_per_node);
  r.memory_bytes = hw.host_memory_bytes_per_node;
  if (hw.cpu == nullptr) {
    r.peak_flops = vcpus * kUnknownCpuFlopsPerVcpu;
    r.bandwidth_bytes_per_s = vcpus * kUnknownCpuBytesPerSPerVcpu;
    return r;
  }
  const CpuGeneration& c = *hw.cpu;
  r.peak_flops = vcpus * c.fp32_flops_per_vcpu;
  bool sixteen_bit = format == NumericFormat::kBf16 || format == NumericFormat::kFp16 ||
                     format == NumericFormat::kInt4;
  if (sixteen_bit && c.bf16_flops_per_vcpu) {
    r.peak_flops = vcpus * *c.bf16_flops_per_vcpu;
    r.precision_key = "bf16";
  } else if (format == NumericFormat::kInt8 && c.int8_ops_per_vcpu) {
    r.peak_flops = vcpus * *c.int8_ops_per_vcpu;
    r.precision_key = "int8";
  }
  // A VM gets the socket's bandwidth in proportion to its share of the socket's threads.
  double threads_per_socket = std::max(1, c.cores_per_socket) * std::max(1, c.threads_per_core);
  double bw = c.memory_bandwidth_bytes_per_s_per_socket;
  r.bandwidth_bytes_per_s = bw > 0 ? bw * vcpus / threads_per_socket
                                   : vcpus * kUnknownCpuBytesPerSPerVcpu;
  return r;
}

DeviceRates WorkloadRates(const Workload& w, const Hardware& hw) {
  DeviceRates r = hw.has_gpu() ? GpuRates(*hw.gpu, w.precision) : CpuRates(hw, w.precision);
  if (hw.has_gpu()) r.memory_bytes = hw.gpu_memory_bytes;
  std::string device = hw.has_gpu() ? hw.gpu->name : hw.cpu != nullptr ? hw.cpu->name : "";
  RateScale scale = w.calibration.For(device);
  r.peak_flops *= scale.compute;
  r.bandwidth_bytes_per_s *= scale.bandwidth;
  return r;
}

std::string ComputeClass(const Model& m) {
  if (!m.compute_class.empty()) return m.compute_class;
  if (m.layers > 0 && m.hidden > 0) return "transformer";
  return "cnn";  // CNNs, U-Nets, and vision models given by per-sample FLOPs
}

double ClassComputeEfficiency(const EfficiencyTable& table, const DeviceRates& rates,
                              const std::string& compute_class, const EfficiencyFactor** row) {
  double base = table.Lookup("compute_efficiency", rates.architecture, rates.precision_key,
                             compute_class, 0.5, row);
  std::string factor_class = compute_class;
  if (compute_class == "diffusion") factor_class = "cnn";
  if (compute_class == "diffusion-transformer") factor_class = "transformer";
  const EfficiencyFactor* own = nullptr;
  double factor = table.Lookup("class_compute_factor", "*", "*", compute_class, 0, &own);
  if (own == nullptr || own->workload_class != compute_class) {
    factor = table.Lookup("class_compute_factor", "*", "*", factor_class, 1);
  }
  return std::min(1.0, base * factor);
}

void AddTerm(Estimate* e, std::string name, double value, std::string unit, std::string formula) {
  e->terms.push_back({std::move(name), value, std::move(unit), std::move(formula)});
}

Status EstimatePreprocess(const Catalog&, const Workload& w, const Hardware& hw, Estimate* e) {
  int vcpus = hw.vcpus_per_node;
  if (vcpus <= 0) {
    return Status::InvalidArgument(
        "--instance: preprocessing runs on an instance's vCPUs; name an instance type");
  }
  e->runs_on_gpu = false;
  double rate_bytes_per_s = w.per_core_mb_s * 1e6 * vcpus * hw.nodes;
  double bytes = w.data_gb * 1e9;
  e->throughput = rate_bytes_per_s / 1e9;
  e->throughput_unit = "GB/s";
  e->total_s = bytes / rate_bytes_per_s;
  e->time.step_s = e->total_s;
  e->bottleneck = "CPU";
  e->memory.capacity_bytes = hw.host_memory_bytes_per_node;
  // Data larger than RAM streams from storage; the working set is a few batches per core.
  e->memory.activations_bytes = std::min(bytes, 0.5 * hw.host_memory_bytes_per_node);
  if (bytes > hw.host_memory_bytes_per_node * hw.nodes) {
    e->notes.push_back(fmt::format(
        "{:.0f} GB of data is more than the {:.0f} GiB of RAM: stream it from object storage "
        "instead of loading it whole",
        w.data_gb, hw.host_memory_bytes_per_node * hw.nodes / (1024.0 * 1024 * 1024)));
  }
  if (w.storage_gb_s && *w.storage_gb_s * 1e9 < rate_bytes_per_s) {
    e->total_s = bytes / (*w.storage_gb_s * 1e9);
    e->bottleneck = "storage";
  }
  AddTerm(e, "cpu throughput", rate_bytes_per_s / 1e6, "MB/s",
          fmt::format("{} vCPUs x {} MB/s per vCPU x {} nodes", vcpus, w.per_core_mb_s, hw.nodes));
  AddTerm(e, "total time", e->total_s / 3600, "h", "data / throughput");
  return Status::OK();
}

Status EstimateWorkload(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        Estimate* out) {
  *out = Estimate();
  out->hardware = hw.name;
  Status s = Status::InvalidArgument("kind: not supported");
  switch (w.kind) {
    case WorkloadKind::kTrain:
    case WorkloadKind::kLora:
    case WorkloadKind::kQlora:
      s = EstimateTraining(catalog, w, hw, out);
      break;
    case WorkloadKind::kInference:
    case WorkloadKind::kServing:
      s = EstimateInference(catalog, w, hw, out);
      break;
    case WorkloadKind::kRender:
    case WorkloadKind::kRealtimeRender:
    case WorkloadKind::kCad:
      s = EstimateVisual(catalog, w, hw, out);
      break;
    case WorkloadKind::kPreprocess:
      s = EstimatePreprocess(catalog, w, hw, out);
      break;
    case WorkloadKind::kClassicMl:
      s = EstimateClassicMl(catalog, w, hw, out);
      break;
  }
  if (s.ok() && w.calibration.active()) {
    std::string device = hw.has_gpu() ? hw.gpu->name : hw.cpu != nullptr ? hw.cpu->name : "";
    out->calibration_scale = w.calibration.For(device);
  }
  return s;
}

}  // namespace cloudfit
