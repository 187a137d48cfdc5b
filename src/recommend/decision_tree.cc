#include "cloudfit/decision_tree.h"

#include <fmt/format.h>

#include <cmath>

#include "cloudfit/estimate.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

bool EstimateOn(const Catalog& catalog, const Workload& w, const std::string& gpu, double gpus,
                Estimate* e) {
  HardwareSpec spec;
  spec.gpu = gpu;
  spec.gpus = gpus;
  Hardware hw;
  return ResolveHardware(catalog, spec, &hw).ok() && EstimateWorkload(catalog, w, hw, e).ok();
}

bool EstimateOnInstance(const Catalog& catalog, const Workload& w, const std::string& instance,
                        Estimate* e) {
  HardwareSpec spec;
  spec.instance = instance;
  Hardware hw;
  return ResolveHardware(catalog, spec, &hw).ok() && EstimateWorkload(catalog, w, hw, e).ok();
}

}  // namespace

std::vector<DecisionStep> WalkDecisionTree(const Catalog& catalog, const Workload& w) {
  std::vector<DecisionStep> steps;
  const Model& m = w.model;
  bool visual = w.kind == WorkloadKind::kRender || w.kind == WorkloadKind::kRealtimeRender ||
                w.kind == WorkloadKind::kCad;
  // 1. What kind of work.
  std::string kind(WorkloadKindName(w.kind));
  steps.push_back({"training, inference, rendering or data preparation?", kind,
                   w.is_training()
                       ? "weights change: gradients and optimizer state live on the GPUs"
                   : visual ? "frames are ray-traced or encoded on the GPU"
                   : w.kind == WorkloadKind::kPreprocess
                       ? "CPU-bound: throughput is vCPUs x per-core rate"
                       : "weights are read, not written: memory holds weights and the KV cache"});
  if (w.kind == WorkloadKind::kPreprocess) {
    double hours16 = w.data_gb * 1e9 / (16 * w.per_core_mb_s * 1e6) / 3600;
    steps.push_back(
        {"which instance family?",
         "compute-optimised (c) for transforms, memory-optimised (r) when a partition must fit in "
         "RAM",
         fmt::format("{:.0f} GB at {} MB/s per vCPU: {:.1f} h on 16 vCPUs, {:.1f} h on 64",
                     w.data_gb, w.per_core_mb_s, hours16, hours16 / 4)});
    return steps;
  }
  if (w.kind == WorkloadKind::kClassicMl) {
    double gb = w.rows * w.features * 4 / 1e9;
    steps.push_back(
        {"CPU or GPU?",
         gb < 10 ? "a CPU instance" : "a CPU instance, or one GPU for gradient boosting",
         fmt::format("{:.1f} GB of features: tabular models train in passes over "
                     "RAM; a GPU (XGBoost gpu_hist) pays off only when tens of "
                     "millions of rows keep it busy longer than its start-up",
                     gb)});
    return steps;
  }
  if (visual) {
    Estimate l4, a10;
    bool ok = EstimateOn(catalog, w, "L4", 1, &l4) && EstimateOn(catalog, w, "A10", 1, &a10);
    if (ok && l4.render && a10.render) {
      steps.push_back(
          {"encoder and driver?",
           w.codec == "av1" ? "an Ada or newer GPU (L4, L40S)" : "any NVENC GPU",
           fmt::format("{}: L4 carries {} streams, A10 {} ({}); sharing a GPU needs vGPU (RTX vWS) "
                       "licences, and CAD certification needs the professional driver",
                       w.codec, l4.render->streams_per_gpu, a10.render->streams_per_gpu,
                       a10.render->av1_available ? "AV1 ok" : "A10 has no AV1 encode")});
    }
    return steps;
  }
  // 2. Model size against device memory.
  double weights_gb = m.params * BytesPerWeight(w.precision) / 1e9;
  double full_gb = m.params * 16 / 1e9;
  std::string size_answer;
  if (w.is_training() && w.kind == WorkloadKind::kTrain) {
    size_answer = full_gb > 80 ? "several GPUs (ZeRO/FSDP or tensor parallel), or LoRA/QLoRA on one"
                  : full_gb > 24 ? "one 40-80 GB GPU, or LoRA on a 24 GB one"
                                 : "one 24 GB GPU";
  } else {
    size_answer = weights_gb > 80   ? "several GPUs (tensor parallel) or 4-bit weights"
                  : weights_gb > 20 ? "a 40-80 GB GPU, or 4-bit weights on 24 GB"
                                    : "one 16-24 GB GPU";
  }
  steps.push_back(
      {"how big is the model?", size_answer,
       fmt::format("{:.2f} B parameters: {:.1f} GB of {} weights; full training with "
                   "mixed-precision Adam holds 16 bytes/param = {:.0f} GB before "
                   "activations",
                   m.params / 1e9, weights_gb, NumericFormatName(w.precision), full_gb)});
  // 3. Data size: time on a reference GPU.
  Estimate ref;
  if (EstimateOn(catalog, w, "A100-SXM4-80GB", 1, &ref)) {
    steps.push_back(
        {"how much data?",
         ref.total_s / 3600 > 24 ? "multi-GPU: a day or more on one A100" : "one GPU is enough",
         fmt::format("{:.1f} h on one A100-80GB at {:.0f} {} ({}{})", ref.total_s / 3600,
                     ref.throughput, ref.throughput_unit, ref.fits ? "fits" : "does not fit",
                     ref.fits
                         ? fmt::format(", {:.0f} of {:.0f} GiB", ref.memory.total_bytes() / kGiB,
                                       ref.memory.capacity_bytes / kGiB)
                         : "")});
  }
  // 4. Precision.
  steps.push_back({"which precision?",
                   w.precision == NumericFormat::kFp8 ? "fp8: Hopper, Ada or Blackwell only"
                   : w.precision == NumericFormat::kBf16
                       ? "bf16: Ampere or newer (fp16 with loss scaling on V100/T4)"
                   : w.precision == NumericFormat::kInt4
                       ? "4-bit weights: inference memory / 4, small quality cost"
                       : std::string(NumericFormatName(w.precision)),
                   "tensor-core peaks per format are in `cloudfit gpus`; a format the GPU lacks "
                   "runs at the next wider one's rate"});
  // 5. Latency.
  if (w.kind == WorkloadKind::kServing || w.kind == WorkloadKind::kInference) {
    Estimate cpu, gpu;
    bool have_cpu = EstimateOnInstance(catalog, w, "c7i.8xlarge", &cpu) && cpu.serving;
    bool have_gpu = EstimateOn(catalog, w, "L4", 1, &gpu) && gpu.serving;
    if (have_cpu && have_gpu) {
      double target = w.tpot_target_s.value_or(0.1);
      steps.push_back(
          {"CPU or GPU for the latency?",
           cpu.serving->tpot_s > target ? "GPU" : "a CPU instance is enough",
           fmt::format("time per token: {:.0f} ms on c7i.8xlarge (32 vCPUs) vs {:.0f} ms "
                       "on one L4, against {:.0f} ms",
                       cpu.serving->tpot_s * 1e3, gpu.serving->tpot_s * 1e3, target * 1e3)});
    }
  }
  // 6. Cost: pricing mode.
  double hours = ref.total_s / 3600;
  std::string mode;
  std::string because;
  if (w.kind == WorkloadKind::kServing) {
    mode = "on-demand or reserved for the base load, autoscaling on-demand above it";
    because =
        "a service runs around the clock (730 h a month): a 1-year reservation pays off above "
        "its break-even utilisation; spot reclaims would breach latency targets";
  } else {
    mode = hours < 1000 ? "spot if the job checkpoints, else on-demand" : "reserved capacity";
    because = fmt::format(
        "about {:.0f} GPU-hours: far below the {} hours a 1-year term bills, so "
        "a reservation only pays if the GPUs stay busy afterwards; spot's "
        "interruptions cost a few percent with Young/Daly checkpointing",
        hours, 8760);
  }
  steps.push_back({"which pricing mode?", mode, because});
  return steps;
}

}  // namespace cloudfit
