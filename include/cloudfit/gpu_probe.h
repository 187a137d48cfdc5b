// Measures the NVIDIA GPUs of this machine: dense GEMM rates per precision through cuBLASLt,
// device memory bandwidth, host<->device copies, peer copies and an NCCL all-reduce. CUDA,
// cuBLASLt, NVML and NCCL are loaded at run time (dlopen), so the same binary runs, and says
// why it measured nothing, on a machine without them.
#ifndef CLOUDFIT_GPU_PROBE_H_
#define CLOUDFIT_GPU_PROBE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cloudfit {

struct GpuGemmResult {
  std::string precision;  // fp32, tf32, fp16, bf16, fp8
  bool supported = false;  // false: the device or the library lacks it (see `note`)
  double flops_per_s = 0;  // best over the sizes tried, dense, 2*M*N*K per GEMM
  int size = 0;            // M = N = K of that best run
  std::string note;
};

struct GpuDeviceProbe {
  int index = 0;
  std::string name;                // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  std::string uuid;
  std::string compute_capability;  // "9.0"
  double memory_bytes = 0;
  int sm_count = 0;
  std::vector<GpuGemmResult> gemm;           // one per precision tried
  double device_copy_bytes_per_s = 0;        // device-to-device copy, bytes read + written
  double host_to_device_bytes_per_s = 0;     // pinned host memory
  double device_to_host_bytes_per_s = 0;
  std::vector<std::string> notes;
};

struct GpuPeerResult {
  int from = 0;
  int to = 0;
  bool peer_access = false;  // direct peer access enabled (NVLink or PCIe P2P)
  double bytes_per_s = 0;    // one direction
};

struct GpuSystemProbe {
  bool available = false;           // a driver and at least one GPU were found
  std::string unavailable_reason;   // when !available: which library or device was missing
  std::string driver_version;       // from NVML, else from the CUDA driver
  std::string cuda_driver_version;  // the CUDA version the driver supports, e.g. "12.4"
  std::string cublas_version;       // empty when cuBLASLt was not found
  std::string nccl_version;         // empty when NCCL was not found
  std::vector<GpuDeviceProbe> devices;
  std::vector<GpuPeerResult> peers;           // every ordered pair, when there are several GPUs
  std::optional<double> allreduce_bus_bytes_per_s;  // NCCL bus bandwidth (nccl-tests convention)
  double allreduce_message_bytes = 0;
  std::vector<std::string> notes;  // what was skipped and why
};

struct GpuProbeOptions {
  bool quick = false;  // smaller sizes and fewer repetitions (seconds instead of a minute)
  // Called before each long step with a line for people ("GPU 0: BF16 GEMM 8192^3").
  std::function<void(const std::string&)> progress;
};

// Never fails: what could not be measured is explained in `unavailable_reason` or `notes`.
GpuSystemProbe ProbeGpus(const GpuProbeOptions& options);

}  // namespace cloudfit

#endif  // CLOUDFIT_GPU_PROBE_H_
