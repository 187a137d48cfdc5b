#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "measure/gpu_prober.h"

namespace cloudfit {
namespace gpu_probing {

void Prober::MeasureCopies(const Gpu& gpu, GpuDeviceProbe* device) {
  std::string error;

  size_t bytes = FitBytes(gpu, plan_.copy_bytes, 2);
  Progress(fmt::format("GPU {}: device memory copy, {}", gpu.index, MiBText(bytes)));
  Owned<CUdeviceptr> src;
  Owned<CUdeviceptr> dst;
  double seconds = 0;
  if (bytes > 0 && AllocDevice(gpu, bytes, &src, &error) && AllocDevice(gpu, bytes, &dst, &error) &&
      Fill(gpu, src.get(), 0, bytes, &error)) {
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
void Prober::MeasurePeers() {
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
        out_->notes.push_back(fmt::format("peer copy GPU {} -> GPU {} not measured: {}", i, j,
                                          !from.usable || !to.usable
                                              ? std::string("GPU not usable")
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

void Prober::MeasureAllReduce() {
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

}  // namespace gpu_probing
}  // namespace cloudfit
