// Memory per device of a training layout, by component: weights, gradients and optimizer state
// as the ZeRO paper counts them (sharded by ZeRO stage and tensor/pipeline parallelism), saved
// activations (Korthikanti et al. 2022 for transformers; the saved outputs of the operator list
// otherwise), logits for the loss, communication buffers and the runtime; with the memory
// recipes of real fine-tuning runs (frozen 4- or 8-bit bases, FSDP-sharded frozen bases,
// optimizer in backward, paged and offloaded optimizer states, chunked or fused cross-entropy,
// activation offload).
#include <algorithm>
#include <cmath>

#include "estimate/estimate_internal.h"
#include "estimate/training_plan.h"
#include "estimate/transformer_math.h"
#include "estimate/transformer_ops.h"

namespace cloudfit {

namespace {

struct BytesPerParam {
  double weights;
  double gradients;
  double optimizer;
};

// What each trainable parameter costs, as the ZeRO paper counts it for mixed-precision Adam:
// 2 (16-bit weights) + 2 (16-bit gradients) + K=12 (fp32 master, momentum, variance) = 16.
// DeepSpeed's and Megatron's estimators say 18 because they keep fp32 gradients; cloudfit
// follows the ZeRO paper so its Figure 1 comes out exactly, and says so in --explain.
BytesPerParam TrainableBytes(const Workload& w) {
  bool wide = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
  double weight = wide ? 4 : 2;
  double master = (!wide && w.master_weights) ? 4 : 0;
  double state = wide || w.master_weights ? 4 : 2;  // bytes per optimizer moment
  double moments = 0;
  switch (w.optimizer) {
    case Optimizer::kAdamW:
      moments = 2 * state;
      break;
    case Optimizer::kSgdMomentum:
      moments = state;
      break;
    // Adafactor keeps factored second moments: rows + columns, negligible per parameter.
    case Optimizer::kAdafactor:
      moments = 0.05 * state;
      break;
    case Optimizer::kAdam8bit:
      moments = 2;
      break;  // two 8-bit moments
  }
  return {weight, weight, master + moments};
}

// Bytes per logit (one vocabulary entry of one token) at the loss's peak, which is the peak of
// a language model's step: every layer's activations are still saved when it comes.
//
// standard: PyTorch's cross_entropy on 16-bit logits as Hugging Face's causal-LM loss calls it
// (transformers' ForCausalLMLoss: `logits.float()`, then F.cross_entropy = log_softmax +
// nll_loss; log_softmax saves its FP32 output for backward, derivatives.yaml). Forward holds the
// 16-bit logits (2), their FP32 copy (4) and the saved output (4): 10. Backward begins with the
// saved output (4), the dense gradient nll_loss writes (4) and the gradient log_softmax writes
// from them (4): 12, the larger. In FP32 the copy is the logits themselves: forward 8, backward
// 12. (A caller that keeps the model's output object alive through backward adds the 2 of the
// 16-bit logits; transformers before 4.45 upcast inside the model and copied the shifted
// logits, 14-16.)
// chunked: torchtune's CEWithChunkedOutputLoss with its compute_cross_entropy compiled, as its
// recipes run it: the fused upcast and loss keep the 16-bit chunks and recompute the rest, so
// the FP32 copy of one chunk exists at a time: 2 + 4/chunks (twice that in FP32).
// fused: Liger's fused linear cross-entropy never materialises the logits whole: about one
// chunk of both (6/chunks, twice in FP32).
double LogitBytesPerElement(const Workload& w) {
  bool wide = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
  double chunks = std::max(1, w.loss_chunks);
  switch (w.cross_entropy) {
    case CrossEntropy::kStandard:
      return 12;
    case CrossEntropy::kChunked:
      return (2 + 4 / chunks) * (wide ? 2 : 1);
    case CrossEntropy::kFused:
      return 6 / chunks * (wide ? 2 : 1);
  }
  return 12;
}

// The largest single weight matrix of a transformer layer: what an optimizer stepped in backward
// holds gradients for at a time.
double LargestWeightMatrix(const Model& m) {
  double f = m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden;
  double mlp = f * m.hidden * (HasGatedMlp(m) ? 2 : 1);
  double head = static_cast<double>(m.vocab) * m.hidden;
  return std::max({mlp, head, 4.0 * m.hidden * m.hidden});
}

// What a training run's transformer layers keep, before any parallelism splits it.
ActivationOptions TrainingActivationOptions(const Workload& w) {
  ActivationOptions o;
  o.recompute = w.recompute;
  o.flash_attention = w.flash_attention;
  o.dropout = UsesDropout(w.model);
  // Unfused attention is PyTorch's eager attention here (Hugging Face transformers), whose
  // softmax runs in FP32; in FP32 training there is no 16-bit copy, which Megatron's figure fits.
  o.fp32_softmax = w.precision != NumericFormat::kFp32 && w.precision != NumericFormat::kTf32;
  return o;
}

}  // namespace

double TrainingSetup::TrainableParams() const {
  if (trainable_params_ < 0) {
    const Workload& w = *workload;
    trainable_params_ = lora ? LoraParams(w.model, w.lora_targets, w.lora_rank) : w.model.params;
  }
  return trainable_params_;
}

double GradientBytesPerParam(const Workload& w, bool lora) {
  bool wide = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
  return lora || wide ? 4 : 2;
}

KeptOutputs OperatorListOutputs(const Model& m, bool flash_attention, double spatial_scale) {
  // Every operator's output is kept for the backward pass but for those written in place, those
  // whose readers save nothing of them (freed) and an attention's score product.
  KeptOutputs kept;
  const std::vector<Operator>& ops = m.operators;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operator& op = ops[i];
    double scale = op.spatial ? spatial_scale : 1;
    if (op.when == OpWhen::kUnfusedAttention && flash_attention) continue;
    // A view and an in-place operator share their input's storage.
    if (op.kind == OpKind::kView || op.in_place) continue;
    // The score product ahead of an attention's softmax: the softmax keeps its own output for
    // backward, not its input, and a fused kernel never writes the scores at all.
    if (op.kind == OpKind::kAttention && i + 1 < ops.size() && ops[i + 1].kind == OpKind::kSoftmax)
      continue;
    double written = op.written_elements > 0 || !IsMatrixKind(op.kind) ? op.written_elements
                                                                       : op.m * op.n * op.groups;
    // Backward writes the gradient of every output, a freed one too; only the kept ones are
    // held from the forward pass to the backward.
    kept.largest = std::max(kept.largest, written * scale);
    if (op.freed) continue;
    double all_repeats = written * std::max(1.0, op.repeats) * scale;
    kept.elements += all_repeats;
    kept.index_bytes += op.saved_index_bytes * all_repeats;
  }
  return kept;
}

double TrainingActivationBytes(const TrainingSetup& s, const Layout& l) {
  const Workload& w = *s.workload;
  const Model& m = w.model;
  double b = l.micro_batch;
  double wide = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
  if (!s.transformer) {
    KeptOutputs kept = OperatorListOutputs(m, w.flash_attention, s.spatial_scale);
    // Backward differentiates one operator at a time while everything saved is still held: the
    // gradient of its output and the gradient it writes of its input live beside them, at most
    // twice the largest output (a U-Net's softmax over 4,096 latent tokens: its score matrix).
    double elements = kept.elements + 2 * kept.largest;
    double per_sample = elements * s.device.activation_bytes + kept.index_bytes;
    if (m.operators.empty()) {
      // No operator list: 0.006 bytes per forward FLOP, which puts ResNet-50 at ~50 MB per
      // sample (NVIDIA trains it at batch 256 in AMP on 16 GB V100s).
      per_sample = m.gflops_per_sample.value_or(0) * 1e9 * s.spatial_scale * 0.006 * (wide ? 2 : 1);
    }
    if (w.recompute == Recompute::kFull) per_sample *= 0.25;  // checkpoints at block edges
    return per_sample * b;
  }
  ActivationOptions o = TrainingActivationOptions(w);
  o.tensor_parallel = l.tensor_parallel;
  o.sequence_parallel = l.tensor_parallel > 1;
  // 1F1B pipelining: the first stage holds p micro-batches of L/p layers = L layers' worth.
  double layer = LayerActivationBytes(m, s.seq, b, o);
  double bytes = layer * m.layers;
  if (w.recompute == Recompute::kFull) {
    ActivationOptions working = o;
    working.recompute = Recompute::kNone;
    bytes += LayerActivationBytes(m, s.seq, b, working);
  }
  if (w.activation_offload) {
    // Saved activations stream to host memory as they are produced and back for backward; the
    // device keeps the layer being computed and the next one in flight.
    bytes = std::min(bytes, 2 * layer);
  }
  if (s.lora) bytes += s.seq * b * w.lora_rank * 2.0 * 7 * m.layers;  // adapter intermediates
  if (wide) bytes *= 2;
  if (DefaultTrainingHead(m) == TransformerHead::kLanguageModel) {
    bytes += s.seq * b * static_cast<double>(m.vocab) * LogitBytesPerElement(w) / l.tensor_parallel;
  }
  return bytes;
}

MemoryBreakdown TrainingMemory(const TrainingSetup& s, const Layout& l) {
  const Workload& w = *s.workload;
  const Model& m = w.model;
  MemoryBreakdown mem;
  mem.capacity_bytes = s.device.memory_bytes;
  double shard = static_cast<double>(l.tensor_parallel) * l.pipeline_parallel;
  double dp = l.data_parallel;
  bool wide = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
  BytesPerParam bpp = TrainableBytes(w);
  if (s.lora) {
    double embedding = static_cast<double>(m.vocab) * m.hidden * (m.tied_embeddings ? 1 : 2);
    double base_bytes;
    if (w.kind == WorkloadKind::kQlora) {
      base_bytes = (m.params - embedding) * kNf4BitsPerWeight / 8 + embedding * 2;
    } else if (w.precision == NumericFormat::kInt8) {
      // LLM.int8: linear weights in 8 bits, embeddings in 16.
      base_bytes = (m.params - embedding) * 1 + embedding * 2;
    } else {
      base_bytes = m.params * (wide ? 4 : 2);
    }
    // FSDP (ZeRO-3) shards the frozen base over the data-parallel ranks as well.
    double base_shards = shard * (l.zero_stage >= 3 ? dp : 1);
    double adapters = s.TrainableParams();
    // PEFT keeps adapter weights in fp32 (autocast_adapter_dtype) with fp32 grads and Adam.
    double state = w.optimizer == Optimizer::kAdamW      ? 8
                   : w.optimizer == Optimizer::kAdam8bit ? 2
                                                         : 4;
    mem.weights_bytes = base_bytes / base_shards + adapters * 4 / shard;
    mem.gradients_bytes = adapters * 4 / shard;
    mem.optimizer_bytes = adapters * state / shard;
  } else {
    double p = m.params / shard;
    mem.weights_bytes = p * bpp.weights / (l.zero_stage >= 3 ? dp : 1);
    mem.gradients_bytes = p * bpp.gradients / (l.zero_stage >= 2 ? dp : 1);
    mem.optimizer_bytes = p * bpp.optimizer / (l.zero_stage >= 1 ? dp : 1);
  }
  if (w.optimizer_in_backward && m.layers > 0) {
    // Each parameter is stepped as soon as its gradient exists and the gradient freed: the
    // device holds about the largest matrix's gradients at any time.
    mem.gradients_bytes =
        std::min(mem.gradients_bytes, LargestWeightMatrix(m) / shard * bpp.gradients);
  }
  if (w.optimizer_offload) {
    // ZeRO-Offload / FSDP CPU offload: states and master weights live in host memory, and
    // gradients stream there as backward produces them.
    mem.host_bytes += mem.optimizer_bytes * l.data_parallel;
    mem.optimizer_bytes = 0;
    mem.gradients_bytes = std::min(mem.gradients_bytes, kZeroReduceBucketBytes);
  }
  if (s.activation_bytes != nullptr) {
    auto [kept, added] = s.activation_bytes->try_emplace({l.tensor_parallel, l.micro_batch}, 0);
    if (added) kept->second = TrainingActivationBytes(s, l);
    mem.activations_bytes = kept->second;
  } else {
    mem.activations_bytes = TrainingActivationBytes(s, l);
  }
  if (w.activation_offload && s.transformer) {
    ActivationOptions o = TrainingActivationOptions(w);
    mem.host_bytes += LayerActivationBytes(m, s.seq, l.micro_batch, o) * m.layers * (wide ? 2 : 1);
  }
  if (!s.lora && l.zero_stage >= 3 && dp > 1 && m.layers > 0) {
    // ZeRO-3 gathers one layer's full weights at a time (prefetch keeps about two).
    mem.comm_buffers_bytes += 2 * (m.params / m.layers) * bpp.weights / l.tensor_parallel;
  }
  if (s.hardware->total_gpus() > 1) {
    mem.comm_buffers_bytes += kNcclBufferBytes;
    if (dp > 1 && !s.lora) {
      mem.comm_buffers_bytes += l.zero_stage == 0
                                    ? mem.gradients_bytes  // DDP bucket copies of the grads
                                    : std::min(mem.gradients_bytes, kZeroReduceBucketBytes);
    }
  }
  if (s.hardware->has_gpu()) {
    mem.runtime_bytes =
        kCudaRuntimeBytes + kAllocatorSlack * (mem.activations_bytes + mem.gradients_bytes);
  }
  if (w.paged_optimizer && !mem.fits()) {
    // Paged states move to host memory page by page when the device runs short.
    double spill = std::min(mem.optimizer_bytes, mem.total_bytes() - mem.capacity_bytes);
    mem.optimizer_bytes -= spill;
    mem.host_bytes += spill;
  }
  return mem;
}

}  // namespace cloudfit
