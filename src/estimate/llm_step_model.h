// The per-step physics of language-model inference on one hardware choice, from the same
// device model and operator timing as training: a prefill is the forward pass of the prompts'
// operators; a decode step is one token's operators for each sequence in the batch, where the
// weight reads (at the weights' format) and the key/value-cache reads dominate and every
// kernel's launch shows. Tensor parallelism divides the work and adds two all-reduces per
// layer; a layer split (llama.cpp's default over several GPUs) runs the GPUs' layers one after
// another. The serving layer (batching, queueing, replicas: llm_serving.cc) and batch inference
// build on these figures; they hold no policy.
#ifndef CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_
#define CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "estimate/communication.h"
#include "estimate/device_model.h"
#include "estimate/estimate_internal.h"
#include "estimate/op_timing.h"
#include "estimate/transformer_ops.h"

namespace cloudfit {

inline constexpr double kPrefillChunkTokens = 512;   // llama.cpp's default n_ubatch
inline constexpr double kPrefillBatchTokens = 2048;  // llama.cpp's default n_batch

// What a serving engine changes in the step physics, filled from its profile by the serving
// layer (llm_serving.cc).
struct EngineStepInputs {
  double kv_bytes_per_element = 2;  // KV-cache format (fp8/int8: 1)
  // The engine's kernels, as fractions of the datasheet bandwidth (decode) and dense tensor
  // peak (prefill); unset: the software stack's rows of data/efficiency.csv.
  std::optional<double> decode_bandwidth_efficiency;
  std::optional<double> prefill_compute_efficiency;
  double step_overhead_s = 0;                     // per iteration, outside the GPU kernels
  double memory_share = kPagedEngineMemoryShare;  // of device memory, for weights + KV
  bool memory_share_of_free = false;  // share of what weights and workspace leave instead
};

// An operator of a decode step whose fields grow in proportion to the attended length.
struct ContextScaledOperator {
  size_t index = 0;
  bool n = false, k = false, read = false, written = false;
};

// The software stack (data/efficiency.csv) an inference workload's kernels belong to: the
// workload's `software`, else its serving engine's.
std::string InferenceSoftware(const Workload& w);

class LlmStepModel {
 public:
  LlmStepModel(const Catalog& catalog, const Workload& w, const Hardware& hw,
               const EngineStepInputs& engine = EngineStepInputs());

  bool language_model() const;
  // Devices that share one copy of the weights.
  int shards() const { return devices_; }
  double WeightsPerDevice() const { return weight_bytes_ / shards(); }

  // One decode step for `batch` sequences at `context` tokens each, with the engine's
  // per-iteration overhead; the kernels alone; and the kernels by operator group.
  double DecodeStepSeconds(double batch, double context) const;
  double DecodeKernelSeconds(double batch, double context) const;
  PassTime DecodeStep(double batch, double context) const;
  // Prefill of `batch` prompts of `tokens` each, with and without the per-iteration overhead.
  double PrefillSeconds(double batch, double tokens) const;
  double PrefillKernelSeconds(double batch, double tokens) const;

  MemoryBreakdown Memory(double batch, double context) const;
  // Tokens of KV cache a paged engine can hold on each device after weights and workspace.
  double KvCapacityTokens() const;

  // The options every pass of this model's operators shares: the devices' split of the layers or
  // the tensors, the attention kernels and, for llama.cpp on a GPU, ggml's graph.
  TransformerOpsOptions PassOptions() const;

  const DeviceModel& device() const { return device_; }
  const StackProfile& stack() const { return stack_; }
  double weight_bytes() const { return weight_bytes_; }
  double kv_per_token() const { return kv_per_token_; }
  const std::vector<std::string>& notes() const { return notes_; }
  const EngineStepInputs& engine() const { return engine_; }

 private:
  // Seconds of the per-layer collectives of tensor parallelism for `tokens` tokens.
  double TensorParallelSeconds(double tokens) const;
  // Seconds a prefill of `ops` spends turning quantized weights into FP16 before multiplying
  // them (stacks with a dequantize_above_tokens row), over all its micro-batches.
  double PrefillDequantizeSeconds(const std::vector<Operator>& ops, double batch,
                                  double tokens) const;
  // Calls fn(const Operator&) for each operator of a decode step at `context` tokens, in order.
  template <typename Fn>
  void ForEachDecodeOperator(double context, Fn&& fn) const;

  const Workload& w_;
  const Hardware& hw_;
  const Model& m_;
  EngineStepInputs engine_;
  DeviceModel device_;
  StackProfile stack_;
  CommunicationModel comm_;
  int devices_ = 1;
  double weight_bytes_ = 0;
  double kv_per_token_ = 0;
  double layer_hop_s_ = 0;  // hand-off between GPUs of a layer split, per boundary
  // Products over more rows than this dequantize quantized weights to FP16 first; 0 = never.
  double dequantize_above_tokens_ = 0;
  // llama.cpp on a GPU: ggml's graph on its CUDA backend, whose kernels the passes time and
  // whose prompts run in micro-batches of kPrefillChunkTokens, each attending to the tokens
  // before it.
  bool ggml_gpu_ = false;
  // A decode step's operators at one token of context, and those of its fields that grow in
  // proportion to the attended length; when the list does not scale so, it is rebuilt per step.
  std::vector<Operator> decode_ops_;
  std::vector<ContextScaledOperator> decode_context_ops_;
  bool decode_ops_reusable_ = false;
  std::vector<std::string> notes_;
};

// Serving and batch inference of a language model (llm_serving.cc): the engine's profile, how
// the hardware is split into model copies, the batch the load forms, latencies at a percentile,
// and replicas for the request rate.
Status EstimateLlmServing(const Catalog& catalog, const Workload& w, const Hardware& hw,
                          Estimate* e);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_
