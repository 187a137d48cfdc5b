// Inference: dispatches language models to the serving estimate (llm_serving.cc) and runs
// other models (CNNs, encoders, diffusion) as a forward pass per sample.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "estimate/estimate_internal.h"
#include "estimate/llm_step_model.h"
#include "estimate/model_operators.h"
#include "estimate/op_timing.h"
#include "estimate/transformer_math.h"
#include "estimate/transformer_ops.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

Status ForwardInference(const LlmStepModel& im, const Workload& w, const Hardware& hw,
                        Estimate* e) {
  const Model& m = w.model;
  std::vector<Operator> ops;
  double passes = 1;  // forward passes per sample
  std::string unit = "samples/s";
  if (m.layers > 0 && m.hidden > 0 && m.operators.empty()) {
    TransformerOpsOptions o;
    o.seq_len = std::max(1, w.seq_len);
    o.causal = false;
    o.flash_attention = w.flash_attention;
    o.head = TransformerHead::kClassifier;
    ops = TransformerOperators(m, o);
  } else {
    ops = OperatorsForRun(DataModelOperators(m, &e->notes), false, w.flash_attention);
  }
  double scale = 1;
  if (w.resolution > 0 && m.resolution > 0)
    scale = std::pow(double(w.resolution) / m.resolution, 2);
  if (m.family == "diffusion") {
    // Classifier-free guidance runs two passes per step; guidance-distilled diffusion
    // transformers (Flux.1-dev) run one.
    passes = w.diffusion_steps * (ComputeClass(m) == "diffusion-transformer" ? 1 : 2);
    unit = "images/s";
  }
  // Image generation runs a few images at a time; classifiers batch deeply.
  int batch = w.micro_batch > 0 ? w.micro_batch : (m.family == "diffusion" ? 1 : 32);
  int devices = hw.has_gpu() ? hw.total_gpus() : 1;
  PassTime pass = TimePass(ops, batch, Pass::kInference, im.device(), im.stack(), scale);
  for (const auto& [name, g] : pass.groups) {
    e->time.compute_s += g.compute_s * passes;
    e->time.memory_s += g.memory_s * passes;
    e->time.launch_s += g.overhead_s * passes;
  }
  e->time.launch_s += std::max(0.0, pass.host_s - pass.device_s) * passes;
  e->time.step_s = pass.seconds() * passes;
  e->throughput = batch * devices / e->time.step_s;
  e->throughput_unit = unit;
  e->bottleneck = e->time.compute_s >= std::max(e->time.memory_s, e->time.launch_s) ? "compute"
                  : e->time.memory_s >= e->time.launch_s ? "memory bandwidth"
                                                         : "kernel launches";
  e->memory.capacity_bytes = im.device().memory_bytes;
  e->memory.weights_bytes = im.weight_bytes();
  // Inference keeps no state for a backward pass, only the working set of the block in flight:
  // the largest operator output, twice (input and output live together).
  double largest = 0;
  for (const Operator& op : ops) {
    double out = IsMatrixKind(op.kind) ? op.m * op.n * op.groups : op.written_elements;
    largest = std::max(largest, out * (op.spatial ? scale : 1));
  }
  e->memory.activations_bytes = 2 * largest * im.device().activation_bytes * batch;
  if (hw.has_gpu()) e->memory.runtime_bytes = kCudaRuntimeBytes;
  e->notes.insert(e->notes.end(), im.notes().begin(), im.notes().end());
  e->fits = e->memory.fits();
  double samples = w.samples > 0 ? w.samples : 10000;
  e->total_s = samples / e->throughput;
  if (w.kind == WorkloadKind::kServing) {
    ServingFigures s;
    s.max_batch = batch;
    s.ttft_s = e->time.step_s;
    s.requests_per_s = e->throughput;
    Status counted = CountToCover("request_rate", w.request_rate, s.requests_per_s,
                                  kMaxServingReplicas, "replicas", &s.replicas);
    if (!counted.ok()) return counted;
    s.meets_targets = !w.ttft_target_s || s.ttft_s <= *w.ttft_target_s;
    if (!s.meets_targets) {
      e->notes.push_back(fmt::format("misses the latency target: {:.0f} ms per batch of {}",
                                     s.ttft_s * 1e3, batch));
    }
    e->serving = s;
    e->total_s = 3600;
  }
  double flops = 0;
  for (const Operator& op : ops) flops += op.flops() * (op.spatial ? scale : 1);
  AddTerm(e, "forward FLOPs per sample", flops * passes / 1e9, "GFLOP",
          "the operators' FLOPs x passes per sample");
  for (const auto& [name, g] : pass.groups) {
    if (g.kernels <= 0) continue;
    AddTerm(e, "operators: " + std::string(name), g.seconds() * passes * 1e3, "ms/batch",
            fmt::format("{:.0f} kernels x {} passes", g.kernels, passes));
  }
  AddTerm(e, "batch time", e->time.step_s * 1e3, "ms", "sum of the operators' rooflines");
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
