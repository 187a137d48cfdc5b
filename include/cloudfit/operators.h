// Operators: what a model's forward pass runs, one entry per kernel (or group of identical
// kernels), with the matrix sizes or the memory it touches. A step's time is the sum of its
// operators, each on its own roofline (src/estimate/op_timing.h); the backward pass and the
// optimizer are derived from the forward operators and the parameters, so a model describes
// only its forward pass.
//
// Transformers with a shape in the zoo get their operators from the shape (transformer_ops.h);
// every other model lists them in data/operators.csv, derived from its reference code by
// tools/derive_operators.py.
#ifndef CLOUDFIT_OPERATORS_H_
#define CLOUDFIT_OPERATORS_H_

#include <string>
#include <string_view>
#include <vector>

#include "cloudfit/shared_text.h"

namespace cloudfit {

enum class OpKind {
  kGemm,  // dense matrix multiply with weights: M = m x batch, N = n, K = k
  kConv,  // convolution as implicit GEMM (cuDNN): same dimensions
  // A GEMM inside a recurrence run by one library call (cuDNN's RNN): `repeats` kernels one
  // after another, whose weight gradient the library computes once over all the steps.
  kGemmSequential,
  kAttention,       // batched activation x activation matmul: groups x batch matrices of m x n x k
  kFusedAttention,  // a FlashAttention kernel: FLOPs of scores and values, little memory traffic
  kDepthwise,       // depthwise or small-group convolution: memory-bound in practice
  kNorm,            // batch/layer/group/RMS normalisation
  kActivation,      // ReLU, GELU, SiLU, sigmoid, tanh (gated: reads two inputs)
  kElementwise,     // residual add, scale, bias, dropout, concatenation copies
  kSoftmax,         // softmax over attention scores (unfused attention)
  kPooling,
  kResize,     // upsampling, pixel shuffle
  kEmbedding,  // table lookups
  kLoss,       // softmax cross-entropy or other loss over the outputs
  kLstmCell,   // the elementwise gate math of one recurrent step (sequential)
  // A GEMM with weights inside a step loop the host runs (an LSTMCell or a linear layer called
  // once per step from Python): like kGemmSequential forward, but autograd computes each step's
  // weight gradient on its own and adds it into the parameter's gradient.
  kGemmStep,
  // An indexing or view call (select, squeeze, transpose, a weight's t()) that launches no
  // kernel: host dispatch only, forward and in its autograd node. Selecting one step of a tensor
  // (`read_elements` = the whole tensor, `written_elements` = the slice) materialises the whole
  // tensor's gradient in backward: a zero fill, the slice's copy, and autograd adds it into the
  // tensor's gradient.
  kView,
};
inline constexpr int kOpKindCount = 17;

// "gemm", "conv", "gemm_sequential", ... as data/operators.csv spells them.
std::string_view OpKindName(OpKind kind);
bool ParseOpKind(std::string_view name, OpKind* out);
// Whether the kind's time is set by its arithmetic (matrix units) rather than its memory traffic.
bool IsMatrixKind(OpKind kind);
// The operator group a kind reports under in --explain and takes its efficiency from: matmul,
// conv, attention, normalization, activation, elementwise, softmax, embedding, loss, recurrent,
// view.
std::string_view OpGroupName(OpKind kind);

// Which runs execute an operator.
enum class OpWhen {
  kAlways,
  kTraining,          // dropout, stochastic depth, the loss: not at inference
  kUnfusedAttention,  // the score matrix's softmax: gone with a fused attention kernel
};

// One operator of a forward pass, per sample. Matrix kinds give m, n, k (and groups); the other
// kinds give the activation elements they read and write. Counts are per repeat.
struct Operator {
  std::string label;
  OpKind kind = OpKind::kGemm;
  double m = 0, n = 0, k = 0;
  double groups = 1;
  double repeats = 1;
  // Activation elements read and written per sample per repeat (matrix kinds may give them too:
  // a convolution's real input and output, which its m x k view overstates).
  double read_elements = 0;
  double written_elements = 0;
  OpWhen when = OpWhen::kAlways;
  // m and the element counts scale with the square of the input resolution (feature maps).
  bool spatial = false;
  // Weights that receive gradients; false for a frozen base under LoRA and for activation x
  // activation products, which have no weights.
  bool trainable = true;
  // Causal attention: fused kernels skip the masked half of the score matrix.
  bool causal = false;
  // Writes its result into its input's storage, and its backward needs nothing the write
  // destroys (ReLU(inplace=True), whose gradient reads the result; `out += identity`): it keeps
  // no tensor of its own for the backward pass.
  bool in_place = false;
  // Every reader of the output saves nothing of it for backward (a residual add, a copy or
  // concatenation, an identity dropout, a log-softmax, which keeps its own result): autograd
  // frees it once they have run, so it is not among the tensors backward holds.
  bool freed = false;
  // Bytes per output element of indices the operator saves for backward beside its output,
  // whatever the activation dtype: 8 for max pooling, which keeps the int64 index of each
  // maximum (max_pool2d_with_indices).
  double saved_index_bytes = 0;
  SharedText source;  // where the row comes from (data/operators.csv rows)

  // Forward FLOPs per sample, all repeats.
  double flops() const;
  // Parameters this operator owns: n x k x groups for each repeat of a layer with weights (one
  // matrix for all the steps of a recurrence); 0 for activation x activation products and
  // memory-bound kinds (embedding tables are counted with the model's parameters).
  double weight_elements() const;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_OPERATORS_H_
