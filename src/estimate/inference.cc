// Inference: dispatches language models to the serving estimate (llm_serving.cc) and runs
// other models (CNNs, encoders, diffusion) as a forward pass per sample.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"
#include "estimate/llm_step_model.h"
#include "estimate/transformer_math.h"

namespace cloudfit {

namespace {

Status ForwardInference(const LlmStepModel& im, const Workload& w, const Hardware& hw,
                        Estimate* e) {
  const Model& m = w.model;
  double flops;
  double units = 1;  // forward passes per sample
  std::string unit = "samples/s";
  if (ComputeClass(m) == "transformer" && m.family == "encoder") {
    flops = ForwardFlopsPerToken(m, w.seq_len, false) * w.seq_len;
  } else {
    double scale = 1;
    if (w.resolution > 0 && m.resolution > 0) scale = std::pow(double(w.resolution) / m.resolution, 2);
    flops = m.gflops_per_sample.value_or(0) * 1e9 * scale;
    if (m.family == "diffusion") {
      // Classifier-free guidance runs two passes per step; guidance-distilled diffusion
      // transformers (Flux.1-dev) run one.
      units = w.diffusion_steps * (ComputeClass(m) == "diffusion-transformer" ? 1 : 2);
      unit = "images/s";
    }
  }
  // Image generation runs a few images at a time; classifiers batch deeply.
  int batch = w.micro_batch > 0 ? w.micro_batch : (m.family == "diffusion" ? 1 : 32);
  int devices = hw.has_gpu() ? hw.total_gpus() : 1;
  double per_device_flops = flops * units * batch;
  double compute = per_device_flops / (im.rates().peak_flops * im.forward_eff());
  double memory = per_device_flops / im.flops_per_byte() /
                      (im.rates().bandwidth_bytes_per_s * im.bandwidth_eff()) +
                  im.weight_bytes() * units / (im.rates().bandwidth_bytes_per_s * im.bandwidth_eff());
  e->time.compute_s = compute;
  e->time.memory_s = memory;
  e->time.step_s = compute + memory;
  e->throughput = batch * devices / e->time.step_s;
  e->throughput_unit = unit;
  e->bottleneck = compute > memory ? "compute" : "memory bandwidth";
  e->memory.capacity_bytes = im.rates().memory_bytes;
  e->memory.weights_bytes = im.weight_bytes();
  // Inference keeps no state for a backward pass, only the working set of the block in flight:
  // taken as 1/50 of what training stores (about one block of a ResNet-50 or a U-Net's ~50).
  e->memory.activations_bytes = flops * 0.006 * batch / 50;
  if (hw.has_gpu()) e->memory.runtime_bytes = kCudaRuntimeBytes;
  e->fits = e->memory.fits();
  double samples = w.samples > 0 ? w.samples : 10000;
  e->total_s = samples / e->throughput;
  if (w.kind == WorkloadKind::kServing) {
    ServingFigures s;
    s.max_batch = batch;
    s.ttft_s = e->time.step_s;
    s.requests_per_s = e->throughput;
    s.replicas = static_cast<int>(std::ceil(w.request_rate / s.requests_per_s - 1e-9));
    s.meets_targets = !w.ttft_target_s || s.ttft_s <= *w.ttft_target_s;
    if (!s.meets_targets) {
      e->notes.push_back(fmt::format("misses the latency target: {:.0f} ms per batch of {}",
                                     s.ttft_s * 1e3, batch));
    }
    e->serving = s;
    e->total_s = 3600;
  }
  AddTerm(e, "forward FLOPs per sample", flops * units / 1e9, "GFLOP", "zoo figure x resolution^2");
  AddTerm(e, "batch time", e->time.step_s * 1e3, "ms", "FLOPs / (peak x eff) + traffic / (bw x eff)");
  return Status::OK();
}

}  // namespace

Status EstimateInference(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* e) {
  if (!hw.has_gpu() && hw.vcpus_per_node <= 0) {
    return Status::InvalidArgument("--instance: CPU inference needs an instance with vCPUs");
  }
  e->runs_on_gpu = hw.has_gpu();
  LlmStepModel im(catalog, w, hw);
  if (im.language_model()) return EstimateLlmServing(catalog, w, hw, e);
  return ForwardInference(im, w, hw, e);
}

}  // namespace cloudfit
