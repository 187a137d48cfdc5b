#include "estimate/transformer_ops.h"

#include <algorithm>
#include <string>
#include <utility>

#include "estimate/transformer_math.h"

namespace cloudfit {

namespace {

// Builds one transformer layer's forward operators (self-attention, optional cross-attention,
// MLP) into `ops`.
class LayerBuilder {
 public:
  LayerBuilder(const Model& m, const TransformerOpsOptions& o, std::vector<Operator>* ops)
      : m_(m), o_(o), ops_(ops) {
    t_ = std::max(1, o.tensor_parallel);
    h_ = m.hidden;
    heads_ = m.heads;
    kv_heads_ = std::max(1, m.kv_heads > 0 ? m.kv_heads : m.heads);
    d_ = HeadDim(m);
    f_ = m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden;
    s_ = o.seq_len;
    keys_ = o.key_len > 0 ? o.key_len : o.seq_len;
  }

  void Gemm(const char* label, double m, double n, double k, double repeats, bool lora_target) {
    Operator op;
    op.label = label;
    op.kind = OpKind::kGemm;
    op.m = m;
    op.n = n;
    op.k = k;
    op.repeats = repeats;
    op.trainable = !o_.lora;
    ops_->push_back(op);
    if (o_.lora && lora_target) {
      // x A (k -> r) then (x A) B (r -> n), added to the frozen output.
      Operator down = op, up = op;
      down.label = std::string(label) + " LoRA A";
      down.n = o_.lora_rank;
      down.trainable = true;
      up.label = std::string(label) + " LoRA B";
      up.k = o_.lora_rank;
      up.trainable = true;
      ops_->push_back(down);
      ops_->push_back(up);
      Stream(OpKind::kElementwise, (std::string(label) + " LoRA add").c_str(), 2 * m * n, m * n,
             repeats);
    }
  }

  // A projection of the layer: a product of its own, with ggml's kernels around it.
  void Projection(const std::string& label, double m, double n, double k, double repeats,
                  bool lora_target) {
    bool converts = false;
    if (o_.ggml_graph) {
      if (o_.quantized_weights && m <= o_.ggml_quantize_rows) {
        // FP32 in (two units of the 2-byte activations), q8_1 out (36 bytes per 32 values).
        Stream(OpKind::kElementwise, label + " input to q8_1", 2 * m * k, 0.5625 * m * k, repeats);
      } else if (o_.quantized_weights || m > 1) {
        converts = true;
        Stream(OpKind::kElementwise, label + " input to FP16", 2 * m * k, m * k, repeats);
      }
    }
    Gemm(label.c_str(), m, n, k, repeats, lora_target);
    if (converts)
      Stream(OpKind::kElementwise, label + " output to FP32", m * n, 2 * m * n, repeats);
  }

  // A normalisation; ggml multiplies by the norm's weight in a kernel of its own.
  void Norm(const char* label, double layers) {
    Stream(OpKind::kNorm, label, s_ * h_, s_ * h_, layers);
    if (o_.ggml_graph) {
      Stream(OpKind::kElementwise, std::string(label) + " weight", s_ * h_, s_ * h_, layers);
    }
  }

  void Stream(OpKind kind, std::string label, double read, double written, double repeats) {
    Operator op;
    op.label = std::move(label);
    op.kind = kind;
    op.read_elements = read;
    op.written_elements = written;
    op.repeats = repeats;
    ops_->push_back(op);
  }

  // Grouped-query attention: each key/value head serves heads / kv_heads query heads, so the
  // products are counted per key/value head with that many queries per token; FLOPs are those
  // of every query head, and the keys and values are read once per key/value head. Unfused
  // kernels that broadcast the key/value heads (o.kv_per_query_head) run one product per query
  // head instead, each reading its key/value head again.
  void Attention(const char* label, double queries, double keys, bool causal, double layers) {
    double heads = heads_ / t_;
    double kv_groups = std::max(1.0, kv_heads_ / t_);
    if (!o_.flash_attention && o_.kv_per_query_head) kv_groups = std::max(1.0, heads);
    double per_group = heads / kv_groups;
    if (o_.flash_attention) {
      Operator op;
      op.label = std::string(label) + " (fused)";
      op.kind = OpKind::kFusedAttention;
      op.m = queries * per_group;
      op.n = keys;
      op.k = d_;
      op.groups = kv_groups;
      op.repeats = layers;
      op.causal = causal;
      op.trainable = false;
      ops_->push_back(op);
      return;
    }
    // Scores, then scale and mask, softmax, dropout, then the weighted sum of the values.
    Operator scores;
    scores.label = std::string(label) + " scores";
    scores.kind = OpKind::kAttention;
    scores.m = queries * per_group;
    scores.n = keys;
    scores.k = d_;
    scores.groups = kv_groups;
    scores.repeats = layers;
    scores.trainable = false;
    ops_->push_back(scores);
    double elements = heads * queries * keys;
    if (m_.compute_class == "transformer-xl") {
      // Relative positions: a second score product against the position projections, and
      // the shift that aligns it (Dai et al. 2019, appendix B).
      Operator position = scores;
      position.label = std::string(label) + " position scores";
      ops_->push_back(position);
      Stream(OpKind::kElementwise, "relative shift", elements, elements, layers);
      Stream(OpKind::kElementwise, "score sum", 2 * elements, elements, layers);
    }
    const bool fp32_scores = o_.fp32_scores || o_.ggml_graph;
    if (o_.ggml_graph) {
      Stream(OpKind::kElementwise, "queries to FP16", 2 * queries * heads * d_,
             queries * heads * d_, layers);
      Stream(OpKind::kElementwise, "score product pointers", 0, 4 * heads, layers);
    }
    if (fp32_scores) {
      // In units of the 2-byte activations: FP16 -> FP32, the fused softmax over FP32, back.
      Stream(OpKind::kElementwise, "scores to FP32", elements, 2 * elements, layers);
      Stream(OpKind::kSoftmax, "attention softmax (scale, mask)", 2 * elements, 2 * elements,
             layers);
      Stream(OpKind::kElementwise, "scores to FP16", 2 * elements, elements, layers);
    } else {
      Stream(OpKind::kElementwise, "score scale and mask", elements, elements, layers);
      Stream(OpKind::kSoftmax, "attention softmax", elements, elements, layers);
    }
    if (o_.dropout) Stream(OpKind::kElementwise, "attention dropout", elements, elements, layers);
    if (o_.ggml_graph) Stream(OpKind::kElementwise, "value product pointers", 0, 4 * heads, layers);
    Operator values = scores;
    values.label = std::string(label) + " values";
    values.n = d_;
    values.k = keys;
    ops_->push_back(values);
    if (o_.ggml_graph) {
      double out = queries * heads * d_;
      Stream(OpKind::kElementwise, "attention output to FP32", out, 2 * out, layers);
      Stream(OpKind::kElementwise, "heads made contiguous", 2 * out, 2 * out, layers);
    }
  }

  void SelfAttentionBlock(double layers, bool causal) {
    double q_width = heads_ * d_ / t_;
    double kv_width = kv_heads_ * d_ / t_;
    Norm("layer norm (attention)", layers);
    if (o_.ggml_graph) {
      Projection("query projection", s_, q_width, h_, layers, true);
      Projection("key projection", s_, kv_width, h_, layers, true);
      Projection("value projection", s_, kv_width, h_, layers, true);
      Stream(OpKind::kElementwise, "RoPE (queries)", s_ * q_width, s_ * q_width, layers);
      Stream(OpKind::kElementwise, "RoPE (keys)", s_ * kv_width, s_ * kv_width, layers);
      Stream(OpKind::kElementwise, "keys to the cache", s_ * kv_width, s_ * kv_width, layers);
      Stream(OpKind::kElementwise, "values to the cache", s_ * kv_width, s_ * kv_width, layers);
    } else if (m_.compute_class == "transformer-xl" && keys_ > s_) {
      // Transformer-XL projects the remembered segment with the current one: the layer
      // concatenates them and runs its QKV projection over both, then keeps the last queries;
      // the queries take the two relative-position biases (r_w_bias, r_r_bias) as two adds
      // (RelPartialLearnableMultiHeadAttn.forward: cat = torch.cat([mems, w], 0);
      // w_heads = self.qkv_net(cat); NVIDIA/DeepLearningExamples@09a17a0f:
      // PyTorch/LanguageModeling/Transformer-XL/pytorch/mem_transformer.py).
      Stream(OpKind::kElementwise, "memory concat", keys_ * h_, keys_ * h_, layers);
      Gemm("QKV projection (memory and segment)", keys_, q_width + 2 * kv_width, h_, layers, true);
      Stream(OpKind::kElementwise, "query position biases", 2 * s_ * q_width, 2 * s_ * q_width,
             layers);
    } else {
      Gemm("QKV projection", s_, q_width + 2 * kv_width, h_, layers, true);
    }
    Attention("self-attention", s_, keys_, causal, layers);
    Projection("attention output projection", s_, h_, q_width, layers, true);
    Residual(layers);
  }

  void CrossAttentionBlock(double layers, double source_len) {
    double q_width = heads_ * d_ / t_;
    double kv_width = kv_heads_ * d_ / t_;
    Stream(OpKind::kNorm, "layer norm (cross-attention)", s_ * h_, s_ * h_, layers);
    Gemm("cross-attention query projection", s_, q_width, h_, layers, true);
    Gemm("cross-attention key/value projection", source_len, 2 * kv_width, h_, layers, true);
    Attention("cross-attention", s_, source_len, false, layers);
    Gemm("cross-attention output projection", s_, h_, q_width, layers, true);
    Residual(layers);
  }

  void MlpBlock(double layers) {
    bool gated = HasGatedMlp(m_);
    double experts = m_.experts > 0 ? std::max(1, m_.experts_per_token) : 1;
    double width = f_ / t_ * experts;
    Norm("layer norm (MLP)", layers);
    if (m_.experts > 0) {
      // The router's scores and the gather/scatter of tokens to their experts.
      Gemm("expert router", s_, m_.experts, h_, layers, false);
      Stream(OpKind::kElementwise, "expert dispatch and combine", 2 * s_ * h_ * experts,
             2 * s_ * h_ * experts, layers);
    }
    if (o_.ggml_graph) {
      if (gated) Projection("MLP gate projection", s_, width, h_, layers, true);
      Projection("MLP up projection", s_, width, h_, layers, true);
      Stream(OpKind::kActivation, "activation", s_ * width, s_ * width, layers);
      if (gated) Stream(OpKind::kElementwise, "gate multiply", 2 * s_ * width, s_ * width, layers);
    } else {
      Gemm(gated ? "MLP gate and up projections" : "MLP up projection", s_, (gated ? 2 : 1) * width,
           h_, layers, true);
      Stream(OpKind::kActivation, gated ? "gated activation" : "activation",
             (gated ? 2 : 1) * s_ * width, s_ * width, layers);
    }
    Projection("MLP down projection", s_, h_, width, layers, true);
    Residual(layers);
  }

  void Residual(double layers) {
    if (o_.dropout) Stream(OpKind::kElementwise, "dropout", s_ * h_, s_ * h_, layers);
    Stream(OpKind::kElementwise, "residual add", 2 * s_ * h_, s_ * h_, layers);
  }

 private:
  const Model& m_;
  const TransformerOpsOptions& o_;
  std::vector<Operator>* ops_;
  double t_ = 1, h_ = 0, heads_ = 0, kv_heads_ = 0, d_ = 0, f_ = 0, s_ = 0, keys_ = 0;
};

}  // namespace

TransformerHead DefaultTrainingHead(const Model& m) {
  return m.family == "encoder" || m.family == "vit" ? TransformerHead::kClassifier
                                                    : TransformerHead::kLanguageModel;
}

std::vector<Operator> TransformerOperators(const Model& m, const TransformerOpsOptions& o) {
  std::vector<Operator> ops;
  LayerBuilder layer(m, o, &ops);
  double s = o.seq_len;
  double h = m.hidden;
  double t = std::max(1, o.tensor_parallel);
  double layers = o.layers > 0 ? o.layers : m.layers;
  if (o.embeddings) {
    layer.Stream(OpKind::kEmbedding, "token embedding", s * h, s * h, 1);
    // ggml's rotary models pay their positions in the attention (RoPE on queries and keys).
    if (!o.ggml_graph && (m.family == "encoder" || m.family == "vit" || m.family == "decoder")) {
      // Learned or sinusoidal positions added to the tokens (rotary models fold theirs into the
      // attention and pay it there; counted the same).
      layer.Stream(OpKind::kElementwise, "position embedding add", 2 * s * h, s * h, 1);
    }
  }
  if (m.family == "encoder-decoder" || (m.family == "speech" && m.layers > 0)) {
    // Encoder and decoder stacks of `layers` each; the source is taken as long as the target.
    layer.SelfAttentionBlock(layers, false);
    layer.MlpBlock(layers);
    layer.SelfAttentionBlock(layers, true);
    layer.CrossAttentionBlock(layers, s);
    layer.MlpBlock(layers);
  } else {
    bool causal = o.causal && m.family != "encoder" && m.family != "vit";
    layer.SelfAttentionBlock(layers, causal);
    layer.MlpBlock(layers);
  }
  layer.Norm("final layer norm", 1);
  // A model described without its vocabulary has no head to time.
  TransformerHead head_kind = m.vocab > 0 ? o.head : TransformerHead::kNone;
  if (o.head == TransformerHead::kClassifier) head_kind = o.head;
  switch (head_kind) {
    case TransformerHead::kLanguageModel: {
      Operator head;
      head.label = "language-model head";
      head.kind = OpKind::kGemm;
      head.m = s;
      head.n = m.vocab / t;
      head.k = h;
      head.trainable = !o.lora;
      ops.push_back(head);
      layer.Stream(OpKind::kLoss, "cross-entropy over the vocabulary", s * m.vocab / t,
                   s * m.vocab / t, 1);
      ops.back().n = m.vocab / t;  // each row the softmax normalises
      break;
    }
    case TransformerHead::kClassifier:
      layer.Gemm("task head", s, 2, h, 1, false);
      break;
    case TransformerHead::kLogits:
      layer.Projection("language-model head (last position)", 1, m.vocab / t, h, 1, false);
      break;
    case TransformerHead::kNone:
      break;
  }
  return ops;
}

}  // namespace cloudfit
