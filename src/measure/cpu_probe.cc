#include "cloudfit/cpu_probe.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Report(const CpuProbeOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

int ParseInteger(const std::string& text) {
  try {
    return std::stoi(text, nullptr, 0);  // base 0: ARM part numbers are hex ("0xd4f")
  } catch (...) {
    return -1;
  }
}

// The flags that decide a CPU's arithmetic rate; the rest of the long list is noise here.
const std::set<std::string>& InterestingFlags() {
  static const std::set<std::string> flags = {
      "fma",         "avx",         "avx2",        "avx512f",  "avx512_vnni", "avx512_bf16",
      "avx512_fp16", "avx_vnni",    "amx_tile",    "amx_bf16", "amx_int8",    "asimd",
      "sve",         "sve2",        "bf16",        "i8mm",     "asimddp"};
  return flags;
}

// ARM implementers and the Neoverse/Cortex parts clouds use, from the ARM Technical Reference
// Manuals' MIDR_EL1 values. Names match aliases in data/cpus.csv.
std::string ArmPartName(int implementer, int part) {
  if (implementer == 0x41) {
    switch (part) {
      case 0xd08: return "Cortex-A72";
      case 0xd0c: return "Neoverse-N1";
      case 0xd40: return "Neoverse-V1";
      case 0xd49: return "Neoverse-N2";
      case 0xd4f: return "Neoverse-V2";
    }
  }
  return "";
}

// x86 family/model signatures of server CPUs (Intel SDM Vol. 4, "CPUID Signature Values";
// AMD Processor Programming References). Names match aliases in data/cpus.csv. Used only when
// the model name carries no model number, as in VMs that print "AMD EPYC".
std::string X86CodeName(const std::string& vendor, int family, int model, int stepping) {
  if (vendor == "GenuineIntel" && family == 6) {
    switch (model) {
      case 62: return "Ivy Bridge";
      case 63: return "Haswell";
      case 79: return "Broadwell";
      case 85:
        if (stepping >= 10) return "Cooper Lake";
        return stepping >= 5 ? "Cascade Lake" : "Skylake";
      case 106: return "Ice Lake";
      case 143: return "Sapphire Rapids";
      case 207: return "Emerald Rapids";
      case 173: return "Granite Rapids";
    }
  }
  if (vendor == "AuthenticAMD") {
    if (family == 23) return model >= 0x30 ? "Rome" : "Naples";
    if (family == 25) return model >= 0x10 ? "Genoa" : "Milan";
    if (family == 26) return "Turin";
  }
  return "";
}

}  // namespace

CpuIdentity ParseCpuInfo(std::string_view cpuinfo) {
  CpuIdentity cpu;
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> sockets;
  std::set<std::string> features;
  std::string physical_id = "0";
  int stepping = -1;
  int arm_implementer = -1;
  int arm_part = -1;
  std::istringstream lines{std::string(cpuinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key(Trim(std::string_view(line).substr(0, colon)));
    std::string value(Trim(std::string_view(line).substr(colon + 1)));
    if (key == "processor") {
      ++cpu.logical_cpus;
    } else if (key == "vendor_id" && cpu.vendor.empty()) {
      cpu.vendor = value;
    } else if (key == "model name" && cpu.model_name.empty()) {
      cpu.model_name = value;
    } else if (key == "cpu family" && cpu.family < 0) {
      cpu.family = ParseInteger(value);
    } else if (key == "model" && cpu.model < 0) {
      cpu.model = ParseInteger(value);
    } else if (key == "stepping" && stepping < 0) {
      stepping = ParseInteger(value);
    } else if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    } else if (key == "core id") {
      cores.insert({physical_id, value});
    } else if (key == "flags" || key == "Features") {
      std::istringstream words(value);
      std::string word;
      while (words >> word) {
        if (InterestingFlags().count(word) > 0) features.insert(word);
      }
    } else if (key == "CPU implementer" && arm_implementer < 0) {
      arm_implementer = ParseInteger(value);
    } else if (key == "CPU part" && arm_part < 0) {
      arm_part = ParseInteger(value);
    }
  }
  cpu.physical_cores = static_cast<int>(cores.size());
  cpu.sockets = static_cast<int>(sockets.size());
  if (arm_implementer >= 0) {
    cpu.arch = "arm64";
    cpu.family = -1;
    cpu.model = -1;
    std::string part = ArmPartName(arm_implementer, arm_part);
    if (cpu.vendor.empty()) cpu.vendor = arm_implementer == 0x41 ? "ARM" : "ARM licensee";
    if (cpu.model_name.empty()) {
      cpu.model_name = part.empty() ? fmt::format("ARM part {:#x}", arm_part) : part;
    }
  } else {
    cpu.arch = "x86_64";
    std::string code_name = X86CodeName(cpu.vendor, cpu.family, cpu.model, stepping);
    // Keep the code name beside a bare model name so the catalog can place the CPU.
    if (!code_name.empty()) cpu.model_name += " (" + code_name + ")";
  }
  cpu.features.assign(features.begin(), features.end());
  auto has = [&](const char* flag) { return features.count(flag) > 0; };
  if (has("amx_tile")) cpu.widest_isa = "amx";
  else if (has("avx512f")) cpu.widest_isa = "avx512";
  else if (has("avx2")) cpu.widest_isa = "avx2";
  else if (has("avx")) cpu.widest_isa = "avx";
  else if (has("sve")) cpu.widest_isa = "sve";
  else if (has("asimd")) cpu.widest_isa = "neon";
  cpu.usable_cpus = cpu.logical_cpus;
  return cpu;
}

namespace {

// A cgroup v2 quota ("200000 100000" = 2 CPUs) caps what a container can use whatever the
// affinity mask says; 0 when there is none.
double CgroupCpuLimit() {
  std::ifstream in("/sys/fs/cgroup/cpu.max");
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max") return 0;
  double q = std::atof(quota.c_str());
  double p = std::atof(period.c_str());
  return q > 0 && p > 0 ? q / p : 0;
}

}  // namespace

CpuIdentity IdentifyCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  CpuIdentity cpu = ParseCpuInfo(text.str());
  if (cpu.logical_cpus == 0) {
    cpu.logical_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
#if defined(__aarch64__)
  cpu.arch = "arm64";
#endif
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int usable = cpu.logical_cpus;
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) usable = CPU_COUNT(&mask);
  double limit = CgroupCpuLimit();
  if (limit > 0) usable = std::min(usable, static_cast<int>(std::ceil(limit)));
  cpu.usable_cpus = std::max(1, usable);
  return cpu;
}

const CpuGeneration* MatchCpuGeneration(const Catalog& catalog, const CpuIdentity& cpu) {
  if (const CpuGeneration* g = catalog.FindCpu(cpu.model_name)) return g;
  // "AMD EPYC (Turin)": the code name alone, as ParseCpuInfo appended it.
  size_t open = cpu.model_name.rfind('(');
  size_t close = cpu.model_name.rfind(')');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    return catalog.FindCpu(cpu.model_name.substr(open + 1, close - open - 1));
  }
  return nullptr;
}

namespace {

// Busy and total jiffies over all CPUs, from the first line of /proc/stat.
bool ReadCpuJiffies(double* busy, double* total) {
  std::ifstream in("/proc/stat");
  std::string label;
  if (!(in >> label) || label != "cpu") return false;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(in >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal)) return false;
  *busy = user + nice + system + irq + softirq + steal;
  *total = *busy + idle + iowait;
  return true;
}

double OwnCpuSeconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec +
         usage.ru_stime.tv_usec / 1e6;
}

}  // namespace

OtherLoadMeter::OtherLoadMeter() {
  ReadCpuJiffies(&busy_jiffies_, &total_jiffies_);
  own_cpu_seconds_ = OwnCpuSeconds();
}

double OtherLoadMeter::OthersBusyFraction() const {
  double busy = 0, total = 0;
  if (total_jiffies_ <= 0 || !ReadCpuJiffies(&busy, &total) || total <= total_jiffies_) return 0;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  double all = (total - total_jiffies_) / hz;
  double others = (busy - busy_jiffies_) / hz - (OwnCpuSeconds() - own_cpu_seconds_);
  return std::clamp(others / all, 0.0, 1.0);
}

namespace {

int ThreadCount(const CpuProbeOptions& options) {
  return options.threads > 0 ? options.threads : IdentifyCpu().usable_cpus;
}

// Splits [0, n) among `threads` workers and runs `work(begin, end)` on each.
template <typename Work>
void ParallelFor(int threads, size_t n, Work work) {
  std::vector<std::thread> pool;
  size_t chunk = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    size_t begin = std::min(n, t * chunk);
    size_t end = std::min(n, begin + chunk);
    pool.emplace_back([=] { work(begin, end); });
  }
  for (std::thread& t : pool) t.join();
}

// The cblas_sgemm of a tuned BLAS found at run time, so the binary needs no BLAS to run.
struct Blas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*,
                         int, float, float*, int);
  Sgemm sgemm = nullptr;
  void (*set_threads)(int) = nullptr;
  std::string name;
};

const Blas& TunedBlas() {
  static const Blas blas = [] {
    Blas b;
    // OpenBLAS 0.3.21 (Debian 12) does not know Zen 4 or Zen 5 and falls back to its AVX2
    // Haswell kernels, half what those cores' AVX-512 units do; its SkylakeX kernels run on them
    // (two Turin cores: 213 GFLOP/s with Haswell kernels, 418 with SkylakeX). OpenBLAS reads the
    // choice when it loads, so it is made here, and never over the user's own.
    CpuIdentity cpu = IdentifyCpu();
    bool avx512 = std::find(cpu.features.begin(), cpu.features.end(), "avx512f") != cpu.features.end();
    if (std::getenv("OPENBLAS_CORETYPE") == nullptr && cpu.vendor == "AuthenticAMD" && avx512) {
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    }
    // OpenBLAS and BLIS are tuned; the reference BLAS that libblas.so.3 may point to is not,
    // and is slower than the built-in kernel, so it is only used when it proves to be OpenBLAS.
    for (const char* library : {"libopenblas.so.0", "libblis.so.4", "libblas.so.3"}) {
      void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) continue;
      auto config = reinterpret_cast<const char* (*)()>(dlsym(handle, "openblas_get_config"));
      bool blis = std::string_view(library).find("blis") != std::string_view::npos;
      auto sgemm = reinterpret_cast<Blas::Sgemm>(dlsym(handle, "cblas_sgemm"));
      if (sgemm == nullptr || (config == nullptr && !blis)) {
        dlclose(handle);
        continue;
      }
      b.sgemm = sgemm;
      b.set_threads = reinterpret_cast<void (*)(int)>(dlsym(handle, "openblas_set_num_threads"));
      b.name = "BLIS";
      if (config != nullptr) {
        // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ... Haswell MAX_THREADS=64": the version and
        // the kernels it chose are what a reader needs (an old OpenBLAS may not know a new CPU).
        std::istringstream words(config());
        std::string product, version;
        words >> product >> version;
        auto core = reinterpret_cast<const char* (*)()>(dlsym(handle, "openblas_get_corename"));
        b.name = product + " " + version;
        if (core != nullptr) b.name += std::string(" (") + core() + " kernels)";
      }
      break;  // the handle stays open for the life of the process
    }
    return b;
  }();
  return blas;
}

// C += A * B for rows [row_begin, row_end), blocked so a panel of B stays in cache. The inner
// loop is contiguous so the compiler vectorises it; clones pick AVX-512 or AVX2+FMA at run time.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void GemmRows(const float* a, const float* b, float* c, int n, int row_begin, int row_end) {
  constexpr int kBlockK = 256;
  constexpr int kBlockJ = 512;
  for (int k0 = 0; k0 < n; k0 += kBlockK) {
    int k1 = std::min(n, k0 + kBlockK);
    for (int j0 = 0; j0 < n; j0 += kBlockJ) {
      int j1 = std::min(n, j0 + kBlockJ);
      for (int i = row_begin; i < row_end; ++i) {
        float* c_row = c + static_cast<size_t>(i) * n;
        for (int k = k0; k < k1; ++k) {
          const float a_ik = a[static_cast<size_t>(i) * n + k];
          const float* b_row = b + static_cast<size_t>(k) * n;
          for (int j = j0; j < j1; ++j) c_row[j] += a_ik * b_row[j];
        }
      }
    }
  }
}

}  // namespace

Status MeasureCpuGemm(const CpuProbeOptions& options, CpuGemmResult* out) {
  const int threads = ThreadCount(options);
  const Blas& blas = TunedBlas();
  if (blas.set_threads != nullptr) blas.set_threads(threads);
  const int max_size = options.quick ? 1024 : (blas.sgemm != nullptr ? 4096 : 2048);
  const int repetitions = options.quick ? 2 : 3;

  auto multiply = [&](const std::vector<float>& a, const std::vector<float>& b,
                      std::vector<float>& c, int n) {
    if (blas.sgemm != nullptr) {
      constexpr int kRowMajor = 101, kNoTrans = 111;  // CBLAS_ORDER, CBLAS_TRANSPOSE
      blas.sgemm(kRowMajor, kNoTrans, kNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                 c.data(), n);
      return;
    }
    std::fill(c.begin(), c.end(), 0.0f);
    ParallelFor(threads, static_cast<size_t>(n), [&](size_t begin, size_t end) {
      GemmRows(a.data(), b.data(), c.data(), n, static_cast<int>(begin), static_cast<int>(end));
    });
  };

  // Grow the problem until one product takes a measurable time: small ones are all overhead.
  CpuGemmResult best;
  for (int n = 512; n <= max_size; n *= 2) {
    Report(options, fmt::format("CPU: FP32 GEMM {}^3 on {} threads", n, threads));
    size_t elements = static_cast<size_t>(n) * n;
    std::vector<float> a(elements, 0.5f), b(elements, 0.25f), c(elements, 0.0f);
    multiply(a, b, c, n);  // warm-up: page faults, thread pool start
    double fastest = 1e300;
    for (int r = 0; r < repetitions; ++r) {
      Clock::time_point start = Clock::now();
      multiply(a, b, c, n);
      fastest = std::min(fastest, SecondsSince(start));
    }
    // Every element of C is n * 0.5 * 0.25; a wrong answer means a broken kernel or library.
    float expected = static_cast<float>(n) * 0.125f;
    if (std::fabs(c[elements / 2 + 1] - expected) > 1e-3f * expected) {
      return Status::Corruption(fmt::format("CPU GEMM gave {} instead of {} at n = {}",
                                            c[elements / 2 + 1], expected, n));
    }
    double rate = 2.0 * n * static_cast<double>(n) * n / fastest;
    if (rate > best.flops_per_s) best = {rate, n, threads, ""};
    if (fastest > (options.quick ? 0.2 : 1.0)) break;
  }
  best.library = blas.sgemm != nullptr
                     ? blas.name
                     : "built-in kernel (no OpenBLAS or BLIS found; a tuned BLAS is faster)";
  *out = best;
  return Status::OK();
}

Status MeasureMemoryBandwidth(const CpuProbeOptions& options, CpuBandwidthResult* out) {
  const int threads = ThreadCount(options);
  // Far beyond any last-level cache (a few hundred MiB at most on current server CPUs).
  const size_t elements = (options.quick ? 8u : 32u) << 20;  // doubles per array: 64 or 256 MiB
  const int repetitions = options.quick ? 3 : 6;
  Report(options, fmt::format("CPU: memory triad over 3 x {} MiB on {} threads",
                              elements * sizeof(double) >> 20, threads));
  std::unique_ptr<double[]> a(new double[elements]);
  std::unique_ptr<double[]> b(new double[elements]);
  std::unique_ptr<double[]> c(new double[elements]);
  // First touch by the thread that later streams the slice, so pages land on its NUMA node.
  ParallelFor(threads, elements, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1.0;
      c[i] = 2.0;
    }
  });
  const double scalar = 3.0;
  double fastest = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    Clock::time_point start = Clock::now();
    ParallelFor(threads, elements, [&](size_t begin, size_t end) {
      double* __restrict__ pa = a.get();
      const double* __restrict__ pb = b.get();
      const double* __restrict__ pc = c.get();
      for (size_t i = begin; i < end; ++i) pa[i] = pb[i] + scalar * pc[i];
    });
    fastest = std::min(fastest, SecondsSince(start));
  }
  if (a[elements - 1] != 7.0) {
    return Status::Corruption("memory triad produced a wrong value");
  }
  out->bytes_per_s = 3.0 * sizeof(double) * static_cast<double>(elements) / fastest;
  out->array_bytes = static_cast<double>(elements * sizeof(double));
  out->threads = threads;
  return Status::OK();
}

Status MeasureReadThroughput(const std::string& path, double max_bytes,
                             const CpuProbeOptions& options, ReadThroughputResult* out) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (!(max_bytes > 0)) {
    return Status::InvalidArgument("read size must be positive");
  }
  fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    return Status::NotFound(fmt::format("path '{}' does not exist", path));
  }
  std::vector<std::string> files;
  if (fs::is_regular_file(status)) {
    files.push_back(path);
  } else if (fs::is_directory(status)) {
    for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied,
                                             error), end;
         !error && it != end; it.increment(error)) {
      if (it->is_regular_file(error)) files.push_back(it->path().string());
    }
    std::sort(files.begin(), files.end());
  }
  if (files.empty()) {
    return Status::InvalidArgument(fmt::format("path '{}' holds no regular file to read", path));
  }
  Report(options, fmt::format("disk: reading up to {:.0f} MiB under {}", max_bytes / 1048576,
                              path));
  ReadThroughputResult result;
  result.path = path;
  std::vector<char> buffer(4 << 20);
  Clock::time_point start = Clock::now();
  for (const std::string& file : files) {
    if (result.bytes >= max_bytes) break;
    int fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // unreadable files are skipped, as a data loader would fail on them
    // Cached pages would measure memory, not the device; dropping clean pages needs no root.
    fdatasync(fd);
    if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) result.page_cache_dropped = false;
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    ++result.files;
    while (result.bytes < max_bytes) {
      ssize_t n = read(fd, buffer.data(), buffer.size());
      if (n <= 0) break;
      result.bytes += static_cast<double>(n);
    }
    close(fd);
  }
  result.seconds = SecondsSince(start);
  if (result.bytes <= 0) {
    return Status::InvalidArgument(fmt::format("path '{}': nothing could be read", path));
  }
  result.bytes_per_s = result.bytes / std::max(result.seconds, 1e-9);
  *out = result;
  return Status::OK();
}

}  // namespace cloudfit
