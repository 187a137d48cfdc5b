// A CPU generation as used by cloud instances: peak arithmetic per vCPU and memory bandwidth.
#ifndef CLOUDFIT_CPU_H_
#define CLOUDFIT_CPU_H_

#include <optional>
#include <string>
#include <vector>

#include "cloudfit/shared_text.h"

namespace cloudfit {

struct CpuGeneration {
  std::string name;  // e.g. "Intel Xeon Sapphire Rapids"
  std::string vendor;
  std::vector<std::string> aliases;  // model numbers and code names clouds print
  std::string arch;                  // x86_64 or arm64
  std::string isa;                   // widest vector/matrix ISA: avx2, avx512, amx, neon, sve
  double sustained_hz = 0;
  int threads_per_core = 1;
  double fp32_flops_per_vcpu = 0;
  std::optional<double> bf16_flops_per_vcpu;
  std::optional<double> int8_ops_per_vcpu;
  int cores_per_socket = 0;
  int memory_channels = 0;
  std::string memory_type;
  double memory_bandwidth_bytes_per_s_per_socket = 0;
  int launch_year = 0;
  SharedText source;
  std::string as_of;
};

// The FP32 peak of one hardware thread the OS schedules on. Clouds sell vCPUs as SMT siblings,
// two to a core, and the catalog's per-vCPU figure is half a core; but a guest that sees as many
// cores as logical CPUs (no siblings, as some VMs present them) runs each thread on a whole core.
// `logical_cpus` and `physical_cores` are what the guest sees (0 cores: unknown, taken as SMT).
double Fp32PeakPerThread(const CpuGeneration& cpu, int logical_cpus, int physical_cores);

}  // namespace cloudfit

#endif  // CLOUDFIT_CPU_H_
