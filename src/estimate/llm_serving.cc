// Serving and batch inference of language models on top of the per-step physics: the batch a
// replica runs, time to first token and per output token, requests per replica and replicas.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/llm_step_model.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

Status EstimateLlmServing(const LlmStepModel& im, const Workload& w, const Hardware& hw,
                          Estimate* e) {
  const double prompt = w.prompt_tokens;
  const double output = w.output_tokens;
  const double context = prompt + output;
  // How many sequences fit: a static engine reserves the full context per sequence; a paged
  // engine allocates blocks as tokens arrive, so on average half the output is resident.
  double resident = w.engine == ServingEngine::kPaged ? prompt + output / 2 : context;
  double capacity = im.KvCapacityTokens();
  int max_batch = static_cast<int>(std::min<double>(kMaxBatch, std::floor(capacity / resident)));
  if (w.micro_batch > 0) max_batch = std::min(max_batch, w.micro_batch);
  ServingFigures s;
  s.kv_capacity_tokens = capacity;
  if (max_batch < 1) {
    e->fits = false;
    e->memory = im.Memory(1, context);
    e->notes.push_back(fmt::format(
        "does not fit: {:.1f} GiB of weights per device leave no room for one {:.0f}-token "
        "sequence's KV cache in {:.1f} GiB",
        im.WeightsPerDevice() / kGiB, context, e->memory.capacity_bytes / kGiB));
    max_batch = 1;
  }
  // The largest batch that keeps time per output token within the target.
  int batch = max_batch;
  if (w.tpot_target_s) {
    while (batch > 1 && im.DecodeStepSeconds(batch, prompt + output / 2) > *w.tpot_target_s) {
      batch = batch * 3 / 4;
    }
  }
  double tpot = im.DecodeStepSeconds(batch, prompt + output / 2);
  double prefill_one = im.PrefillSeconds(1, prompt);
  s.max_batch = batch;
  s.prefill_s = prefill_one;
  s.tpot_s = tpot;
  // A new request waits for the step in flight, then its prompt is processed.
  s.ttft_s = prefill_one + tpot;
  s.tokens_per_s = batch / tpot;
  // Per request the replica spends its prefill plus its share of the batched decode steps.
  s.requests_per_s = 1.0 / (prefill_one + output * tpot / batch);
  Status counted = CountToCover("request_rate", w.request_rate, s.requests_per_s,
                                kMaxServingReplicas, "replicas", &s.replicas);
  if (!counted.ok()) return counted;
  s.meets_targets = (!w.ttft_target_s || s.ttft_s <= *w.ttft_target_s) &&
                    (!w.tpot_target_s || s.tpot_s <= *w.tpot_target_s);
  if (!s.meets_targets) {
    e->notes.push_back(fmt::format("misses the latency target: TTFT {:.0f} ms, TPOT {:.1f} ms",
                                   s.ttft_s * 1e3, s.tpot_s * 1e3));
  }
  if (e->memory.capacity_bytes == 0) e->memory = im.Memory(batch, resident);
  e->fits = e->fits && e->memory.fits();
  e->time.step_s = tpot;
  e->time.memory_s = (im.weight_bytes() + batch * (prompt + output / 2) * im.kv_per_token()) /
                     (im.rates().bandwidth_bytes_per_s * im.decode_bw_eff() *
                      (w.layer_split ? 1 : std::max(1, hw.total_gpus())));
  e->time.compute_s = std::max(0.0, tpot - e->time.memory_s);
  e->bottleneck = e->time.memory_s > e->time.compute_s ? "memory bandwidth (decode)" : "compute";
  e->throughput = s.tokens_per_s;
  e->throughput_unit = "tokens/s";
  double requests = w.samples > 0 ? w.samples : 10000;
  if (w.kind == WorkloadKind::kServing) {
    e->total_s = 3600;  // serving is priced per hour
  } else {
    e->total_s = requests * (prefill_one / std::max(1, batch) + output * tpot / batch);
  }
  e->serving = s;
  AddTerm(e, "weights read per decode step", im.weight_bytes() / 1e9, "GB",
          fmt::format("{:.2f} B params x {} bits", w.model.params / 1e9,
                      w.weight_bits > 0 ? w.weight_bits : BytesPerWeight(w.precision) * 8));
  AddTerm(e, "KV cache per token", im.kv_per_token(), "bytes",
          "2 x layers x kv_heads x head_dim x 2 bytes");
  AddTerm(e, "decode bandwidth efficiency", im.decode_bw_eff(), "",
          im.decode_row() ? "fitted to " + im.decode_row()->fitted_to : "default");
  AddTerm(e, "prefill compute efficiency", im.prefill_eff(), "",
          im.prefill_row() ? "fitted to " + im.prefill_row()->fitted_to : "default");
  AddTerm(e, "KV capacity", capacity, "tokens",
          fmt::format("({} x device memory - weights - workspace) / KV per token",
                      kPagedEngineMemoryShare));
  AddTerm(e, "batch", batch, "sequences", "min(KV capacity / resident tokens, 256, TPOT target)");
  AddTerm(e, "time per output token", tpot * 1e3, "ms", "weights + KV bytes / bandwidth + FLOPs / peak");
  AddTerm(e, "time to first token", s.ttft_s * 1e3, "ms", "prefill FLOPs / (peak x efficiency) + one step");
  return Status::OK();
}

}  // namespace cloudfit
