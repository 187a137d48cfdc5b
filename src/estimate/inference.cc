// Inference: batch inference and online serving. Language models decode one token at a time,
// reading every weight and the KV cache per step (memory-bound); prefill processes the prompt in
// one compute-bound pass. Other models run a forward pass per sample.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"
#include "estimate/transformer_math.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr int kMaxBatch = 256;  // vLLM's default max_num_seqs
constexpr double kPrefillChunkTokens = 512;   // llama.cpp's default n_ubatch
constexpr double kPrefillBatchTokens = 2048;  // llama.cpp's default n_batch

class InferenceModel {
 public:
  InferenceModel(const Catalog& catalog, const Workload& w, const Hardware& hw)
      : w_(w), hw_(hw), m_(w.model) {
    rates_ = WorkloadRates(w, hw);
    devices_ = hw.has_gpu() ? hw.total_gpus() : 1;
    const EfficiencyTable& eff = catalog.efficiency();
    decode_bw_eff_ = eff.Lookup("bandwidth_efficiency", rates_.architecture, rates_.precision_key,
                                "llm_decode", 0.7, &decode_row_);
    prefill_eff_ = eff.Lookup("compute_efficiency", rates_.architecture, rates_.precision_key,
                              "llm_prefill", 0.5, &prefill_row_);
    forward_eff_ = ClassComputeEfficiency(eff, rates_, ComputeClass(m_));
    bandwidth_eff_ = eff.Lookup("bandwidth_efficiency", rates_.architecture, "*", "*", 0.8);
    flops_per_byte_ = eff.Lookup("flops_per_byte", "*", "*", ComputeClass(m_), 50);
    layer_latency_s_ = eff.Lookup("layer_split_hop_s", "*", "*", "*", 1e-4);
    double bits = w.weight_bits > 0 ? w.weight_bits : BytesPerWeight(w.precision) * 8;
    weight_bytes_ = m_.params * bits / 8;
    kv_per_token_ = KvCacheBytesPerToken(m_, 2);
  }

  bool language_model() const {
    return m_.family == "decoder" || m_.family == "moe" || m_.family == "encoder-decoder" ||
           (m_.family == "speech" && m_.layers > 0);
  }

  // Devices that share one copy of the weights.
  int shards() const { return devices_; }

  double WeightsPerDevice() const { return weight_bytes_ / shards(); }

  // One decode step for `batch` sequences at `context` tokens each.
  double DecodeStepSeconds(double batch, double context) const {
    double flops = batch * (2 * NonEmbeddingParams(m_) + 2.0 * m_.hidden * m_.vocab +
                            4.0 * m_.layers * context * m_.hidden);
    double bytes = weight_bytes_ + batch * context * kv_per_token_;
    double compute = flops / (rates_.peak_flops * devices_ * prefill_eff_);
    if (w_.layer_split) {
      // Layers run one GPU after another: each GPU streams its share of the bytes in turn, so
      // the time is that of one GPU reading everything, plus a hand-off per GPU boundary.
      return bytes / (rates_.bandwidth_bytes_per_s * decode_bw_eff_) + compute * devices_ +
             (devices_ - 1) * layer_latency_s_;
    }
    double memory = bytes / (rates_.bandwidth_bytes_per_s * devices_ * decode_bw_eff_);
    double comm = 0;
    if (devices_ > 1 && hw_.has_gpu()) {
      // Two all-reduces of the hidden state per layer; small messages, latency-bound.
      double per_allreduce = 2.0 * (devices_ - 1) / devices_ * batch * m_.hidden * 2 /
                             hw_.intra_node_bytes_per_s;
      comm = 2.0 * m_.layers * (per_allreduce + layer_latency_s_ / 10);
    }
    return compute + memory + comm;
  }

  // Prefill of `batch` prompts of `tokens` each.
  double PrefillSeconds(double batch, double tokens) const {
    double flops = batch * tokens * ForwardFlopsPerToken(m_, tokens, true);
    if (w_.layer_split && devices_ > 1) {
      // Layer-split engines feed the prompt through the GPUs in micro-batches (llama.cpp's
      // default n_ubatch is 512 tokens), so the stages overlap once there are several: a
      // pipeline of k chunks over n stages takes (k + n - 1) / (k * n) of the serial time.
      // The pipeline fills within one logical batch (llama.cpp's n_batch, 2048 tokens), so a
      // longer prompt is several pipelines run one after another.
      double total_chunks = std::ceil(batch * tokens / kPrefillChunkTokens);
      double per_batch = std::min(total_chunks, kPrefillBatchTokens / kPrefillChunkTokens);
      double serial = flops / (rates_.peak_flops * prefill_eff_) +
                      weight_bytes_ / (rates_.bandwidth_bytes_per_s * bandwidth_eff_) *
                          std::ceil(total_chunks / per_batch);
      return serial * (per_batch + devices_ - 1) / (per_batch * devices_) +
             total_chunks * (devices_ - 1) * layer_latency_s_;
    }
    double compute = flops / (rates_.peak_flops * devices_ * prefill_eff_);
    double memory = weight_bytes_ / (devices_ * rates_.bandwidth_bytes_per_s * bandwidth_eff_);
    return compute + memory;
  }

  MemoryBreakdown Memory(double batch, double context) const {
    MemoryBreakdown mem;
    mem.capacity_bytes = rates_.memory_bytes;
    mem.weights_bytes = WeightsPerDevice();
    mem.kv_cache_bytes = batch * context * kv_per_token_ / shards();
    // Working set of one layer during prefill (chunked at 2,048 tokens) and the last-token
    // logits in fp32.
    double chunk = std::min<double>(context, 2048);
    ActivationOptions o;
    o.flash_attention = true;
    o.dropout = false;
    mem.activations_bytes = LayerActivationBytes(m_, chunk, 1, o) +
                            batch * static_cast<double>(m_.vocab) * 4;
    if (devices_ > 1) mem.comm_buffers_bytes = kNcclBufferBytes;
    if (hw_.has_gpu()) mem.runtime_bytes = kCudaRuntimeBytes;
    return mem;
  }

  // Tokens of KV cache a paged engine can hold on each device after weights and workspace.
  double KvCapacityTokens() const {
    MemoryBreakdown fixed = Memory(1, 0);
    double budget = rates_.memory_bytes * kPagedEngineMemoryShare - fixed.total_bytes();
    return std::max(0.0, budget) / (kv_per_token_ / shards());
  }

  const DeviceRates& rates() const { return rates_; }
  double weight_bytes() const { return weight_bytes_; }
  double kv_per_token() const { return kv_per_token_; }
  double decode_bw_eff() const { return decode_bw_eff_; }
  double prefill_eff() const { return prefill_eff_; }
  double forward_eff() const { return forward_eff_; }
  double bandwidth_eff() const { return bandwidth_eff_; }
  double flops_per_byte() const { return flops_per_byte_; }
  const EfficiencyFactor* decode_row() const { return decode_row_; }
  const EfficiencyFactor* prefill_row() const { return prefill_row_; }

 private:
  const Workload& w_;
  const Hardware& hw_;
  const Model& m_;
  DeviceRates rates_;
  int devices_ = 1;
  double decode_bw_eff_ = 0.7, prefill_eff_ = 0.5, forward_eff_ = 0.5, bandwidth_eff_ = 0.8;
  double flops_per_byte_ = 50, layer_latency_s_ = 1e-4;
  const EfficiencyFactor* decode_row_ = nullptr;
  const EfficiencyFactor* prefill_row_ = nullptr;
  double weight_bytes_ = 0, kv_per_token_ = 0;
};

Status LanguageModelInference(const InferenceModel& im, const Workload& w, const Hardware& hw,
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
  s.replicas = static_cast<int>(std::ceil(w.request_rate / s.requests_per_s - 1e-9));
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

Status ForwardInference(const InferenceModel& im, const Workload& w, const Hardware& hw,
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
  InferenceModel im(catalog, w, hw);
  if (im.language_model()) return LanguageModelInference(im, w, hw, e);
  return ForwardInference(im, w, hw, e);
}

}  // namespace cloudfit
