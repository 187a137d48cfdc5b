#include "estimate/transformer_math.h"

#include <algorithm>

namespace cloudfit {

bool HasGatedMlp(const Model& m) {
  return (m.family == "decoder" || m.family == "moe") && m.ffn_hidden > 0 &&
         m.ffn_hidden != 4 * m.hidden;
}

bool UsesDropout(const Model& m) { return !HasGatedMlp(m); }

int HeadDim(const Model& m) { return m.heads > 0 ? m.hidden / m.heads : 0; }

double LayerActivationBytes(const Model& m, double s, double b, const ActivationOptions& o) {
  const double h = m.hidden;
  const double a = m.heads;
  const double t = std::max(1, o.tensor_parallel);
  const double g = m.heads > 0 ? static_cast<double>(std::max(1, m.kv_heads)) / m.heads : 1;
  const double f = m.ffn_hidden > 0 ? m.ffn_hidden : 4 * h;
  const double experts = m.experts > 0 ? std::max(1, m.experts_per_token) : 1;
  const double mask = o.dropout ? 1 : 0;
  // Per token, in bytes, following Korthikanti et al. 2022 section 4.1 term by term.
  // Replicated across tensor-parallel ranks unless sequence parallelism splits them: the two
  // layer-norm inputs (2h each), and the dropout masks after attention and after the MLP.
  double replicated = 4 * h + 2 * mask * h;
  // Split by tensor parallelism: Q (2h), K and V (2h*g each), the attention output (2h), the
  // attention input (2h, counted here as Megatron keeps it per rank), and the MLP.
  double attention = 2 * h + 2 * h + 4 * h * g + 2 * h;
  double mlp = 2 * h + (HasGatedMlp(m) ? 8 * f : 4 * f) * experts;
  // The s x s score terms: the softmax's output (2 bytes; 4 + 2 when it runs in FP32 and a
  // 16-bit copy feeds the value product), and with dropout its mask (1) and output (2).
  double scores = 0;
  double softmax = o.fp32_softmax ? 6 : 2;
  if (!o.flash_attention && o.recompute == Recompute::kNone) scores = (softmax + 3 * mask) * a * s;
  double per_token = 0;
  if (o.recompute == Recompute::kFull) {
    // Only each layer's input survives (2h); the working set of one layer is added by callers.
    per_token = 2 * h / (o.sequence_parallel ? t : 1);
  } else if (o.sequence_parallel) {
    per_token = (replicated + attention + mlp + scores) / t;
  } else {
    // Korthikanti eq. 2 keeps the attention and MLP inputs (2h each) replicated as well.
    per_token = replicated + 4 * h + (attention + mlp - 4 * h + scores) / t;
  }
  return per_token * s * b;
}

double NonEmbeddingParams(const Model& m) {
  double embedding = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings ? 1 : 2);
  double rest = m.active_params - embedding;
  // Models whose published count leaves out the head, or tiny explicit models.
  return rest > 0 ? rest : m.active_params;
}

double ForwardFlopsPerToken(const Model& m, double seq_len, bool causal) {
  double head = 2.0 * m.hidden * m.vocab;
  double attention = 4.0 * m.layers * seq_len * m.hidden * (causal ? 0.5 : 1.0);
  // NonEmbeddingParams leaves out the embedding and any untied head; the head's multiply is
  // counted once, tied or not, as `head`.
  return 2.0 * NonEmbeddingParams(m) + attention + head;
}

double KvCacheBytesPerToken(const Model& m, double bytes_per_element) {
  return 2.0 * m.layers * std::max(1, m.kv_heads) * HeadDim(m) * bytes_per_element;
}

double LoraParams(const Model& m, LoraTargets targets, int rank) {
  const double h = m.hidden;
  const double kv = static_cast<double>(std::max(1, m.kv_heads)) * HeadDim(m);
  const double f = m.ffn_hidden > 0 ? m.ffn_hidden : 4 * h;
  const double r = rank;
  // An adapter on a d_in x d_out matrix adds r * (d_in + d_out) parameters.
  double per_layer = 0;
  if (targets != LoraTargets::kMlp) per_layer += r * (h + h) + r * (h + kv);  // q and v
  if (targets == LoraTargets::kAttention || targets == LoraTargets::kAllLinear) {
    per_layer += r * (h + kv) + r * (h + h);  // k and o
  }
  if (targets == LoraTargets::kAllLinear || targets == LoraTargets::kMlp) {
    double mlp = HasGatedMlp(m) ? 3 * r * (h + f) : 2 * r * (h + f);
    per_layer += mlp * std::max(1, m.experts);
  }
  return per_layer * m.layers;
}

}  // namespace cloudfit
