// The GPU probe's inner workings, shared by the files that measure one kind of figure each:
// gpu_prober.cc opens the GPUs and times operations on them, gpu_prober_gemm.cc measures dense
// GEMM through cuBLASLt, gpu_prober_transfers.cc copies (device, host, peer) and NCCL
// all-reduce. cloudfit/gpu_probe.h is the interface; nothing outside src/measure includes this.
#ifndef CLOUDFIT_MEASURE_GPU_PROBER_H_
#define CLOUDFIT_MEASURE_GPU_PROBER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cloudfit/gpu_probe.h"
#include "measure/cuda_api.h"

namespace cloudfit {
namespace gpu_probing {

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

Plan MakePlan(bool quick);

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

inline void* AsPointer(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// "256 MiB".
std::string MiBText(double bytes);

// One GPU while it is measured.
struct Gpu {
  int index = 0;
  CUdevice device = 0;
  CUcontext ctx = nullptr;  // the primary context, retained by the prober
  int cc = 0;               // 10 * major + minor
  CUstream stream = nullptr;
  bool usable = false;
};

// Measures every GPU of a system into a GpuSystemProbe: Run opens each, then takes each figure
// the libraries allow; a failure becomes a note beside the figure it cost.
class Prober {
 public:
  Prober(const cuda::ProbeLibraries& libraries, const GpuProbeOptions& options,
         GpuSystemProbe* out);
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;
  ~Prober();

  void Run(const cuda::ProbeLibraries& libraries, int count);

 private:
  // gpu_prober.cc: progress, errors, GPUs, memory and timing.
  void Progress(const std::string& line) const;
  std::string Fail(const char* call, CUresult r) const;
  // Records `call`'s failure in *error; true when it succeeded.
  bool Check(CUresult r, const char* call, std::string* error) const;
  void OpenGpu(int index, Gpu* gpu, GpuDeviceProbe* device);
  size_t FreeBytes(const Gpu& gpu) const;
  // `wanted`, or less where the GPU has less free memory than `buffers` of it need with room to
  // spare; whole MiB.
  size_t FitBytes(const Gpu& gpu, size_t wanted, int buffers) const;
  bool AllocDevice(const Gpu& gpu, size_t bytes, Owned<CUdeviceptr>* out, std::string* error) const;
  // Pinned (page-locked) host memory, which the copy engines reach without a staging copy.
  bool AllocHost(const Gpu& gpu, size_t bytes, Owned<void*>* out, std::string* error) const;
  bool CreateEvent(const Gpu& gpu, Owned<CUevent>* out, std::string* error) const;
  // Fills device memory with one byte and waits.
  bool Fill(const Gpu& gpu, CUdeviceptr p, unsigned char value, size_t bytes,
            std::string* error) const;
  // Seconds per repetition of `op` (which enqueues one on the GPU's stream), timed on the GPU;
  // 0 with *error set on failure.
  double TimeOp(const Gpu& gpu, const std::function<bool(std::string*)>& op,
                std::string* error) const;

  // gpu_prober_gemm.cc: dense GEMM through cuBLASLt.
  void MeasureGemms(const Gpu& gpu, GpuDeviceProbe* device);
  // Seconds per n x n x n GEMM, D = A * B (C = D, beta = 0), or 0 with *error set.
  double TimeGemm(const Gpu& gpu, const GemmSpec& spec, int n, cuda::cublasLtHandle_t handle,
                  CUdeviceptr workspace, std::string* error) const;

  // gpu_prober_transfers.cc: copies within a GPU, to and from the host, between GPUs, and
  // NCCL all-reduce.
  void MeasureCopies(const Gpu& gpu, GpuDeviceProbe* device);
  void MeasurePeers();
  void MeasureAllReduce();

  const cuda::DriverApi& api_;
  const GpuProbeOptions& options_;
  const Plan plan_;
  GpuSystemProbe* out_;
  const cuda::CublasLtApi* const lt_;  // nullptr without cuBLASLt
  const cuda::NcclApi* const nccl_;    // nullptr without NCCL
  std::vector<Gpu> gpus_;
  // Destroyed in reverse order: the streams before the contexts they live in.
  std::vector<Owned<CUcontext>> contexts_;
  std::vector<Owned<CUstream>> streams_;
};

}  // namespace gpu_probing
}  // namespace cloudfit

#endif  // CLOUDFIT_MEASURE_GPU_PROBER_H_
