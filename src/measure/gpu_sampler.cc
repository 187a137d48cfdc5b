#include "cloudfit/gpu_sampler.h"

#include <utility>

#include <fmt/format.h>

#include "measure/cuda_api.h"

namespace cloudfit {

namespace {

class NvmlSampler : public GpuSampler {
 public:
  struct Device {
    int index = 0;
    std::string name;
    cuda::nvmlDevice_t handle = nullptr;
  };

  NvmlSampler(const cuda::NvmlApi& api, std::vector<Device> devices)
      : api_(api), devices_(std::move(devices)) {}
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;
  // NVML counts its initialisations; this balances the one OpenGpuSampler made.
  ~NvmlSampler() override { api_.nvmlShutdown(); }

  std::vector<GpuSample> Sample() override {
    std::vector<GpuSample> samples;
    samples.reserve(devices_.size());
    for (const Device& d : devices_) {
      GpuSample s;
      s.index = d.index;
      s.name = d.name;
      // A figure the device does not report (NVML_ERROR_NOT_SUPPORTED, common for power on
      // consumer and virtual GPUs) stays 0.
      cuda::nvmlUtilization_t utilization = {};
      if (api_.nvmlDeviceGetUtilizationRates(d.handle, &utilization) == cuda::NVML_SUCCESS) {
        s.utilization_percent = utilization.gpu;
      }
      cuda::nvmlMemory_t memory = {};
      if (api_.nvmlDeviceGetMemoryInfo(d.handle, &memory) == cuda::NVML_SUCCESS) {
        s.memory_used_bytes = static_cast<double>(memory.used);
        s.memory_total_bytes = static_cast<double>(memory.total);
      }
      unsigned int milliwatts = 0;
      if (api_.nvmlDeviceGetPowerUsage(d.handle, &milliwatts) == cuda::NVML_SUCCESS) {
        s.power_watts = milliwatts / 1000.0;
      }
      unsigned int mhz = 0;
      if (api_.nvmlDeviceGetClockInfo(d.handle, cuda::NVML_CLOCK_SM, &mhz) == cuda::NVML_SUCCESS) {
        s.sm_clock_mhz = mhz;
      }
      mhz = 0;
      if (api_.nvmlDeviceGetClockInfo(d.handle, cuda::NVML_CLOCK_MEM, &mhz) == cuda::NVML_SUCCESS) {
        s.memory_clock_mhz = mhz;
      }
      samples.push_back(std::move(s));
    }
    return samples;
  }

  int device_count() const override { return static_cast<int>(devices_.size()); }

 private:
  const cuda::NvmlApi& api_;
  const std::vector<Device> devices_;
};

}  // namespace

std::unique_ptr<GpuSampler> OpenGpuSampler(std::string* why_not) {
  std::string why;
  const cuda::NvmlApi* api = cuda::Nvml(&why);
  if (api == nullptr) {
    if (why_not != nullptr) *why_not = "no NVIDIA driver: " + why;
    return nullptr;
  }
  return cuda::OpenGpuSamplerWith(*api, why_not);
}

std::unique_ptr<GpuSampler> cuda::OpenGpuSamplerWith(const NvmlApi& nvml, std::string* why_not) {
  const NvmlApi* api = &nvml;
  nvmlReturn_t r = api->nvmlInit();
  if (r != cuda::NVML_SUCCESS) {
    if (why_not != nullptr) *why_not = "nvmlInit_v2: " + cuda::NvmlErrorText(*api, r);
    return nullptr;
  }
  unsigned int count = 0;
  r = api->nvmlDeviceGetCount(&count);
  if (r != cuda::NVML_SUCCESS || count == 0) {
    if (why_not != nullptr) {
      *why_not = r != cuda::NVML_SUCCESS ? "nvmlDeviceGetCount_v2: " + cuda::NvmlErrorText(*api, r)
                                         : std::string("NVML found no GPU");
    }
    api->nvmlShutdown();
    return nullptr;
  }
  std::vector<NvmlSampler::Device> devices;
  std::string skipped;
  for (unsigned int i = 0; i < count; ++i) {
    NvmlSampler::Device d;
    d.index = static_cast<int>(i);
    // A device NVML may not open (no permission inside some containers, fallen off the bus)
    // is left out; the others are still worth watching.
    r = api->nvmlDeviceGetHandleByIndex(i, &d.handle);
    if (r != cuda::NVML_SUCCESS) {
      skipped =
          fmt::format("GPU {}: nvmlDeviceGetHandleByIndex_v2: {}", i, cuda::NvmlErrorText(*api, r));
      continue;
    }
    char name[cuda::NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (api->nvmlDeviceGetName(d.handle, name, sizeof(name)) == cuda::NVML_SUCCESS) {
      name[sizeof(name) - 1] = '\0';
      d.name = name;
    }
    devices.push_back(std::move(d));
  }
  if (devices.empty()) {
    if (why_not != nullptr) *why_not = "NVML could open no GPU (" + skipped + ")";
    api->nvmlShutdown();
    return nullptr;
  }
  return std::make_unique<NvmlSampler>(*api, std::move(devices));
}

}  // namespace cloudfit
