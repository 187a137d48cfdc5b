// Samples the NVIDIA GPUs through NVML (loaded at run time): utilisation, memory, power and
// clocks, for `cloudfit monitor`. Without NVML or a GPU, Open() fails with the reason.
#ifndef CLOUDFIT_GPU_SAMPLER_H_
#define CLOUDFIT_GPU_SAMPLER_H_

#include <memory>
#include <string>
#include <vector>

namespace cloudfit {

struct GpuSample {
  int index = 0;
  std::string name;
  double utilization_percent = 0;     // share of time a kernel ran over the last sample period
  double memory_used_bytes = 0;
  double memory_total_bytes = 0;
  double power_watts = 0;             // 0 when the device does not report it
  double sm_clock_mhz = 0;
  double memory_clock_mhz = 0;
};

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  // One sample per device, in index order.
  virtual std::vector<GpuSample> Sample() = 0;
  virtual int device_count() const = 0;
};

// Loads NVML and opens every device. nullptr with `why_not` set when there is no NVML library,
// no driver, or no GPU.
std::unique_ptr<GpuSampler> OpenGpuSampler(std::string* why_not);

}  // namespace cloudfit

#endif  // CLOUDFIT_GPU_SAMPLER_H_
