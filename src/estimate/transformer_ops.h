// The forward operators of a transformer, derived from its shape: per layer the two
// normalisations, the QKV, output and MLP projections, attention (fused or as two batched
// matmuls with softmax, scaling and dropout between them), activation, dropout and residual
// adds; then the embeddings, the final normalisation and the head. Per sample, for one device
// (tensor parallelism divides the heads and the MLP width).
#ifndef CLOUDFIT_ESTIMATE_TRANSFORMER_OPS_H_
#define CLOUDFIT_ESTIMATE_TRANSFORMER_OPS_H_

#include <vector>

#include "cloudfit/model.h"
#include "cloudfit/operators.h"
#include "cloudfit/workload.h"

namespace cloudfit {

enum class TransformerHead {
  kLanguageModel,  // vocabulary projection and cross-entropy over every position
  kClassifier,     // a small head (sequence classification, SQuAD spans): negligible work
  kLogits,         // the vocabulary projection of the last position only (generation)
  kNone,           // no head (inference that stops at the hidden states)
};

struct TransformerOpsOptions {
  double seq_len = 1;  // query tokens per sample
  double key_len = 0;  // tokens attended per query; 0 = seq_len (Transformer-XL adds its memory)
  int tensor_parallel = 1;
  double layers = 0;  // layers on this device (a pipeline stage); 0 = all
  bool flash_attention = true;
  // Unfused attention as ggml (llama.cpp) and Hugging Face's eager attention run grouped-query
  // attention: one product per query head, the key/value head broadcast (ggml's batched cuBLAS
  // call points every query head at its key/value head: k_compute_batched_ptrs in ggml-cuda.cu;
  // transformers' repeat_kv copies them), so the cache is read once per query head.
  bool kv_per_query_head = false;
  // ggml's unfused attention keeps the scores in FP32 between its FP16 products: cuBLAS writes
  // them in FP16, a kernel widens them to FP32, soft_max_ext scales, masks and normalises them in
  // one pass, and another kernel narrows them back to FP16 for the product with the values.
  bool fp32_scores = false;
  // ggml's graph, as llama.cpp's CUDA backend runs it (llm_build_llama, ggml_cuda_mul_mat): each
  // projection is a product of its own (queries, keys and values; gate and up); RMS norm and the
  // multiply by its weight are two kernels; RoPE runs on the queries and on the keys; keys and
  // values are copied into the cache and the heads' outputs made contiguous; the unfused
  // attention's batched cuBLAS products convert their FP32 inputs to FP16 and their outputs back,
  // with a kernel that lays out their pointers. A product of quantized weights over at most
  // `ggml_quantize_rows` rows first quantizes its input to q8_1 (mul_mat_vec_q, mul_mat_q);
  // other products, but an FP16 matrix-vector one, go through cuBLAS and convert their input
  // and output the same way.
  bool ggml_graph = false;
  bool quantized_weights = false;
  double ggml_quantize_rows = 32;
  bool causal = true;
  bool dropout = false;  // attention-probability and hidden dropout, as the model trains
  TransformerHead head = TransformerHead::kLanguageModel;
  bool embeddings = true;  // this device holds the embeddings (the first pipeline stage)
  // LoRA: frozen base projections plus trainable low-rank adapters on the targets.
  bool lora = false;
  LoraTargets lora_targets = LoraTargets::kAllLinear;
  int lora_rank = 16;
};

// The head a model trains with by default: decoders predict tokens (language-model head),
// encoders are fine-tuned with a small task head.
TransformerHead DefaultTrainingHead(const Model& m);

std::vector<Operator> TransformerOperators(const Model& m, const TransformerOpsOptions& o);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_TRANSFORMER_OPS_H_
