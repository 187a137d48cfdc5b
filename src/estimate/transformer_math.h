// Closed-form counts for transformer models: activation bytes per layer (Korthikanti et al.
// 2022, generalised to grouped-query attention and gated MLPs), FLOPs per token, KV-cache bytes
// and LoRA adapter sizes. Pure functions of the architecture and the layout.
#ifndef CLOUDFIT_ESTIMATE_TRANSFORMER_MATH_H_
#define CLOUDFIT_ESTIMATE_TRANSFORMER_MATH_H_

#include "cloudfit/model.h"
#include "cloudfit/workload.h"

namespace cloudfit {

struct ActivationOptions {
  int tensor_parallel = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool flash_attention = false;
  // Dropout masks (one byte per element) are stored by models trained with dropout (GPT-2,
  // BERT, Megatron's GPT); Llama-family models train without dropout.
  bool dropout = true;
  // Unfused attention as PyTorch eager code runs it in 16 bits (Hugging Face's eager attention:
  // softmax(..., dtype=float32).to(dtype)): the softmax keeps its FP32 output for backward and
  // the value product keeps the 16-bit copy, 6 bytes per score where Megatron's fused softmax
  // (Korthikanti et al.) keeps 2.
  bool fp32_softmax = false;
};

// Whether the MLP is gated (SwiGLU/GeGLU: gate, up and down projections). Taken from the
// shape: Llama-family models use ffn_hidden != 4 * hidden, classic GPT/BERT use 4 * hidden.
bool HasGatedMlp(const Model& m);
// Llama-family decoders train without dropout; encoder and GPT-2-era models with it.
bool UsesDropout(const Model& m);
int HeadDim(const Model& m);

// Activation bytes stored for the backward pass by one transformer layer, for `tokens` =
// sequence length x micro-batch, with 16-bit activations. Without recomputation and with
// standard attention this is Korthikanti's s*b*h*(34 + 5*a*s/h) for a GPT layer.
double LayerActivationBytes(const Model& m, double seq_len, double micro_batch,
                            const ActivationOptions& options);

// Forward FLOPs per token through the transformer (all layers and the output head), for a
// sequence of `seq_len` tokens: 2 x active non-embedding parameters, the attention score and
// value products, and the LM head.
double ForwardFlopsPerToken(const Model& m, double seq_len, bool causal);

// Parameters outside the embedding table (the ones each token multiplies).
double NonEmbeddingParams(const Model& m);

// Bytes of key and value cache per token of context, all layers.
double KvCacheBytesPerToken(const Model& m, double bytes_per_element);

// Trainable LoRA parameters for the targets and rank.
double LoraParams(const Model& m, LoraTargets targets, int rank);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_TRANSFORMER_MATH_H_
