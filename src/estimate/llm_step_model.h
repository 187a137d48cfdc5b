// The per-step physics of language-model inference on one hardware choice: how long a prefill
// of some prompts and one decode step of some sequences take, how much memory weights, KV cache
// and workspace need, and how many KV tokens fit. The serving layer (batching, queueing,
// replicas: llm_serving.cc) and batch inference build on these figures; they hold no policy.
#ifndef CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_
#define CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_

#include <algorithm>
#include <cmath>
#include <optional>

#include "estimate/estimate_internal.h"
#include "estimate/transformer_math.h"

namespace cloudfit {

inline constexpr int kMaxBatch = 256;  // vLLM's default max_num_seqs
inline constexpr double kPrefillChunkTokens = 512;   // llama.cpp's default n_ubatch
inline constexpr double kPrefillBatchTokens = 2048;  // llama.cpp's default n_batch

// What a serving engine changes in the step physics, filled from its profile by the serving
// layer (llm_serving.cc). The defaults reproduce the fitted figures of data/efficiency.csv, whose
// decode and prefill rows were fitted to llama.cpp.
struct EngineStepInputs {
  double kv_bytes_per_element = 2;  // KV-cache format (fp8/int8: 1)
  std::optional<double> decode_bandwidth_efficiency;  // replaces the llm_decode row
  std::optional<double> prefill_compute_efficiency;   // replaces the llm_prefill row
  double step_overhead_s = 0;      // per iteration, outside the GPU kernels
  double memory_share = kPagedEngineMemoryShare;  // of device memory, for weights + KV
  bool memory_share_of_free = false;  // share of what weights and workspace leave instead
};

class LlmStepModel {
 public:
  LlmStepModel(const Catalog& catalog, const Workload& w, const Hardware& hw,
               const EngineStepInputs& engine = EngineStepInputs())
      : w_(w), hw_(hw), m_(w.model), engine_(engine) {
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
    kv_per_token_ = KvCacheBytesPerToken(m_, engine.kv_bytes_per_element);
    if (engine.decode_bandwidth_efficiency) {
      decode_bw_eff_ = *engine.decode_bandwidth_efficiency;
      decode_row_ = nullptr;
    }
    if (engine.prefill_compute_efficiency) {
      prefill_eff_ = *engine.prefill_compute_efficiency;
      prefill_row_ = nullptr;
    }
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
    return engine_.step_overhead_s + DecodeKernelSeconds(batch, context);
  }

  // Prefill of `batch` prompts of `tokens` each.
  double PrefillSeconds(double batch, double tokens) const {
    return engine_.step_overhead_s + PrefillKernelSeconds(batch, tokens);
  }

  // The GPU time of one decode step, without the engine's per-iteration overhead.
  double DecodeKernelSeconds(double batch, double context) const {
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

  // The GPU time of a prefill, without the engine's per-iteration overhead.
  double PrefillKernelSeconds(double batch, double tokens) const {
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
    double budget = engine_.memory_share_of_free
                        ? (rates_.memory_bytes - fixed.total_bytes()) * engine_.memory_share
                        : rates_.memory_bytes * engine_.memory_share - fixed.total_bytes();
    return std::max(0.0, budget) / (kv_per_token_ / shards());
  }

  const DeviceRates& rates() const { return rates_; }
  const EngineStepInputs& engine() const { return engine_; }
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
  EngineStepInputs engine_;
  DeviceRates rates_;
  int devices_ = 1;
  double decode_bw_eff_ = 0.7, prefill_eff_ = 0.5, forward_eff_ = 0.5, bandwidth_eff_ = 0.8;
  double flops_per_byte_ = 50, layer_latency_s_ = 1e-4;
  const EfficiencyFactor* decode_row_ = nullptr;
  const EfficiencyFactor* prefill_row_ = nullptr;
  double weight_bytes_ = 0, kv_per_token_ = 0;
};

// Serving and batch inference of a language model (llm_serving.cc): the engine's profile, how
// the hardware is split into model copies, the batch the load forms, latencies at a percentile,
// and replicas for the request rate.
Status EstimateLlmServing(const Catalog& catalog, const Workload& w, const Hardware& hw,
                          Estimate* e);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_
