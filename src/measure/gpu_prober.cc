#include "measure/gpu_prober.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace cloudfit {
namespace gpu_probing {

namespace {

// "GPU-6b6f3c1a-...", the form nvidia-smi prints.
std::string UuidText(const cuda::CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

}  // namespace

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

std::string MiBText(double bytes) { return fmt::format("{:.0f} MiB", bytes / kMiB); }

Prober::Prober(const cuda::ProbeLibraries& libraries, const GpuProbeOptions& options,
               GpuSystemProbe* out)
    : api_(*libraries.driver),
      options_(options),
      plan_(MakePlan(options.quick)),
      out_(out),
      lt_(libraries.cublas_lt),
      nccl_(libraries.nccl) {}

Prober::~Prober() {
  streams_.clear();
  // Releasing a primary context does not make it stop being current, and the last release
  // destroys it: leave no context current, as the thread came in.
  api_.cuCtxSetCurrent(nullptr);
  contexts_.clear();
}

void Prober::Run(const cuda::ProbeLibraries& libraries, int count) {
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

void Prober::Progress(const std::string& line) const {
  if (options_.progress) options_.progress(line);
}

std::string Prober::Fail(const char* call, CUresult r) const {
  return fmt::format("{}: {}", call, cuda::CudaErrorText(api_, r));
}

bool Prober::Check(CUresult r, const char* call, std::string* error) const {
  if (r == cuda::CUDA_SUCCESS) return true;
  *error = Fail(call, r);
  return false;
}

void Prober::OpenGpu(int index, Gpu* gpu, GpuDeviceProbe* device) {
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
    device->notes.push_back(Fail("cuDevicePrimaryCtxRetain", r) + "; nothing measured on this GPU");
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

size_t Prober::FreeBytes(const Gpu& gpu) const {
  api_.cuCtxSetCurrent(gpu.ctx);
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (api_.cuMemGetInfo(&free_bytes, &total_bytes) != cuda::CUDA_SUCCESS) return 0;
  return free_bytes;
}

size_t Prober::FitBytes(const Gpu& gpu, size_t wanted, int buffers) const {
  size_t share = FreeBytes(gpu) / 2 / static_cast<size_t>(buffers);
  return std::min(wanted, share) / kMiBytes * kMiBytes;
}

bool Prober::AllocDevice(const Gpu& gpu, size_t bytes, Owned<CUdeviceptr>* out,
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

bool Prober::AllocHost(const Gpu& gpu, size_t bytes, Owned<void*>* out, std::string* error) const {
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

bool Prober::CreateEvent(const Gpu& gpu, Owned<CUevent>* out, std::string* error) const {
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
bool Prober::Fill(const Gpu& gpu, CUdeviceptr p, unsigned char value, size_t bytes,
                  std::string* error) const {
  api_.cuCtxSetCurrent(gpu.ctx);
  return Check(api_.cuMemsetD8(p, value, bytes), "cuMemsetD8_v2", error) &&
         Check(api_.cuCtxSynchronize(), "cuCtxSynchronize", error);
}

// Seconds per repetition of `op`, which enqueues one repetition on the GPU's stream: a few
// warm-up repetitions, one timed alone to choose how many fill a trial, then the fastest of
// the trials. Timed between events on the stream, so the host's clock and scheduling do not
// enter. 0 with *error set on failure.
double Prober::TimeOp(const Gpu& gpu, const std::function<bool(std::string*)>& op,
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

}  // namespace gpu_probing
}  // namespace cloudfit
