// Serving and batch inference of language models on top of the per-step physics: how a hardware
// unit is split into model copies (tensor or pipeline parallel), what the engine's profile
// changes in each step, the batch a copy forms at the requested load, latencies at a percentile
// (serving_load.h), and the replicas that serve the rate at the target utilisation.
#include "estimate/llm_serving.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// Replicas are counted in an int; a plan beyond a million machines is no plan.
constexpr double kMaxReplicas = 1e6;
// Hardware that meets the latency targets only when each replica runs below this share of its
// saturation throughput, and so needs several replicas to keep queues empty, is too slow for
// the targets: that plan buys idle machines to hide a slow one.
constexpr double kMinPlannedUtilisation = 0.1;

// One way to run the model on the hardware: `copies` copies, each over `gpus` GPUs split by
// tensor parallelism or by layers (pipeline stages).
struct CopyLayout {
  int gpus = 1;
  bool layers = false;
  int copies = 1;
};

// A layout evaluated.
struct CopyPlan {
  CopyLayout layout;
  Workload workload;  // the copy's view: layer split set for pipeline layouts
  Hardware hardware;  // the copy's GPUs
  EngineStepInputs inputs;
  ReplicaSteps steps;
  double kv_capacity_tokens = 0;
  double resident_tokens = 0;
  double planned_rate = 0;  // per copy
  double saturation_rate = 0;
  std::string sized_by;
};

bool LargeGpu(const ServingEngineProfile& p, const Hardware& hw) {
  if (!hw.has_gpu() || p.large_gpu_memory_gib <= 0) return false;
  if (!p.large_gpu_excludes.empty() &&
      hw.gpu->name.find(p.large_gpu_excludes) != std::string::npos) {
    return false;
  }
  return hw.gpu_memory_bytes >= p.large_gpu_memory_gib * kGiB;
}

}  // namespace

EngineStepInputs EngineStepInputsFor(const Workload& w, const Hardware& hw) {
  const ServingEngineProfile& p = w.engine_profile;
  EngineStepInputs in;
  double auto_bytes = w.precision == NumericFormat::kFp32 ? 4 : 2;
  in.kv_bytes_per_element = KvCacheBytesPerElement(w.kv_cache_dtype, auto_bytes);
  // The profile's efficiencies are those of its GPU kernels; CPUs keep the table's rows.
  if (hw.has_gpu()) {
    in.decode_bandwidth_efficiency = p.decode_bandwidth_efficiency;
    in.prefill_compute_efficiency = p.prefill_compute_efficiency;
  }
  in.step_overhead_s = p.step_overhead_s;
  in.memory_share = w.gpu_memory_utilization.value_or(p.memory_utilization);
  in.memory_share_of_free = p.memory_share_of_free;
  return in;
}

ReplicaSteps StepsForCopy(const LlmStepModel& im, const Workload& w, BatchingPolicy policy,
                          int max_sequences, int chunk_tokens, int stages) {
  ReplicaSteps st;
  const double prompt = w.prompt_tokens;
  const double mean_context = prompt + w.output_tokens / 2.0;
  st.policy = policy;
  st.max_sequences = max_sequences;
  st.prompt_tokens = w.prompt_tokens;
  st.output_tokens = w.output_tokens;
  st.chunk_tokens = chunk_tokens;
  bool pipelined = stages > 1 && policy == BatchingPolicy::kContinuous;
  const LlmStepModel* model = &im;
  st.decode_step_s = [model, mean_context, stages, pipelined](double sequences) {
    // Pipeline-parallel engines keep one micro-batch per stage in flight, so each sequence's
    // token takes a pass through all stages at a micro-batch of sequences / stages.
    double batch = pipelined ? std::max(1.0, sequences / stages) : sequences;
    return model->DecodeStepSeconds(batch, mean_context);
  };
  st.batch_prefill_s = [model, prompt](double prompts) {
    return model->PrefillSeconds(prompts, prompt);
  };
  st.prefill_s = im.PrefillSeconds(1, prompt);
  st.prefill_token_s = std::max(0.0, st.prefill_s - st.decode_step_s(1)) / prompt;
  return st;
}

namespace {

// The layouts worth trying: what the workload fixes, else every power-of-two split of the
// GPUs the engine can do (tensor parallel needs the attention heads to divide).
std::vector<CopyLayout> Layouts(const Workload& w, const ServingEngineProfile& p,
                                const Hardware& hw) {
  int gpus = hw.has_gpu() ? std::max(1, hw.total_gpus()) : 1;
  int per_node = hw.has_gpu() ? std::max(1, static_cast<int>(hw.gpus_per_node)) : 1;
  bool tensor = p.tensor_parallel && !w.layer_split;
  std::vector<CopyLayout> out;
  auto add = [&](int k, bool layers) {
    if (k < 1 || gpus % k != 0) return;
    out.push_back({k, layers && k > 1, gpus / k});
  };
  if (w.tensor_parallel > 0) {
    add(std::min(w.tensor_parallel, gpus), false);
  } else if (w.pipeline_parallel > 0) {
    add(std::min(w.pipeline_parallel, gpus), true);
  } else if (w.layer_split) {
    // Layers split over all GPUs, as llama.cpp runs a model by default.
    add(gpus, !tensor);
  } else {
    for (int k = 1; k <= gpus; k *= 2) {
      bool layers = !tensor || k > per_node || w.model.heads % k != 0;
      if (layers && !p.layer_split && !p.pipeline_parallel) continue;
      add(k, layers);
    }
  }
  if (out.empty()) out.push_back({gpus, !tensor, 1});
  return out;
}

// The copy's own view of the workload and hardware, and the engine's step inputs.
void BuildCopy(const Workload& w, const Hardware& hw, const CopyLayout& l, CopyPlan* c) {
  c->layout = l;
  c->workload = w;
  c->workload.layer_split = l.layers;
  c->hardware = hw;
  if (hw.has_gpu()) {
    c->hardware.gpus_per_node = hw.gpus_per_node < 1 ? hw.gpus_per_node : l.gpus;
    c->hardware.nodes = 1;
  }
  c->inputs = EngineStepInputsFor(w, hw);
}

}  // namespace

Status EstimateLlmServing(const Catalog& catalog, const Workload& workload, const Hardware& hw,
                          Estimate* e) {
  Workload w = workload;
  if (w.engine_profile.name.empty()) {
    Status s = ResolveServingEngine(catalog, &w);
    if (!s.ok()) return s;
  }
  const ServingEngineProfile& profile = w.engine_profile;
  const bool serving = w.kind == WorkloadKind::kServing;
  const double prompt = w.prompt_tokens;
  const double output = w.output_tokens;
  const double mean_context = prompt + output / 2;
  bool large = LargeGpu(profile, hw);
  int engine_cap =
      large && profile.max_batch_large_gpu > 0 ? profile.max_batch_large_gpu : profile.max_batch;
  if (w.max_batch > 0) engine_cap = w.max_batch;
  if (w.micro_batch > 0) engine_cap = std::min(engine_cap, w.micro_batch);
  int chunk = large && profile.prefill_chunk_tokens_large_gpu > 0
                  ? profile.prefill_chunk_tokens_large_gpu
                  : profile.prefill_chunk_tokens;
  BatchingPolicy policy = profile.batching;
  if (policy == BatchingPolicy::kSingle && engine_cap > 1) policy = BatchingPolicy::kContinuous;
  if (engine_cap == 1 && policy == BatchingPolicy::kContinuous) policy = BatchingPolicy::kSingle;

  // Evaluate every layout; keep the one that serves the most requests per hardware unit.
  std::vector<CopyLayout> layouts = Layouts(w, profile, hw);
  std::vector<CopyPlan> plans;
  plans.reserve(layouts.size());
  for (const CopyLayout& l : layouts) {
    plans.emplace_back();
    BuildCopy(w, hw, l, &plans.back());
  }
  const CopyPlan* best = nullptr;
  double best_score = -1;
  std::vector<std::unique_ptr<LlmStepModel>> models;
  std::vector<const LlmStepModel*> model_of(plans.size(), nullptr);
  for (size_t i = 0; i < plans.size(); ++i) {
    CopyPlan& c = plans[i];
    models.push_back(std::make_unique<LlmStepModel>(catalog, c.workload, c.hardware, c.inputs));
    const LlmStepModel& im = *models.back();
    model_of[i] = &im;
    // A paged engine allocates blocks as tokens arrive, so on average the prompt and half the
    // output are resident; a contiguous one reserves the whole context per sequence.
    c.resident_tokens = profile.paged_kv ? mean_context : prompt + output;
    c.kv_capacity_tokens = im.KvCapacityTokens();
    int fit = static_cast<int>(
        std::min<double>(1 << 30, std::floor(c.kv_capacity_tokens / c.resident_tokens)));
    int stages = c.layout.layers ? c.layout.gpus : 1;
    c.steps = StepsForCopy(im, w, policy, std::min(engine_cap, fit), chunk, stages);
    const ReplicaSteps& st = c.steps;
    if (st.max_sequences < 1) continue;
    c.saturation_rate = SaturationRate(st);
    double score;
    if (serving) {
      double cap_rate = w.target_utilisation * c.saturation_rate;
      c.planned_rate = MaxRateWithinTargets(st, w.latency_percentile, w.ttft_target_s,
                                            w.tpot_target_s, w.target_utilisation);
      c.sized_by = c.planned_rate >= cap_rate * (1 - 1e-9) ? "utilisation" : "latency";
      score = c.layout.copies * c.planned_rate;
      // A layout that meets no target still ranks by how close it comes, below any that does.
      if (score <= 0) score = -1 + 1e-9 * c.layout.copies * c.saturation_rate;
    } else {
      score = c.layout.copies * c.saturation_rate;
    }
    if (!best || score > best_score) {
      best = &c;
      best_score = score;
    }
  }

  ServingFigures s;
  s.engine = profile.name;
  s.percentile = w.latency_percentile;
  if (best == nullptr) {
    // Not one sequence fits beside the weights, whatever the split.
    const CopyPlan& c = plans.back();
    const LlmStepModel& im = *models.back();
    e->fits = false;
    e->memory = im.Memory(1, prompt + output);
    e->notes.push_back(fmt::format(
        "does not fit: {:.1f} GiB of weights per device leave no room for one {:.0f}-token "
        "sequence's KV cache in {:.1f} GiB ({} claims {:.0f}% of device memory)",
        im.WeightsPerDevice() / kGiB, prompt + output, e->memory.capacity_bytes / kGiB,
        profile.name, 100 * c.inputs.memory_share));
    s.meets_targets = false;
    s.max_batch = 0;
    s.kv_capacity_tokens = c.kv_capacity_tokens;
    s.tpot_s = im.DecodeStepSeconds(1, mean_context);
    s.prefill_s = s.ttft_s = im.PrefillSeconds(1, prompt);
    s.replicas = 1;
    e->serving = s;
    e->time.step_s = s.tpot_s;
    e->throughput_unit = "tokens/s";
    e->total_s = 3600;
    return Status::OK();
  }
  const CopyPlan& c = *best;
  const LlmStepModel& im = *model_of[best - plans.data()];
  const ReplicaSteps& st = c.steps;
  s.copies = c.layout.copies;
  s.tensor_parallel = c.layout.layers ? 1 : c.layout.gpus;
  s.pipeline_parallel = c.layout.layers ? c.layout.gpus : 1;
  s.prefill_s = st.prefill_s;
  s.max_batch = st.max_sequences;
  s.kv_capacity_tokens = c.kv_capacity_tokens;
  s.saturation_requests_per_s = c.layout.copies * c.saturation_rate;

  double batch;  // sequences per copy the figures below are for
  if (serving) {
    s.requests_per_s = c.layout.copies * c.planned_rate;
    s.sized_by = c.sized_by;
    double needed = s.requests_per_s > 0 ? w.request_rate / s.requests_per_s : kMaxReplicas + 1;
    if (needed > kMaxReplicas) {
      s.replicas = static_cast<int>(kMaxReplicas);
      e->notes.push_back(fmt::format(
          "{} requests/s would need {} replicas of this hardware; plans stop at {:.0f}",
          w.request_rate, s.requests_per_s > 0 ? fmt::format("{:.3g}", needed) : "unbounded",
          kMaxReplicas));
    } else {
      s.replicas = std::max(1, static_cast<int>(std::ceil(needed - 1e-9)));
    }
    // The figures at the load each copy really carries: the batch that load forms.
    double per_copy = w.request_rate / (static_cast<double>(s.replicas) * c.layout.copies);
    LoadPoint lp =
        EvaluateLoad(st, std::min(per_copy, 0.999 * c.saturation_rate), w.latency_percentile);
    s.ttft_s = lp.ttft_s;
    s.tpot_s = lp.tpot_s;
    s.ttft_median_s = lp.ttft_median_s;
    s.tpot_median_s = lp.tpot_median_s;
    s.batch_at_load = lp.sequences;
    s.utilisation = per_copy / c.saturation_rate;
    s.tokens_per_s = s.requests_per_s * output;
    bool idle_fleet = s.replicas > 1 && c.planned_rate < kMinPlannedUtilisation * c.saturation_rate;
    if (idle_fleet) {
      e->notes.push_back(fmt::format(
          "too slow for the latency targets: they hold only below {:.0f}% of a replica's "
          "capacity, so {} replicas would run nearly idle",
          100 * kMinPlannedUtilisation, s.replicas));
    }
    s.meets_targets = c.planned_rate > 0 && !idle_fleet && per_copy <= c.saturation_rate &&
                      needed <= kMaxReplicas &&
                      (!w.ttft_target_s || s.ttft_s <= *w.ttft_target_s) &&
                      (!w.tpot_target_s || s.tpot_s <= *w.tpot_target_s);
    batch = std::max(1.0, lp.sequences);
    if (!s.meets_targets && !idle_fleet) {
      LoadPoint idle = EvaluateLoad(st, 1e-6 * c.saturation_rate, w.latency_percentile);
      e->notes.push_back(fmt::format(
          "misses the latency target: p{:.0f} TTFT {:.0f} ms, TPOT {:.1f} ms even when idle",
          100 * w.latency_percentile, idle.ttft_s * 1e3, idle.tpot_s * 1e3));
    }
  } else {
    // Batch inference: the largest batch that keeps time per output token within the target.
    int b = st.max_sequences;
    if (w.tpot_target_s) {
      while (b > 1 && st.decode_step_s(b) > *w.tpot_target_s) b = b * 3 / 4;
    }
    batch = b;
    s.max_batch = b;
    s.batch_at_load = b;
    s.tpot_s = s.tpot_median_s = st.decode_step_s(b);
    s.ttft_s = s.ttft_median_s = st.prefill_s + s.tpot_s;
    s.tokens_per_s = c.layout.copies * b / s.tpot_s;
    s.requests_per_s = c.layout.copies / (st.prefill_s + output * s.tpot_s / b);
    s.replicas = 1;
    s.meets_targets = (!w.ttft_target_s || s.ttft_s <= *w.ttft_target_s) &&
                      (!w.tpot_target_s || s.tpot_s <= *w.tpot_target_s);
    if (!s.meets_targets) {
      e->notes.push_back(fmt::format("misses the latency target: TTFT {:.0f} ms, TPOT {:.1f} ms",
                                     s.ttft_s * 1e3, s.tpot_s * 1e3));
    }
  }

  // Memory per device: weights, the KV cache of the batch the load forms (the engine's pool is
  // reserved up front, and said so), workspace.
  e->memory = im.Memory(serving ? std::min<double>(st.max_sequences, std::ceil(batch + 1)) : batch,
                        c.resident_tokens);
  e->fits = e->fits && e->memory.fits();
  double kernel_batch = c.layout.layers && policy == BatchingPolicy::kContinuous
                            ? std::max(1.0, batch / c.layout.gpus)
                            : batch;
  double step = st.decode_step_s(batch);
  e->time.step_s = step;
  PassTime decode = im.DecodeStep(kernel_batch, mean_context);
  for (const auto& [name, g] : decode.groups) {
    e->time.compute_s += g.compute_s;
    e->time.memory_s += g.memory_s;
    e->time.launch_s += g.overhead_s;
  }
  e->time.launch_s += std::max(0.0, decode.host_s - decode.device_s) + im.engine().step_overhead_s;
  e->bottleneck = e->time.memory_s >= std::max(e->time.compute_s, e->time.launch_s)
                      ? "memory bandwidth (decode)"
                  : e->time.launch_s > e->time.compute_s ? "kernel launches (decode)"
                                                         : "compute";
  e->notes.insert(e->notes.end(), im.notes().begin(), im.notes().end());
  // Throughput is what a benchmark of the replica at full load would measure (and what a
  // --measured tokens/s calibrates against): its saturation; the plan runs below it.
  e->throughput = serving ? s.saturation_requests_per_s * output : s.tokens_per_s;
  e->throughput_unit = "tokens/s";
  double requests = w.samples > 0 ? w.samples : 10000;
  e->total_s = serving ? 3600  // serving is priced per hour
                       : requests / s.requests_per_s;
  e->serving = s;

  std::string layout =
      c.layout.copies > 1 || c.layout.gpus > 1
          ? fmt::format("{} cop{} x {} GPU{} ({})", c.layout.copies,
                        c.layout.copies == 1 ? "y" : "ies", c.layout.gpus,
                        c.layout.gpus == 1 ? "" : "s",
                        c.layout.layers ? "layers split, pipeline" : "tensor parallel")
          : "1 copy";
  AddTerm(e, "model copies per replica", c.layout.copies, "",
          fmt::format("{}; engine {} ({}, {} KV cache)", layout, profile.name,
                      BatchingPolicyName(policy), profile.paged_kv ? "paged" : "contiguous"));
  AddTerm(e, "weights read per decode step", im.weight_bytes() / 1e9, "GB",
          fmt::format("{:.2f} B params x {} bits", w.model.params / 1e9,
                      w.weight_bits > 0 ? w.weight_bits : BytesPerWeight(w.precision) * 8));
  AddTerm(e, "KV cache per token", im.kv_per_token(), "bytes",
          fmt::format("2 x layers x kv_heads x head_dim x {} bytes ({})",
                      c.inputs.kv_bytes_per_element, w.kv_cache_dtype));
  const DeviceModel& d = im.device();
  AddTerm(
      e, "memory bandwidth", d.bandwidth / 1e9, "GB/s",
      fmt::format("{} achievable, of {:.0f} GB/s on the datasheet; {} kernels reach {:.2f} "
                  "of it{}",
                  d.name, d.datasheet_bandwidth / 1e9, im.stack().name, im.stack().stream_fraction,
                  c.inputs.decode_bandwidth_efficiency ? " (engine profile)" : ""));
  AddTerm(e, "matrix rate", d.matrix_flops / 1e12, "TFLOP/s",
          fmt::format("{} {} sustained; {} GEMMs reach {:.2f} of it{}", d.name, d.math_unit,
                      im.stack().name, im.stack().gemm_fraction,
                      c.inputs.prefill_compute_efficiency ? " (engine profile)" : ""));
  for (const auto& [name, g] : decode.groups) {
    if (g.kernels <= 0) continue;
    AddTerm(e, "decode operators: " + std::string(name), g.seconds() * 1e3, "ms/step",
            fmt::format("{:.0f} kernels, {:.2f} GB moved", g.kernels, g.bytes / 1e9));
  }
  AddTerm(e, "step overhead", profile.step_overhead_s * 1e3, "ms", "engine profile, per iteration");
  AddTerm(e, "KV capacity", c.kv_capacity_tokens, "tokens",
          c.inputs.memory_share_of_free
              ? fmt::format("{} x (device memory - weights - workspace) / KV per token",
                            c.inputs.memory_share)
              : fmt::format("({} x device memory - weights - workspace) / KV per token",
                            c.inputs.memory_share));
  AddTerm(e, "sequences admitted", st.max_sequences, "per copy",
          fmt::format("min(engine cap {}, KV capacity / {:.0f} resident tokens)", engine_cap,
                      c.resident_tokens));
  if (serving) {
    AddTerm(e, "saturation", s.saturation_requests_per_s, "requests/s",
            "copies x cap / ((output - 1) x D(cap) + cap x prompt time)");
    AddTerm(e, "planned load", s.requests_per_s, "requests/s",
            fmt::format("per replica: {} x saturation, lowered until p{:.0f} latencies meet the "
                        "targets (bound: {})",
                        w.target_utilisation, 100 * w.latency_percentile, s.sized_by));
    AddTerm(e, "replicas", s.replicas, "",
            fmt::format("ceil({} / {:.4g})", w.request_rate, s.requests_per_s));
    AddTerm(e, "batch at the requested rate", s.batch_at_load, "sequences per copy",
            "n = rate x (output - 1) x D(1 + n) / (1 - prefill share), Little's law");
    AddTerm(e, "utilisation", s.utilisation, "", "rate per copy / saturation");
  } else {
    AddTerm(e, "batch", batch, "sequences", "sequences admitted, lowered to the TPOT target");
  }
  AddTerm(e, "time per output token", s.tpot_s * 1e3, "ms",
          serving ? fmt::format("p{:.0f} at the load: D(1 + n) / (1 - prefill share) + z x spread",
                                100 * w.latency_percentile)
                  : "weights + KV bytes / bandwidth + FLOPs / peak + overhead");
  AddTerm(e, "time to first token", s.ttft_s * 1e3, "ms",
          serving ? fmt::format("p{:.0f}: queue for a slot and a prefill turn + iteration in "
                                "flight + own prefill",
                                100 * w.latency_percentile)
                  : "prefill FLOPs / (peak x efficiency) + one step");
  return Status::OK();
}

}  // namespace cloudfit
