// Measures the CPU of this machine: what it is (model, cores, vector and matrix ISA), how fast
// it multiplies FP32 matrices, how much memory bandwidth a STREAM-style triad gets, and how fast
// a given path reads. Each figure can be set beside the catalog's peak for the CPU generation.
#ifndef CLOUDFIT_CPU_PROBE_H_
#define CLOUDFIT_CPU_PROBE_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/status.h"

namespace cloudfit {

struct CpuIdentity {
  std::string vendor;      // GenuineIntel, AuthenticAMD, or the ARM implementer's name
  std::string model_name;  // as /proc/cpuinfo prints it
  std::string arch;        // x86_64 or arm64
  int family = -1;         // x86 CPUID family and model, -1 when not x86
  int model = -1;
  int logical_cpus = 0;    // online in /proc/cpuinfo
  int physical_cores = 0;  // distinct (socket, core) pairs; 0 when the kernel does not say
  int sockets = 0;
  int usable_cpus = 0;     // in this process's affinity mask, capped by a cgroup CPU quota
  std::vector<std::string> features;  // the flags that matter: fma, avx2, avx512f, amx_tile, ...
  std::string widest_isa;             // amx, avx512, avx2, avx, sve, neon, or "" (scalar)
};

// Parses the text of /proc/cpuinfo (x86 and arm64 layouts).
CpuIdentity ParseCpuInfo(std::string_view cpuinfo);

// Reads /proc/cpuinfo, the affinity mask and the cgroup CPU quota.
CpuIdentity IdentifyCpu();

// The catalog's CPU generation for this CPU: by model number in the model name, else by the
// x86 family and model numbers or the ARM part number. nullptr when none matches.
const CpuGeneration* MatchCpuGeneration(const Catalog& catalog, const CpuIdentity& cpu);

struct CpuGemmResult {
  double flops_per_s = 0;  // best of the repetitions, 2*n^3 per GEMM
  int size = 0;            // n of the n x n x n product
  int threads = 0;
  std::string library;     // "OpenBLAS 0.3.21 ..." or "built-in kernel" (not a tuned BLAS)
};

struct CpuBandwidthResult {
  double bytes_per_s = 0;  // STREAM triad convention: 24 bytes per element, no write-allocate
  double array_bytes = 0;  // each of the three arrays
  int threads = 0;
};

struct ReadThroughputResult {
  std::string path;
  double bytes = 0;
  double seconds = 0;
  double bytes_per_s = 0;
  int files = 0;
  bool page_cache_dropped = true;  // false when the kernel would not drop cached pages first
};

// How busy the rest of the machine was while the probe ran: the share of all CPU time that
// went to other processes, from /proc/stat less this process's own CPU time. A shared or busy
// machine halves the figures, and a reader should know.
class OtherLoadMeter {
 public:
  OtherLoadMeter();  // starts measuring
  // The share (0..1) of the CPUs' time since construction used by other processes; 0 when
  // /proc/stat cannot be read.
  double OthersBusyFraction() const;

 private:
  double busy_jiffies_ = 0;
  double total_jiffies_ = 0;
  double own_cpu_seconds_ = 0;
};

struct CpuProbeOptions {
  bool quick = false;  // smaller problems and fewer repetitions
  int threads = 0;     // 0: every usable CPU
  std::function<void(const std::string&)> progress;
};

// FP32 GEMM through OpenBLAS when the library is installed (loaded at run time), else through a
// built-in blocked kernel, which is honest about being slower than a tuned BLAS.
Status MeasureCpuGemm(const CpuProbeOptions& options, CpuGemmResult* out);

// a[i] = b[i] + s * c[i] over arrays far larger than any cache, on every thread.
Status MeasureMemoryBandwidth(const CpuProbeOptions& options, CpuBandwidthResult* out);

// Reads a file, or the regular files under a directory, up to `max_bytes`, asking the kernel
// to drop each file's cached pages first so the figure is the device's and not memory's.
Status MeasureReadThroughput(const std::string& path, double max_bytes,
                             const CpuProbeOptions& options, ReadThroughputResult* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_CPU_PROBE_H_
