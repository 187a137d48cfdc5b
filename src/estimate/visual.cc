// Rendering, real-time streaming and CAD visualisation: GPU render throughput from Blender Open
// Data scores, stream counts from NVENC capacity, and memory from the scene.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The score of `gpu`: OptiX where the GPU has RT cores (Cycles uses them), else CUDA.
const RenderScore* FindScore(const Catalog& catalog, const Accelerator* gpu,
                             std::string_view prefer) {
  const RenderScore* best = nullptr;
  for (const RenderScore& s : catalog.render_scores()) {
    if (s.gpu != gpu) continue;
    if (best == nullptr || s.backend == prefer) best = &s;
  }
  return best;
}

std::string_view PreferredBackend(const Accelerator& gpu) {
  return gpu.rt_cores > 0 ? "OPTIX" : "CUDA";
}

// NVENC streams per engine for the workload's codec, resolution and frame rate: the nearest
// published resolution at or above the stream's, scaled by frame rate.
double StreamsPerEngine(const Catalog& catalog, const Accelerator& gpu, const Workload& w) {
  std::string resolution = w.height > 1080 ? "4k" : "1080p";
  double pixels_ratio = static_cast<double>(w.width) * w.height /
                        (resolution == "4k" ? 3840.0 * 2160 : 1920.0 * 1080);
  for (const EncoderRate& r : catalog.encoder_rates()) {
    if (ToLower(r.architecture) != ToLower(gpu.architecture) || r.codec != w.codec ||
        r.resolution != resolution) {
      continue;
    }
    // The table's streams at r.fps, converted to the workload's fps and pixel count.
    return r.streams_per_engine * r.fps / w.fps / std::max(0.25, pixels_ratio);
  }
  return -1;  // unknown for this architecture
}

}  // namespace

Status EstimateVisual(const Catalog& catalog, const Workload& w, const Hardware& hw,
                      Estimate* e) {
  if (!hw.has_gpu()) {
    return Status::InvalidArgument(
        "--gpu or --instance: rendering and visualisation are estimated on GPUs");
  }
  const Accelerator& gpu = *hw.gpu;
  e->memory.capacity_bytes = hw.gpu_memory_bytes;
  e->memory.activations_bytes = w.scene_memory_gib * kGiB;  // the scene, textures and BVH
  e->memory.runtime_bytes = kCudaRuntimeBytes;
  e->fits = e->memory.fits();
  if (!e->fits) {
    e->notes.push_back(fmt::format("the {:.1f} GiB scene does not fit in {:.1f} GiB of GPU memory",
                                   w.scene_memory_gib, hw.gpu_memory_bytes / kGiB));
  }
  RenderFigures r;
  r.av1_available = gpu.av1_encode;
  std::string backend(PreferredBackend(gpu));
  const RenderScore* target = FindScore(catalog, &gpu, backend);
  // Seconds per frame on this GPU from the reference, scaled by the benchmark scores.
  if (w.seconds_per_frame || w.benchmark_score) {
    if (target == nullptr) {
      e->notes.push_back("no Blender Open Data score for " + gpu.name + ": render time unknown");
    } else {
      double ref_score = 0;
      if (!w.reference_gpu.empty()) {
        const Accelerator* ref = nullptr;
        Status s = catalog.FindAccelerator(w.reference_gpu, &ref);
        if (!s.ok()) return Status::InvalidArgument("reference_gpu: " + s.message());
        const RenderScore* rs = FindScore(catalog, ref, target->backend);
        if (rs == nullptr) {
          return Status::InvalidArgument("reference_gpu: no Blender Open Data score for " +
                                         ref->name + "; give benchmark_score instead");
        }
        ref_score = rs->samples_per_minute;
      }
      if (w.benchmark_score) ref_score = *w.benchmark_score;
      double ref_seconds = w.seconds_per_frame.value_or(60);
      r.seconds_per_frame = ref_seconds * ref_score / target->samples_per_minute;
      AddTerm(e, "render score", target->samples_per_minute, "samples/min",
              fmt::format("Blender Open Data median, {} ({})", target->backend, target->source));
      AddTerm(e, "seconds per frame", r.seconds_per_frame, "s",
              fmt::format("{} s x reference score {:.0f} / {:.0f}", ref_seconds, ref_score,
                          target->samples_per_minute));
    }
  }
  int gpus = hw.total_gpus();
  if (r.seconds_per_frame > 0) {
    r.frames_per_hour = 3600 / r.seconds_per_frame * gpus;
  }

  if (w.kind == WorkloadKind::kRender) {
    e->throughput = r.frames_per_hour;
    e->throughput_unit = "frames/h";
    e->total_s = r.frames_per_hour > 0 ? w.frames / r.frames_per_hour * 3600 : 0;
    e->time.step_s = r.seconds_per_frame;
    e->time.compute_s = r.seconds_per_frame;
    e->bottleneck = "GPU ray tracing";
  } else {
    // Real time: each stream needs the GPU to render fps frames a second and NVENC to encode
    // them; the smaller capacity wins.
    double encode = 0;
    if (gpu.nvenc == 0) {
      e->notes.push_back(gpu.name + " has no NVENC video encoder: streams need CPU encoding");
    } else if (w.codec == "av1" && !gpu.av1_encode) {
      e->notes.push_back(gpu.name + "'s NVENC does not encode AV1; use h264 or hevc");
    } else {
      double per_engine = StreamsPerEngine(catalog, gpu, w);
      if (per_engine < 0) {
        e->notes.push_back("no NVENC figures for " + gpu.architecture + " in video_encoders.csv");
      } else {
        encode = per_engine * gpu.nvenc;
        AddTerm(e, "encoder streams", encode, "streams/GPU",
                fmt::format("{} NVENC x {:.1f} streams ({} {}x{} at {} fps)", gpu.nvenc,
                            per_engine, w.codec, w.width, w.height, w.fps));
      }
    }
    double render = 1e9;
    if (r.seconds_per_frame > 0) render = 1.0 / (r.seconds_per_frame * w.fps);
    double memory_bound = w.scene_memory_gib > 0
                              ? std::floor((hw.gpu_memory_bytes - kCudaRuntimeBytes) /
                                           (w.scene_memory_gib * kGiB))
                              : 1e9;
    double streams = std::min({encode, render, memory_bound});
    r.streams_per_gpu = static_cast<int>(std::floor(streams));
    e->throughput = r.streams_per_gpu * gpus;
    e->throughput_unit = "streams";
    e->bottleneck = streams == encode ? "video encoder" : streams == render ? "GPU rendering"
                                                                          : "GPU memory";
    e->total_s = 3600;
    if (r.streams_per_gpu * gpus < w.streams) {
      e->notes.push_back(fmt::format("{} streams needed, this hardware carries {}", w.streams,
                                     r.streams_per_gpu * gpus));
    }
    if (w.kind == WorkloadKind::kCad || w.streams > gpus) {
      // Sharing one GPU between sessions, and professional-driver certification for CAD
      // applications, need NVIDIA's vGPU software (RTX Virtual Workstation).
      if (!gpu.vgpu) {
        e->notes.push_back(gpu.name + " is not on NVIDIA's vGPU list: one session per GPU and no "
                                      "RTX Virtual Workstation (certified CAD) driver");
      } else {
        e->notes.push_back("sharing the GPU needs NVIDIA RTX Virtual Workstation (vWS) licences "
                           "and the GRID driver");
      }
    }
  }
  e->render = r;
  return Status::OK();
}

}  // namespace cloudfit
