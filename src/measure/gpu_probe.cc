#include "cloudfit/gpu_probe.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "measure/cuda_api.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUevent;
using cuda::CUresult;
using cuda::CUstream;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr size_t kMiBytes = size_t{1} << 20;

// How much to measure. The full run takes about a minute on one GPU; the quick one seconds.
struct Plan {
  std::vector<int> gemm_sizes;
  double trial_seconds = 0;  // GPU time of one timed trial
  int trials = 0;            // the best of these is reported
  int warmup = 0;
  size_t workspace_bytes = 0;
  size_t copy_bytes = 0;       // device-to-device, per buffer
  size_t host_copy_bytes = 0;  // pinned host buffer
  size_t peer_bytes = 0;
  size_t allreduce_bytes = 0;  // per GPU
};

Plan MakePlan(bool quick) {
  Plan p;
  if (quick) {
    p.gemm_sizes = {2048, 4096};
    p.trial_seconds = 0.05;
    p.trials = 2;
    p.warmup = 2;
    p.workspace_bytes = 64 * kMiBytes;
    p.copy_bytes = 256 * kMiBytes;
    p.host_copy_bytes = 256 * kMiBytes;
    p.peer_bytes = 256 * kMiBytes;
    p.allreduce_bytes = 64 * kMiBytes;
  } else {
    p.gemm_sizes = {4096, 8192};
    p.trial_seconds = 0.2;
    p.trials = 3;
    p.warmup = 3;
    // cuBLAS asks for 32 MiB on Hopper; more lets split-K kernels in where they help.
    p.workspace_bytes = 128 * kMiBytes;
    p.copy_bytes = 1024 * kMiBytes;
    p.host_copy_bytes = 1024 * kMiBytes;
    p.peer_bytes = 512 * kMiBytes;
    p.allreduce_bytes = 256 * kMiBytes;
  }
  return p;
}

// One GEMM precision as cuBLASLt spells it. Inputs are filled with one repeated byte, chosen so
// that every element is a small normal number in its format: no NaN, no denormals (which some
// paths handle slowly) and sums over K = 8192 that stay far from overflow.
struct GemmSpec {
  const char* precision;  // as in GpuGemmResult
  cuda::cudaDataType_t ab_type;
  cuda::cudaDataType_t cd_type;
  cuda::cublasComputeType_t compute;
  size_t ab_size;  // bytes per element
  size_t cd_size;
  unsigned char ab_fill;
  unsigned char cd_fill;
  int min_cc;           // 10 * major + minor; 0 for every device
  const char* min_why;  // what the older devices lack
  bool fp8_layout;      // A transposed (the TN layout FP8 requires), fast accumulation
};

// Fill bytes: 0x3C3C3C3C is 0.0115 as FP32; 0x3C3C is 0.0115 as BF16; 0x2424 is 0.0162 as FP16;
// 0x2C is 0.375 as FP8 E4M3 (exponent 5 - 7, mantissa 1.5).
const GemmSpec kGemmSpecs[] = {
    {"fp32", cuda::CUDA_R_32F, cuda::CUDA_R_32F, cuda::CUBLAS_COMPUTE_32F, 4, 4, 0x3C, 0x3C, 0,
     nullptr, false},
    {"tf32", cuda::CUDA_R_32F, cuda::CUDA_R_32F, cuda::CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 0x3C,
     0x3C, 80, "TF32 tensor cores", false},
    {"fp16", cuda::CUDA_R_16F, cuda::CUDA_R_16F, cuda::CUBLAS_COMPUTE_32F, 2, 2, 0x24, 0x24, 0,
     nullptr, false},
    {"bf16", cuda::CUDA_R_16BF, cuda::CUDA_R_16BF, cuda::CUBLAS_COMPUTE_32F, 2, 2, 0x3C, 0x3C, 80,
     "BF16 tensor cores", false},
    // cuBLASLt's FP8 rules: A and B E4M3, C and D BF16, FP32 compute and scale, A transposed and
    // B not ("TN"), dimensions multiples of 16. Scale pointers left unset mean 1.0.
    {"fp8", cuda::CUDA_R_8F_E4M3, cuda::CUDA_R_16BF, cuda::CUBLAS_COMPUTE_32F, 1, 2, 0x2C, 0x3C, 89,
     "FP8 tensor cores", true},
};

// Owns a handle of the CUDA libraries and hands it to `release` on destruction. An empty value
// (0 or nullptr) owns nothing.
template <typename T>
class Owned {
 public:
  Owned() = default;
  Owned(T value, std::function<void(T)> release) : value_(value), release_(std::move(release)) {}
  Owned(Owned&& other) noexcept
      : value_(std::exchange(other.value_, T{})), release_(std::move(other.release_)) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      Reset();
      value_ = std::exchange(other.value_, T{});
      release_ = std::move(other.release_);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { Reset(); }

  T get() const { return value_; }
  explicit operator bool() const { return value_ != T{}; }
  void Reset() {
    if (value_ != T{} && release_) release_(value_);
    value_ = T{};
  }

 private:
  T value_{};
  std::function<void(T)> release_;
};

void* AsPointer(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

std::string Upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

std::string MiBText(double bytes) { return fmt::format("{:.0f} MiB", bytes / kMiB); }

// "GPU-6b6f3c1a-...", the form nvidia-smi prints.
std::string UuidText(const cuda::CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

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

// One GPU while it is measured.
struct Gpu {
  int index = 0;
  CUdevice device = 0;
  CUcontext ctx = nullptr;  // the primary context, retained by the prober
  int cc = 0;               // 10 * major + minor
  CUstream stream = nullptr;
  bool usable = false;
};

class Prober {
 public:
  Prober(const cuda::ProbeLibraries& libraries, const GpuProbeOptions& options,
         GpuSystemProbe* out)
      : api_(*libraries.driver),
        options_(options),
        plan_(MakePlan(options.quick)),
        out_(out),
        lt_(libraries.cublas_lt),
        nccl_(libraries.nccl) {}
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  ~Prober() {
    streams_.clear();
    // Releasing a primary context does not make it stop being current, and the last release
    // destroys it: leave no context current, as the thread came in.
    api_.cuCtxSetCurrent(nullptr);
    contexts_.clear();
  }

  void Run(const cuda::ProbeLibraries& libraries, int count) {
    if (lt_ != nullptr) {
      out_->cublas_version = cuda::CublasVersionText(lt_->cublasLtGetVersion());
    } else {
      // PyTorch's wheels carry their own cuBLASLt out of the loader's sight.
      out_->notes.push_back("GEMM rates not measured: " + libraries.cublas_lt_why +
                            "; install cuBLAS or put the folder of a libcublasLt.so.N on "
                            "LD_LIBRARY_PATH");
    }
    if (nccl_ != nullptr) {
      int version = 0;
      if (nccl_->ncclGetVersion(&version) == cuda::ncclSuccess) {
        out_->nccl_version = cuda::NcclVersionText(version);
      }
    } else if (count >= 2) {
      out_->notes.push_back("all-reduce not measured: " + libraries.nccl_why +
                            "; install NCCL or put the folder of libnccl.so.2 on LD_LIBRARY_PATH");
    }

    gpus_.resize(count);
    for (int i = 0; i < count; ++i) {
      GpuDeviceProbe device;
      device.index = i;
      OpenGpu(i, &gpus_[i], &device);
      out_->devices.push_back(std::move(device));
    }
    for (int i = 0; i < count; ++i) {
      if (!gpus_[i].usable) continue;
      GpuDeviceProbe& device = out_->devices[i];
      if (lt_ != nullptr) MeasureGemms(gpus_[i], &device);
      MeasureCopies(gpus_[i], &device);
    }
    if (count >= 2) {
      MeasurePeers();
      if (nccl_ != nullptr) MeasureAllReduce();
    }
  }

 private:
  void Progress(const std::string& line) const {
    if (options_.progress) options_.progress(line);
  }

  std::string Fail(const char* call, CUresult r) const {
    return fmt::format("{}: {}", call, cuda::CudaErrorText(api_, r));
  }

  // Records `call`'s failure in *error; true when it succeeded.
  bool Check(CUresult r, const char* call, std::string* error) const {
    if (r == cuda::CUDA_SUCCESS) return true;
    *error = Fail(call, r);
    return false;
  }

  void OpenGpu(int index, Gpu* gpu, GpuDeviceProbe* device) {
    gpu->index = index;
    CUresult r = api_.cuDeviceGet(&gpu->device, index);
    if (r != cuda::CUDA_SUCCESS) {
      device->notes.push_back(Fail("cuDeviceGet", r));
      return;
    }
    char name[256] = {};
    if (api_.cuDeviceGetName(name, static_cast<int>(sizeof(name)) - 1, gpu->device) ==
        cuda::CUDA_SUCCESS) {
      device->name = name;
    }
    cuda::CUuuid uuid = {};
    if (api_.cuDeviceGetUuid(&uuid, gpu->device) == cuda::CUDA_SUCCESS) {
      device->uuid = UuidText(uuid);
    }
    size_t total = 0;
    if (api_.cuDeviceTotalMem(&total, gpu->device) == cuda::CUDA_SUCCESS) {
      device->memory_bytes = static_cast<double>(total);
    }
    int major = 0;
    int minor = 0;
    int sms = 0;
    api_.cuDeviceGetAttribute(&major, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                              gpu->device);
    api_.cuDeviceGetAttribute(&minor, cuda::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                              gpu->device);
    api_.cuDeviceGetAttribute(&sms, cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu->device);
    if (major > 0) device->compute_capability = fmt::format("{}.{}", major, minor);
    device->sm_count = sms;
    gpu->cc = 10 * major + minor;

    CUcontext ctx = nullptr;
    r = api_.cuDevicePrimaryCtxRetain(&ctx, gpu->device);
    if (r != cuda::CUDA_SUCCESS) {
      device->notes.push_back(Fail("cuDevicePrimaryCtxRetain", r) +
                              "; nothing measured on this GPU");
      return;
    }
    const cuda::DriverApi* api = &api_;
    CUdevice dev = gpu->device;
    contexts_.emplace_back(ctx, [api, dev](CUcontext) { api->cuDevicePrimaryCtxRelease(dev); });
    gpu->ctx = ctx;

    api_.cuCtxSetCurrent(ctx);
    CUstream stream = nullptr;
    r = api_.cuStreamCreate(&stream, cuda::CU_STREAM_NON_BLOCKING);
    if (r != cuda::CUDA_SUCCESS) {
      device->notes.push_back(Fail("cuStreamCreate", r) + "; nothing measured on this GPU");
      return;
    }
    streams_.emplace_back(stream, [api, ctx](CUstream s) {
      api->cuCtxSetCurrent(ctx);
      api->cuStreamDestroy(s);
    });
    gpu->stream = stream;
    gpu->usable = true;
  }

  size_t FreeBytes(const Gpu& gpu) const {
    api_.cuCtxSetCurrent(gpu.ctx);
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    if (api_.cuMemGetInfo(&free_bytes, &total_bytes) != cuda::CUDA_SUCCESS) return 0;
    return free_bytes;
  }

  // `wanted`, or less where the GPU has less free memory than `buffers` of it need with room to
  // spare; whole MiB.
  size_t FitBytes(const Gpu& gpu, size_t wanted, int buffers) const {
    size_t share = FreeBytes(gpu) / 2 / static_cast<size_t>(buffers);
    return std::min(wanted, share) / kMiBytes * kMiBytes;
  }

  bool AllocDevice(const Gpu& gpu, size_t bytes, Owned<CUdeviceptr>* out,
                   std::string* error) const {
    api_.cuCtxSetCurrent(gpu.ctx);
    CUdeviceptr p = 0;
    CUresult r = api_.cuMemAlloc(&p, bytes);
    if (r != cuda::CUDA_SUCCESS) {
      *error = fmt::format("{} for {}", Fail("cuMemAlloc_v2", r), MiBText(bytes));
      return false;
    }
    const cuda::DriverApi* api = &api_;
    CUcontext ctx = gpu.ctx;
    *out = Owned<CUdeviceptr>(p, [api, ctx](CUdeviceptr q) {
      api->cuCtxSetCurrent(ctx);
      api->cuMemFree(q);
    });
    return true;
  }

  // Pinned (page-locked) host memory, which the copy engines reach without a staging copy.
  bool AllocHost(const Gpu& gpu, size_t bytes, Owned<void*>* out, std::string* error) const {
    api_.cuCtxSetCurrent(gpu.ctx);
    void* p = nullptr;
    CUresult r = api_.cuMemHostAlloc(&p, bytes, cuda::CU_MEMHOSTALLOC_PORTABLE);
    if (r != cuda::CUDA_SUCCESS) {
      *error = fmt::format("{} for {}", Fail("cuMemHostAlloc", r), MiBText(bytes));
      return false;
    }
    const cuda::DriverApi* api = &api_;
    CUcontext ctx = gpu.ctx;
    *out = Owned<void*>(p, [api, ctx](void* q) {
      api->cuCtxSetCurrent(ctx);
      api->cuMemFreeHost(q);
    });
    return true;
  }

  bool CreateEvent(const Gpu& gpu, Owned<CUevent>* out, std::string* error) const {
    api_.cuCtxSetCurrent(gpu.ctx);
    CUevent e = nullptr;
    if (!Check(api_.cuEventCreate(&e, cuda::CU_EVENT_DEFAULT), "cuEventCreate", error)) {
      return false;
    }
    const cuda::DriverApi* api = &api_;
    CUcontext ctx = gpu.ctx;
    *out = Owned<CUevent>(e, [api, ctx](CUevent q) {
      api->cuCtxSetCurrent(ctx);
      api->cuEventDestroy(q);
    });
    return true;
  }

  // Fills device memory with one byte and waits: cuMemsetD8 runs on the legacy default stream,
  // which our non-blocking streams do not wait for.
  bool Fill(const Gpu& gpu, CUdeviceptr p, unsigned char value, size_t bytes,
            std::string* error) const {
    api_.cuCtxSetCurrent(gpu.ctx);
    return Check(api_.cuMemsetD8(p, value, bytes), "cuMemsetD8_v2", error) &&
           Check(api_.cuCtxSynchronize(), "cuCtxSynchronize", error);
  }

  // Seconds per repetition of `op`, which enqueues one repetition on the GPU's stream: a few
  // warm-up repetitions, one timed alone to choose how many fill a trial, then the fastest of
  // the trials. Timed between events on the stream, so the host's clock and scheduling do not
  // enter. 0 with *error set on failure.
  double TimeOp(const Gpu& gpu, const std::function<bool(std::string*)>& op,
                std::string* error) const {
    Owned<CUevent> start;
    Owned<CUevent> stop;
    if (!CreateEvent(gpu, &start, error) || !CreateEvent(gpu, &stop, error)) return 0;
    api_.cuCtxSetCurrent(gpu.ctx);
    auto timed = [&](int repetitions, double* ms) {
      if (!Check(api_.cuEventRecord(start.get(), gpu.stream), "cuEventRecord", error)) {
        return false;
      }
      for (int i = 0; i < repetitions; ++i) {
        if (!op(error)) return false;
      }
      float elapsed = 0;
      if (!Check(api_.cuEventRecord(stop.get(), gpu.stream), "cuEventRecord", error) ||
          !Check(api_.cuEventSynchronize(stop.get()), "cuEventSynchronize", error) ||
          !Check(api_.cuEventElapsedTime(&elapsed, start.get(), stop.get()), "cuEventElapsedTime",
                 error)) {
        return false;
      }
      *ms = elapsed;
      return true;
    };
    for (int i = 0; i < plan_.warmup; ++i) {
      if (!op(error)) return 0;
    }
    if (!Check(api_.cuStreamSynchronize(gpu.stream), "cuStreamSynchronize", error)) return 0;
    double one_ms = 0;
    if (!timed(1, &one_ms)) return 0;
    double wanted = plan_.trial_seconds * 1000 / std::max(one_ms, 1e-3);
    int repetitions = static_cast<int>(std::clamp(std::ceil(wanted), 1.0, 1000.0));
    double best_ms = std::numeric_limits<double>::infinity();
    for (int t = 0; t < plan_.trials; ++t) {
      double ms = 0;
      if (!timed(repetitions, &ms)) return 0;
      best_ms = std::min(best_ms, ms / repetitions);
    }
    if (!(best_ms > 0) || !std::isfinite(best_ms)) {
      *error = "the GPU timer reported no elapsed time";
      return 0;
    }
    return best_ms / 1000;
  }

  // ---- Dense GEMM through cuBLASLt ----

  void MeasureGemms(const Gpu& gpu, GpuDeviceProbe* device) {
    api_.cuCtxSetCurrent(gpu.ctx);
    cuda::cublasLtHandle_t raw_handle = nullptr;
    cuda::cublasStatus_t s = lt_->cublasLtCreate(&raw_handle);
    std::string setup_error;
    if (s != cuda::CUBLAS_STATUS_SUCCESS) {
      setup_error = "cublasLtCreate: " + cuda::CublasStatusText(*lt_, s);
    }
    const cuda::CublasLtApi* lt = lt_;
    Owned<cuda::cublasLtHandle_t> handle(
        raw_handle, [lt](cuda::cublasLtHandle_t h) { lt->cublasLtDestroy(h); });
    Owned<CUdeviceptr> workspace;
    if (setup_error.empty()) {
      AllocDevice(gpu, plan_.workspace_bytes, &workspace, &setup_error);
    }

    for (const GemmSpec& spec : kGemmSpecs) {
      GpuGemmResult result;
      result.precision = spec.precision;
      if (!setup_error.empty()) {
        result.note = setup_error;
        device->gemm.push_back(std::move(result));
        continue;
      }
      if (gpu.cc < spec.min_cc) {
        result.note = fmt::format("no {} before compute capability {}.{}", spec.min_why,
                                  spec.min_cc / 10, spec.min_cc % 10);
        device->gemm.push_back(std::move(result));
        continue;
      }
      std::vector<std::string> errors;
      for (int n : plan_.gemm_sizes) {
        Progress(fmt::format("GPU {}: {} GEMM {}^3", gpu.index, Upper(spec.precision), n));
        std::string error;
        double seconds = TimeGemm(gpu, spec, n, handle.get(), workspace.get(), &error);
        if (seconds <= 0) {
          errors.push_back(fmt::format("{}^3: {}", n, error));
          continue;
        }
        double rate = 2.0 * n * n * static_cast<double>(n) / seconds;
        result.supported = true;
        if (rate > result.flops_per_s) {
          result.flops_per_s = rate;
          result.size = n;
        }
      }
      result.note = Join(errors, "; ");
      device->gemm.push_back(std::move(result));
    }
  }

  // Seconds per n x n x n GEMM, D = A * B (C = D, beta = 0), or 0 with *error set.
  double TimeGemm(const Gpu& gpu, const GemmSpec& spec, int n, cuda::cublasLtHandle_t handle,
                  CUdeviceptr workspace, std::string* error) const {
    const size_t elements = static_cast<size_t>(n) * static_cast<size_t>(n);
    const size_t need = elements * (2 * spec.ab_size + spec.cd_size);
    if (need > FreeBytes(gpu)) {
      *error = fmt::format("needs {} and the GPU has less free", MiBText(need));
      return 0;
    }
    Owned<CUdeviceptr> a;
    Owned<CUdeviceptr> b;
    Owned<CUdeviceptr> d;
    if (!AllocDevice(gpu, elements * spec.ab_size, &a, error) ||
        !AllocDevice(gpu, elements * spec.ab_size, &b, error) ||
        !AllocDevice(gpu, elements * spec.cd_size, &d, error) ||
        !Fill(gpu, a.get(), spec.ab_fill, elements * spec.ab_size, error) ||
        !Fill(gpu, b.get(), spec.ab_fill, elements * spec.ab_size, error) ||
        !Fill(gpu, d.get(), spec.cd_fill, elements * spec.cd_size, error)) {
      return 0;
    }

    const cuda::CublasLtApi* lt = lt_;
    auto status_error = [&](const char* call, cuda::cublasStatus_t s) {
      *error = fmt::format("{}: {}", call, cuda::CublasStatusText(*lt, s));
      return 0.0;
    };
    cuda::cublasStatus_t s;

    cuda::cublasLtMatmulDesc_t raw_desc = nullptr;
    s = lt->cublasLtMatmulDescCreate(&raw_desc, spec.compute, cuda::CUDA_R_32F);
    Owned<cuda::cublasLtMatmulDesc_t> desc(
        raw_desc, [lt](cuda::cublasLtMatmulDesc_t x) { lt->cublasLtMatmulDescDestroy(x); });
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("cublasLtMatmulDescCreate", s);
    const int32_t trans_a = spec.fp8_layout ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N;
    const int32_t trans_b = cuda::CUBLAS_OP_N;
    s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_TRANSA, &trans_a,
                                           sizeof(trans_a));
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set TRANSA", s);
    s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_TRANSB, &trans_b,
                                           sizeof(trans_b));
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set TRANSB", s);
    if (spec.fp8_layout) {
      // Fast accumulation (no periodic promotion to FP32 inside the kernel): the faster mode,
      // the one training frameworks use for FP8 forward GEMMs.
      const int8_t fast_accum = 1;
      s = lt->cublasLtMatmulDescSetAttribute(desc.get(), cuda::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                             &fast_accum, sizeof(fast_accum));
      if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set FAST_ACCUM", s);
    }

    // Column-major layouts; with every dimension n, op(A) transposed or not has the same shape
    // (rows = K, cols = M, ld = K for the transposed A).
    auto make_layout = [&](cuda::cudaDataType_t type, Owned<cuda::cublasLtMatrixLayout_t>* out) {
      cuda::cublasLtMatrixLayout_t raw = nullptr;
      cuda::cublasStatus_t st = lt->cublasLtMatrixLayoutCreate(&raw, type, n, n, n);
      *out = Owned<cuda::cublasLtMatrixLayout_t>(
          raw, [lt](cuda::cublasLtMatrixLayout_t x) { lt->cublasLtMatrixLayoutDestroy(x); });
      return st;
    };
    Owned<cuda::cublasLtMatrixLayout_t> a_layout;
    Owned<cuda::cublasLtMatrixLayout_t> b_layout;
    Owned<cuda::cublasLtMatrixLayout_t> d_layout;
    if ((s = make_layout(spec.ab_type, &a_layout)) != cuda::CUBLAS_STATUS_SUCCESS ||
        (s = make_layout(spec.ab_type, &b_layout)) != cuda::CUBLAS_STATUS_SUCCESS ||
        (s = make_layout(spec.cd_type, &d_layout)) != cuda::CUBLAS_STATUS_SUCCESS) {
      return status_error("cublasLtMatrixLayoutCreate", s);
    }

    cuda::cublasLtMatmulPreference_t raw_pref = nullptr;
    s = lt->cublasLtMatmulPreferenceCreate(&raw_pref);
    Owned<cuda::cublasLtMatmulPreference_t> pref(
        raw_pref,
        [lt](cuda::cublasLtMatmulPreference_t x) { lt->cublasLtMatmulPreferenceDestroy(x); });
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("cublasLtMatmulPreferenceCreate", s);
    const uint64_t workspace_bytes = plan_.workspace_bytes;
    s = lt->cublasLtMatmulPreferenceSetAttribute(pref.get(),
                                                 cuda::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &workspace_bytes, sizeof(workspace_bytes));
    if (s != cuda::CUBLAS_STATUS_SUCCESS) return status_error("set MAX_WORKSPACE_BYTES", s);

    api_.cuCtxSetCurrent(gpu.ctx);
    cuda::cublasLtMatmulHeuristicResult_t heuristic = {};
    int found = 0;
    s = lt->cublasLtMatmulAlgoGetHeuristic(handle, desc.get(), a_layout.get(), b_layout.get(),
                                           d_layout.get(), d_layout.get(), pref.get(), 1,
                                           &heuristic, &found);
    if (s != cuda::CUBLAS_STATUS_SUCCESS) {
      return status_error("no cuBLASLt kernel (cublasLtMatmulAlgoGetHeuristic)", s);
    }
    if (found < 1 || heuristic.state != cuda::CUBLAS_STATUS_SUCCESS) {
      *error = "cuBLASLt offers no kernel for this precision on this GPU";
      return 0;
    }

    const float alpha = 1.0f;
    const float beta = 0.0f;
    void* a_ptr = AsPointer(a.get());
    void* b_ptr = AsPointer(b.get());
    void* d_ptr = AsPointer(d.get());
    void* workspace_ptr = AsPointer(workspace);
    auto op = [&](std::string* op_error) {
      cuda::cublasStatus_t st =
          lt->cublasLtMatmul(handle, desc.get(), &alpha, a_ptr, a_layout.get(), b_ptr,
                             b_layout.get(), &beta, d_ptr, d_layout.get(), d_ptr, d_layout.get(),
                             &heuristic.algo, workspace_ptr, plan_.workspace_bytes, gpu.stream);
      if (st == cuda::CUBLAS_STATUS_SUCCESS) return true;
      *op_error = "cublasLtMatmul: " + cuda::CublasStatusText(*lt, st);
      return false;
    };
    return TimeOp(gpu, op, error);
  }

  // ---- Copies ----

  void MeasureCopies(const Gpu& gpu, GpuDeviceProbe* device) {
    std::string error;

    size_t bytes = FitBytes(gpu, plan_.copy_bytes, 2);
    Progress(fmt::format("GPU {}: device memory copy, {}", gpu.index, MiBText(bytes)));
    Owned<CUdeviceptr> src;
    Owned<CUdeviceptr> dst;
    double seconds = 0;
    if (bytes > 0 && AllocDevice(gpu, bytes, &src, &error) &&
        AllocDevice(gpu, bytes, &dst, &error) && Fill(gpu, src.get(), 0, bytes, &error)) {
      seconds = TimeOp(
          gpu,
          [&](std::string* e) {
            return Check(api_.cuMemcpyDtoDAsync(dst.get(), src.get(), bytes, gpu.stream),
                         "cuMemcpyDtoDAsync_v2", e);
          },
          &error);
    }
    if (seconds > 0) {
      // Each byte copied is read once and written once.
      device->device_copy_bytes_per_s = 2.0 * static_cast<double>(bytes) / seconds;
    } else {
      device->notes.push_back("device memory copy: " +
                              (error.empty() ? std::string("no free memory") : error));
    }
    src.Reset();
    dst.Reset();

    error.clear();
    bytes = FitBytes(gpu, plan_.host_copy_bytes, 1);
    Owned<void*> host;
    Owned<CUdeviceptr> buffer;
    if (bytes == 0 || !AllocHost(gpu, bytes, &host, &error) ||
        !AllocDevice(gpu, bytes, &buffer, &error)) {
      device->notes.push_back("host copies: " +
                              (error.empty() ? std::string("no free memory") : error));
      return;
    }
    Progress(fmt::format("GPU {}: host-to-device copy, {} pinned", gpu.index, MiBText(bytes)));
    seconds = TimeOp(
        gpu,
        [&](std::string* e) {
          return Check(api_.cuMemcpyHtoDAsync(buffer.get(), host.get(), bytes, gpu.stream),
                       "cuMemcpyHtoDAsync_v2", e);
        },
        &error);
    if (seconds > 0) {
      device->host_to_device_bytes_per_s = static_cast<double>(bytes) / seconds;
    } else {
      device->notes.push_back("host-to-device copy: " + error);
    }
    Progress(fmt::format("GPU {}: device-to-host copy, {} pinned", gpu.index, MiBText(bytes)));
    error.clear();
    seconds = TimeOp(
        gpu,
        [&](std::string* e) {
          return Check(api_.cuMemcpyDtoHAsync(host.get(), buffer.get(), bytes, gpu.stream),
                       "cuMemcpyDtoHAsync_v2", e);
        },
        &error);
    if (seconds > 0) {
      device->device_to_host_bytes_per_s = static_cast<double>(bytes) / seconds;
    } else {
      device->notes.push_back("device-to-host copy: " + error);
    }
  }

  // Every ordered pair of GPUs: direct access enabled where the driver allows it (NVLink or PCIe
  // peer-to-peer), then a timed copy from one to the other; without peer access the driver
  // stages through host memory, which is the figure such a pair really gets.
  void MeasurePeers() {
    const int count = static_cast<int>(gpus_.size());
    std::vector<Owned<CUdeviceptr>> buffers(count);
    std::vector<size_t> sizes(count, 0);
    std::vector<std::string> alloc_errors(count);
    for (int i = 0; i < count; ++i) {
      if (!gpus_[i].usable) continue;
      sizes[i] = FitBytes(gpus_[i], plan_.peer_bytes, 1);
      if (sizes[i] == 0 || !AllocDevice(gpus_[i], sizes[i], &buffers[i], &alloc_errors[i]) ||
          !Fill(gpus_[i], buffers[i].get(), 0, sizes[i], &alloc_errors[i])) {
        buffers[i].Reset();
        if (alloc_errors[i].empty()) alloc_errors[i] = "no free memory";
      }
    }
    for (int i = 0; i < count; ++i) {
      for (int j = 0; j < count; ++j) {
        if (i == j) continue;
        GpuPeerResult peer;
        peer.from = i;
        peer.to = j;
        const Gpu& from = gpus_[i];
        const Gpu& to = gpus_[j];
        if (!buffers[i] || !buffers[j]) {
          out_->notes.push_back(fmt::format(
              "peer copy GPU {} -> GPU {} not measured: {}", i, j,
              !from.usable || !to.usable ? std::string("GPU not usable")
                                         : (!buffers[i] ? alloc_errors[i] : alloc_errors[j])));
          out_->peers.push_back(peer);
          continue;
        }
        int can_access = 0;
        if (api_.cuDeviceCanAccessPeer(&can_access, from.device, to.device) == cuda::CUDA_SUCCESS &&
            can_access != 0) {
          api_.cuCtxSetCurrent(from.ctx);
          CUresult r = api_.cuCtxEnablePeerAccess(to.ctx, 0);
          if (r == cuda::CUDA_SUCCESS || r == cuda::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
            peer.peer_access = true;
          } else {
            out_->notes.push_back(
                fmt::format("GPU {} -> GPU {}: {}", i, j, Fail("cuCtxEnablePeerAccess", r)));
          }
        }
        size_t bytes = std::min(sizes[i], sizes[j]);
        Progress(fmt::format("GPU {} -> GPU {}: peer copy, {}", i, j, MiBText(bytes)));
        std::string error;
        CUdeviceptr src = buffers[i].get();
        CUdeviceptr dst = buffers[j].get();
        double seconds = TimeOp(
            from,
            [&](std::string* e) {
              return Check(api_.cuMemcpyPeerAsync(dst, to.ctx, src, from.ctx, bytes, from.stream),
                           "cuMemcpyPeerAsync", e);
            },
            &error);
        if (seconds > 0) {
          peer.bytes_per_s = static_cast<double>(bytes) / seconds;
        } else {
          out_->notes.push_back(fmt::format("peer copy GPU {} -> GPU {}: {}", i, j, error));
        }
        out_->peers.push_back(peer);
      }
    }
  }

  // ---- NCCL all-reduce ----

  void MeasureAllReduce() {
    const int count = static_cast<int>(gpus_.size());
    for (const Gpu& gpu : gpus_) {
      if (!gpu.usable) {
        out_->notes.push_back("all-reduce not measured: a GPU could not be opened");
        return;
      }
    }
    size_t bytes = plan_.allreduce_bytes;
    for (const Gpu& gpu : gpus_) bytes = std::min(bytes, FitBytes(gpu, plan_.allreduce_bytes, 2));
    bytes = bytes / sizeof(float) * sizeof(float);
    if (bytes == 0) {
      out_->notes.push_back("all-reduce not measured: no free GPU memory");
      return;
    }
    std::string error;
    std::vector<Owned<CUdeviceptr>> send(count);
    std::vector<Owned<CUdeviceptr>> recv(count);
    for (int i = 0; i < count; ++i) {
      if (!AllocDevice(gpus_[i], bytes, &send[i], &error) ||
          !AllocDevice(gpus_[i], bytes, &recv[i], &error) ||
          !Fill(gpus_[i], send[i].get(), 0, bytes, &error)) {
        out_->notes.push_back("all-reduce not measured: " + error);
        return;
      }
    }

    Progress(fmt::format("NCCL all-reduce over {} GPUs, {} each", count, MiBText(bytes)));
    const cuda::NcclApi* nccl = nccl_;
    std::vector<cuda::ncclComm_t> raw(count, nullptr);
    std::vector<int> ordinals(count);
    for (int i = 0; i < count; ++i) ordinals[i] = gpus_[i].device;
    cuda::ncclResult_t r = nccl->ncclCommInitAll(raw.data(), count, ordinals.data());
    // Declared after the buffers, so that the communicators are destroyed first.
    std::vector<Owned<cuda::ncclComm_t>> comms;
    for (cuda::ncclComm_t c : raw) {
      comms.emplace_back(c, [nccl](cuda::ncclComm_t x) { nccl->ncclCommDestroy(x); });
    }
    if (r != cuda::ncclSuccess) {
      out_->notes.push_back("all-reduce not measured: ncclCommInitAll: " +
                            cuda::NcclErrorText(*nccl, r));
      return;
    }

    const size_t floats = bytes / sizeof(float);
    // One all-reduce over every GPU, then a wait for all of them; host time, as nccl-tests.
    auto run = [&](int repetitions, double* seconds) {
      auto start = std::chrono::steady_clock::now();
      for (int k = 0; k < repetitions; ++k) {
        cuda::ncclResult_t g = nccl->ncclGroupStart();
        for (int i = 0; i < count && g == cuda::ncclSuccess; ++i) {
          g = nccl->ncclAllReduce(AsPointer(send[i].get()), AsPointer(recv[i].get()), floats,
                                  cuda::ncclFloat, cuda::ncclSum, comms[i].get(), gpus_[i].stream);
        }
        // The group must be closed even when a call inside it failed.
        cuda::ncclResult_t end = nccl->ncclGroupEnd();
        if (g == cuda::ncclSuccess) g = end;
        if (g != cuda::ncclSuccess) {
          error = "ncclAllReduce: " + cuda::NcclErrorText(*nccl, g);
          return false;
        }
      }
      for (const Gpu& gpu : gpus_) {
        api_.cuCtxSetCurrent(gpu.ctx);
        if (!Check(api_.cuStreamSynchronize(gpu.stream), "cuStreamSynchronize", &error)) {
          return false;
        }
      }
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return true;
    };
    double one = 0;
    bool ok = run(plan_.warmup, &one) && run(1, &one);
    double best = std::numeric_limits<double>::infinity();
    if (ok) {
      int repetitions = static_cast<int>(
          std::clamp(std::ceil(plan_.trial_seconds / std::max(one, 1e-6)), 1.0, 1000.0));
      for (int t = 0; t < plan_.trials && ok; ++t) {
        double seconds = 0;
        ok = run(repetitions, &seconds);
        if (ok) best = std::min(best, seconds / repetitions);
      }
    }
    if (!ok || !(best > 0) || !std::isfinite(best)) {
      out_->notes.push_back("all-reduce not measured: " +
                            (error.empty() ? std::string("no elapsed time") : error));
      return;
    }
    // Bus bandwidth, as nccl-tests defines it for all-reduce: the algorithm bandwidth times
    // 2(n-1)/n, the share of the data each link carries in a ring, so that the figure compares
    // with a link's speed whatever the GPU count.
    double algorithm = static_cast<double>(bytes) / best;
    out_->allreduce_bus_bytes_per_s = algorithm * 2.0 * (count - 1) / count;
    out_->allreduce_message_bytes = static_cast<double>(bytes);
  }

  const cuda::DriverApi& api_;
  const GpuProbeOptions& options_;
  const Plan plan_;
  GpuSystemProbe* out_;
  const cuda::CublasLtApi* const lt_;  // nullptr without cuBLASLt
  const cuda::NcclApi* const nccl_;     // nullptr without NCCL
  std::vector<Gpu> gpus_;
  // Destroyed in reverse order: the streams before the contexts they live in.
  std::vector<Owned<CUcontext>> contexts_;
  std::vector<Owned<CUstream>> streams_;
};

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
    Prober prober(libraries, options, &out);
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
