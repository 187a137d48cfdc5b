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

#include <string>
#include <vector>

#include "estimate/communication.h"
#include "estimate/device_model.h"
#include "estimate/estimate_internal.h"
#include "estimate/op_timing.h"

namespace cloudfit {

inline constexpr int kMaxBatch = 256;  // vLLM's default max_num_seqs
inline constexpr double kPrefillChunkTokens = 512;   // llama.cpp's default n_ubatch
inline constexpr double kPrefillBatchTokens = 2048;  // llama.cpp's default n_batch

class LlmStepModel {
 public:
  LlmStepModel(const Catalog& catalog, const Workload& w, const Hardware& hw);

  bool language_model() const;
  // Devices that share one copy of the weights.
  int shards() const { return devices_; }
  double WeightsPerDevice() const { return weight_bytes_ / shards(); }

  // One decode step for `batch` sequences at `context` tokens each.
  double DecodeStepSeconds(double batch, double context) const;
  PassTime DecodeStep(double batch, double context) const;
  // Prefill of `batch` prompts of `tokens` each.
  double PrefillSeconds(double batch, double tokens) const;

  MemoryBreakdown Memory(double batch, double context) const;
  // Tokens of KV cache a paged engine can hold on each device after weights and workspace.
  double KvCapacityTokens() const;

  const DeviceModel& device() const { return device_; }
  const StackProfile& stack() const { return stack_; }
  double weight_bytes() const { return weight_bytes_; }
  double kv_per_token() const { return kv_per_token_; }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  // Seconds of the per-layer collectives of tensor parallelism for `tokens` tokens.
  double TensorParallelSeconds(double tokens) const;

  const Workload& w_;
  const Hardware& hw_;
  const Model& m_;
  DeviceModel device_;
  StackProfile stack_;
  CommunicationModel comm_;
  int devices_ = 1;
  double weight_bytes_ = 0;
  double kv_per_token_ = 0;
  double layer_hop_s_ = 0;  // hand-off between GPUs of a layer split, per boundary
  std::vector<std::string> notes_;
};

// Serving and batch inference of a language model: batch, time to first token, time per output
// token, requests per replica and replicas for the request rate.
Status EstimateLlmServing(const LlmStepModel& model, const Workload& w, const Hardware& hw,
                          Estimate* e);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_LLM_STEP_MODEL_H_
