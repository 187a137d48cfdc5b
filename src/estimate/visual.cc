// Rendering, real-time streaming and CAD visualisation: GPU render throughput from Blender Open
// Data scores; sessions per instance from what each session needs (vCPUs, host RAM, GPU memory,
// NVENC capacity, data/sessions.csv), the binding one named; memory from the scene.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "catalog/reference_tables.h"
#include "cloudfit/table.h"
#include "estimate/estimate_internal.h"
#include "util/strings.h"
#include "util/validate.h"

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

// What one session needs: the profile of data/sessions.csv, with the workload's own figures
// over it.
struct SessionNeeds {
  double vcpus = 0;
  double ram_gib = 0;
  double gpu_memory_gib = 0;
  std::string source;
};

Status FindSessionNeeds(const Catalog& catalog, const Workload& w, SessionNeeds* out) {
  std::string kind = w.kind == WorkloadKind::kCad ? "cad" : "realtime";
  std::shared_ptr<const CsvTable> file = std::make_shared<CsvTable>();
  Status s = ReadReferenceTable(catalog, "sessions.csv", &file);
  if (s.ok()) s = file->RequireColumns({"kind", "profile", "vcpus", "ram_gib", "gpu_memory_gib"});
  if (!s.ok() && s.code() != Status::Code::kNotFound) return s;
  const CsvTable& table = *file;
  std::vector<std::string> profiles;
  bool found = false;
  for (const CsvRow& row : s.ok() ? table.rows : std::vector<CsvRow>()) {
    CsvRowReader r(table, row);
    if (std::string(r.Text("kind")) != kind) continue;
    std::string profile(r.Text("profile"));
    profiles.push_back(profile);
    if (profile != w.session_profile) continue;
    out->vcpus = r.Number("vcpus", 0.1, 1024);
    out->ram_gib = r.Number("ram_gib", 0.1, 4096);
    out->gpu_memory_gib = r.Number("gpu_memory_gib", 0.1, 1024);
    out->source = fmt::format("session profile {} {} ({})", kind, profile, r.Text("source"));
    if (!r.status().ok()) return r.status();
    found = true;
  }
  if (!found && !w.session_profile.empty() && !profiles.empty()) {
    return Status::InvalidArgument(
        fmt::format("session_profile: '{}' is not a {} profile; one of {}",
                    Shown(w.session_profile), kind, Join(profiles, ", ")));
  }
  if (w.vcpus_per_session > 0) out->vcpus = w.vcpus_per_session;
  if (w.ram_gib_per_session > 0) out->ram_gib = w.ram_gib_per_session;
  if (w.gpu_memory_gib_per_session > 0) out->gpu_memory_gib = w.gpu_memory_gib_per_session;
  out->gpu_memory_gib = std::max(out->gpu_memory_gib, w.scene_memory_gib);
  if (out->source.empty()) out->source = "the workload's per-session figures";
  return Status::OK();
}

// Host RAM the operating system and the streaming agent keep on every instance (an assumption:
// a Windows guest idles at about 2 GiB).
constexpr double kHostReserveGib = 2;

}  // namespace

Status EstimateVisual(const Catalog& catalog, const Workload& w, const Hardware& hw, Estimate* e) {
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
                fmt::format("{} NVENC x {:.1f} streams ({} {}x{} at {} fps)", gpu.nvenc, per_engine,
                            w.codec, w.width, w.height, w.fps));
      }
    }
    double render = 1e9;
    if (r.seconds_per_frame > 0) render = 1.0 / (r.seconds_per_frame * w.fps);
    SessionNeeds needs;
    Status found = FindSessionNeeds(catalog, w, &needs);
    if (!found.ok()) return found;
    // Each limit in sessions for the whole instance; the smallest binds.
    struct Limit {
      const char* name;
      double sessions;
    };
    std::vector<Limit> limits = {{"video encoder", encode * gpus},
                                 {"GPU rendering", render * gpus}};
    if (needs.gpu_memory_gib > 0) {
      // vGPU profiles divide the board's frame buffer exactly (a T4 holds two 8Q profiles);
      // sessions sharing a GPU otherwise each keep a CUDA/graphics context.
      double per_gpu = gpu.vgpu
                           ? std::floor(gpu.memory_bytes / (needs.gpu_memory_gib * kGiB) + 1e-9)
                           : std::floor((hw.gpu_memory_bytes - kCudaRuntimeBytes) /
                                        (needs.gpu_memory_gib * kGiB));
      limits.push_back({"GPU memory", std::max(0.0, per_gpu) * gpus});
      AddTerm(e, "GPU memory per session", needs.gpu_memory_gib, "GiB", needs.source);
    }
    // A CAD seat's certified driver on a shared GPU is a vGPU profile: without vGPU support a GPU
    // serves one seat (pass-through).
    if (w.kind == WorkloadKind::kCad && !gpu.vgpu) {
      limits.push_back({"one seat per GPU without vGPU", static_cast<double>(gpus)});
    }
    if (hw.vcpus_per_node > 0 && needs.vcpus > 0) {
      limits.push_back({"vCPUs", std::floor(hw.vcpus_per_node / needs.vcpus)});
      AddTerm(e, "vCPUs per session", needs.vcpus, "vCPUs", needs.source);
    }
    if (hw.host_memory_bytes_per_node > 0 && needs.ram_gib > 0) {
      double usable = hw.host_memory_bytes_per_node / kGiB - kHostReserveGib;
      limits.push_back({"host RAM", std::max(0.0, std::floor(usable / needs.ram_gib))});
      AddTerm(e, "host RAM per session", needs.ram_gib, "GiB",
              needs.source + "; 2 GiB kept for the OS (assumption)");
    }
    const Limit* binding = &limits.front();
    for (const Limit& l : limits) {
      if (l.sessions < binding->sessions) binding = &l;
    }
    double sessions = std::max(0.0, std::floor(binding->sessions));
    r.streams_per_gpu = static_cast<int>(std::floor(sessions / std::max(1, gpus)));
    e->throughput = sessions;
    e->throughput_unit = "streams";
    e->bottleneck = binding->name;
    e->memory.activations_bytes = needs.gpu_memory_gib * kGiB;
    e->fits = e->memory.fits();
    e->total_s = 3600;
    std::vector<std::string> parts;
    for (const Limit& l : limits) {
      if (l.sessions < 1e8)
        parts.push_back(fmt::format("{} {}", l.name, FormatNumber(l.sessions, 0)));
    }
    AddTerm(e, "sessions per instance", sessions, "sessions", "smallest of: " + Join(parts, ", "));
    if (sessions < w.streams) {
      e->notes.push_back(fmt::format("{} sessions needed, one {} carries {} (bound by {})",
                                     w.streams, hw.name, FormatNumber(sessions, 0), binding->name));
    }
    if (sessions < 1) {
      e->notes.insert(e->notes.begin(), fmt::format("carries no session: {} binds ({})",
                                                    binding->name, Join(parts, ", ")));
    }
    if (w.kind == WorkloadKind::kCad) {
      e->notes.push_back(gpu.vgpu ? "CAD seats run NVIDIA's RTX Virtual Workstation driver on vGPU "
                                    "profiles: its licence is a line of the bill"
                                  : gpu.name +
                                        " is not on NVIDIA's vGPU list: one seat per GPU "
                                        "(pass-through) and no certified RTX vWS driver");
    } else if (r.streams_per_gpu > 1) {
      e->notes.push_back(fmt::format(
          "{} sessions share each GPU: a multi-session engine (containers, Pixel Streaming) or "
          "NVIDIA vGPU profiles",
          r.streams_per_gpu));
    }
  }
  e->render = r;
  return Status::OK();
}

}  // namespace cloudfit
