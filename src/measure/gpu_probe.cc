#include "cloudfit/gpu_probe.h"

#include <exception>
#include <fstream>
#include <sstream>
#include <string>

#include "measure/cuda_api.h"
#include "measure/gpu_prober.h"

namespace cloudfit {

namespace {

using cuda::CUresult;

// The kernel module's version from /proc, when NVML is missing: its first line reads "NVRM
// version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  ..." (or "... Open Kernel Module for
// x86_64  550.54.14 ..."); the version is the first word made of digits and dots.
std::string DriverVersionFromProc() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    bool digits_and_dots = !word.empty() && word.find('.') != std::string::npos;
    for (char c : word) digits_and_dots = digits_and_dots && ((c >= '0' && c <= '9') || c == '.');
    if (digits_and_dots) return word;
  }
  return "";
}

std::string DriverVersionFromNvml(const cuda::NvmlApi* nvml, std::string* why_not) {
  if (nvml == nullptr) return "";
  cuda::nvmlReturn_t r = nvml->nvmlInit();
  if (r != cuda::NVML_SUCCESS) {
    *why_not = "nvmlInit_v2: " + cuda::NvmlErrorText(*nvml, r);
    return "";
  }
  char buffer[cuda::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  r = nvml->nvmlSystemGetDriverVersion(buffer, sizeof(buffer));
  nvml->nvmlShutdown();
  if (r != cuda::NVML_SUCCESS) {
    *why_not = "nvmlSystemGetDriverVersion: " + cuda::NvmlErrorText(*nvml, r);
    return "";
  }
  buffer[sizeof(buffer) - 1] = '\0';
  return buffer;
}

std::string InitFailure(const cuda::DriverApi& api, CUresult r) {
  std::string what = "cuInit: " + cuda::CudaErrorText(api, r);
  switch (r) {
    case cuda::CUDA_ERROR_NO_DEVICE:
      return "the NVIDIA driver found no GPU (" + what + ")";
    case cuda::CUDA_ERROR_STUB_LIBRARY:
      return api.library + " is the CUDA toolkit's link stub, not an NVIDIA driver (" + what + ")";
    case cuda::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
      return "the NVIDIA kernel module and libcuda differ in version; a reboot or reinstall "
             "of the driver usually mends it (" +
             what + ")";
    default:
      return "the NVIDIA driver did not start (" + what + ")";
  }
}

}  // namespace

namespace cuda {

GpuSystemProbe ProbeGpusWith(const ProbeLibraries& libraries, const GpuProbeOptions& options) {
  GpuSystemProbe out;
  const DriverApi& api = *libraries.driver;
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    out.unavailable_reason = InitFailure(api, r);
    return out;
  }
  int version = 0;
  if (api.cuDriverGetVersion(&version) == CUDA_SUCCESS) {
    out.cuda_driver_version = CudaVersionText(version);
  }
  std::string nvml_why = libraries.nvml_why;
  out.driver_version = DriverVersionFromNvml(libraries.nvml, &nvml_why);
  if (out.driver_version.empty()) {
    out.driver_version = DriverVersionFromProc();
    out.notes.push_back(
        "NVML not used (" + nvml_why + ")" +
        (out.driver_version.empty() ? "; driver version unknown" : "; driver version from /proc"));
  }
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count <= 0) {
    out.unavailable_reason = r != CUDA_SUCCESS ? "cuDeviceGetCount: " + CudaErrorText(api, r)
                                               : std::string("the NVIDIA driver found no GPU");
    return out;
  }
  out.available = true;
  try {
    gpu_probing::Prober prober(libraries, options, &out);
    prober.Run(libraries, count);
  } catch (const std::exception& e) {
    // Only allocation failures of our own bookkeeping can get here; the measurements taken so
    // far stand.
    out.notes.push_back(std::string("GPU probe stopped early: ") + e.what());
  }
  return out;
}

}  // namespace cuda

GpuSystemProbe ProbeGpus(const GpuProbeOptions& options) {
  GpuSystemProbe out;
  cuda::ProbeLibraries libraries;
  std::string why;
  libraries.driver = cuda::Driver(&why);
  if (libraries.driver == nullptr) {
    out.unavailable_reason = "no NVIDIA driver: " + why;
    return out;
  }
  // The other libraries are large; load them only where there is a GPU to use them on.
  const cuda::DriverApi& api = *libraries.driver;
  int count = 0;
  CUresult r = api.cuInit(0);
  if (r != cuda::CUDA_SUCCESS) {
    out.unavailable_reason = InitFailure(api, r);
    return out;
  }
  if (api.cuDeviceGetCount(&count) == cuda::CUDA_SUCCESS && count > 0) {
    int version = 0;
    api.cuDriverGetVersion(&version);
    libraries.cublas_lt = cuda::CublasLt(version, &libraries.cublas_lt_why);
    libraries.nvml = cuda::Nvml(&libraries.nvml_why);
    libraries.nccl = cuda::Nccl(&libraries.nccl_why);
  }
  return cuda::ProbeGpusWith(libraries, options);
}

}  // namespace cloudfit
