#include "cloudfit/operators.h"

#include "util/strings.h"

namespace cloudfit {

namespace {

struct KindInfo {
  OpKind kind;
  std::string_view name;
  std::string_view group;
  bool matrix;
};

constexpr KindInfo kKinds[kOpKindCount] = {
    {OpKind::kGemm, "gemm", "matmul", true},
    {OpKind::kConv, "conv", "conv", true},
    {OpKind::kGemmSequential, "gemm_sequential", "recurrent", true},
    {OpKind::kAttention, "attention", "attention", true},
    {OpKind::kFusedAttention, "fused_attention", "attention", true},
    {OpKind::kDepthwise, "depthwise", "conv", false},
    {OpKind::kNorm, "norm", "normalization", false},
    {OpKind::kActivation, "activation", "activation", false},
    {OpKind::kElementwise, "elementwise", "elementwise", false},
    {OpKind::kSoftmax, "softmax", "softmax", false},
    {OpKind::kPooling, "pooling", "elementwise", false},
    {OpKind::kResize, "resize", "elementwise", false},
    {OpKind::kEmbedding, "embedding", "embedding", false},
    {OpKind::kLoss, "loss", "loss", false},
    {OpKind::kLstmCell, "lstm_cell", "recurrent", false},
    {OpKind::kGemmStep, "gemm_step", "recurrent", true},
    {OpKind::kView, "view", "view", false},
};

const KindInfo& Info(OpKind kind) { return kKinds[static_cast<int>(kind)]; }

}  // namespace

std::string_view OpKindName(OpKind kind) { return Info(kind).name; }
std::string_view OpGroupName(OpKind kind) { return Info(kind).group; }
bool IsMatrixKind(OpKind kind) { return Info(kind).matrix; }

bool ParseOpKind(std::string_view name, OpKind* out) {
  std::string key = ToLower(Trim(name));
  for (const KindInfo& info : kKinds) {
    if (key == info.name) {
      *out = info.kind;
      return true;
    }
  }
  return false;
}

double Operator::flops() const {
  // Depthwise convolutions do arithmetic too, though memory bounds them.
  if (!IsMatrixKind(kind) && kind != OpKind::kDepthwise) return 0;
  double per_repeat = 2 * m * n * k * groups;
  // A fused attention kernel computes both products: scores (m x n over k) and values.
  if (kind == OpKind::kFusedAttention) per_repeat *= 2;
  // Fused kernels skip the masked half of a causal score matrix; unfused ones compute it all.
  if (causal && kind == OpKind::kFusedAttention) per_repeat /= 2;
  return per_repeat * repeats;
}

double Operator::weight_elements() const {
  switch (kind) {
    case OpKind::kGemm:
    case OpKind::kConv:
    case OpKind::kDepthwise:
      return n * k * groups * repeats;  // identical layers, each with its own weights
    case OpKind::kGemmSequential:
    case OpKind::kGemmStep:
      return n * k * groups;  // one weight matrix applied at every step of the recurrence
    default:
      return 0;
  }
}

}  // namespace cloudfit
