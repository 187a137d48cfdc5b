#include "estimate/llm_step_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "estimate/transformer_math.h"
#include "estimate/transformer_ops.h"

namespace cloudfit {

namespace {

// The operators of one decoded token per sequence attending to `context` tokens.
std::vector<Operator> DecodeOperators(const Model& m, TransformerOpsOptions o, double context) {
  o.seq_len = 1;
  o.key_len = std::max(1.0, context);
  // Fused decode attention (paged attention, flash decoding) reads the cache once per
  // key/value head; without it (llama.cpp's default before FlashAttention, `-fa` off in
  // llama-bench; eager PyTorch) each query head reads its key/value head again.
  o.kv_per_query_head = true;
  o.causal = false;
  o.head = TransformerHead::kLogits;
  o.embeddings = true;
  return TransformerOperators(m, o);
}

// Whether `longer` (the operators at two attended tokens) differs from `shorter` (at one) only
// in fields that double, so that the list at any length is `shorter` with those fields
// multiplied by it. Appends the operators with such fields, and which, to `scaled`.
bool ScalesWithContext(const std::vector<Operator>& shorter, const std::vector<Operator>& longer,
                       std::vector<ContextScaledOperator>* scaled) {
  if (shorter.size() != longer.size()) return false;
  for (size_t i = 0; i < shorter.size(); ++i) {
    const Operator& a = shorter[i];
    const Operator& b = longer[i];
    if (a.kind != b.kind || a.groups != b.groups || a.repeats != b.repeats || a.m != b.m) {
      return false;
    }
    ContextScaledOperator c;
    c.index = i;
    auto doubles = [](double x, double y, bool* flag) {
      *flag = x != y;
      return x == y || y == 2 * x;
    };
    if (!doubles(a.n, b.n, &c.n) || !doubles(a.k, b.k, &c.k) ||
        !doubles(a.read_elements, b.read_elements, &c.read) ||
        !doubles(a.written_elements, b.written_elements, &c.written)) {
      return false;
    }
    if (c.n || c.k || c.read || c.written) scaled->push_back(c);
  }
  return true;
}

}  // namespace

std::string InferenceSoftware(const Workload& w) {
  if (!w.software.empty()) return w.software;
  const std::string& engine = w.engine_profile.name.empty() ? w.engine : w.engine_profile.name;
  if (engine == "llama.cpp" || engine == "vllm" || engine == "tensorrt-llm") return engine;
  return "pytorch";  // Hugging Face generate and other eager engines
}

LlmStepModel::LlmStepModel(const Catalog& catalog, const Workload& w, const Hardware& hw,
                           const EngineStepInputs& engine)
    : w_(w), hw_(hw), m_(w.model), engine_(engine) {
  const EfficiencyTable& eff = catalog.efficiency();
  std::string device_name = hw.has_gpu() ? hw.gpu->name : hw.cpu != nullptr ? hw.cpu->name : "";
  device_ = BuildDeviceModel(eff, hw, w.precision, w.calibration.For(device_name));
  std::string software = hw.has_gpu() ? InferenceSoftware(w) : "cpu";
  // llama.cpp multiplies FP16 matrices through cuBLAS with FP16 accumulation, which GeForce
  // boards run at twice their FP32-accumulate rate.
  if (software == "llama.cpp" && device_.fp16_acc16_flops > 0) {
    device_.matrix_flops = device_.fp16_acc16_flops;
  }
  stack_ = LoadStackProfile(eff, software, device_);
  // An engine profile that states its kernels' efficiencies against the datasheet replaces the
  // stack's: they become fractions of what this device achieves. The ratio is taken on the
  // device before any measured calibration, so that a calibration still scales the result.
  DeviceModel plain = BuildDeviceModel(eff, hw, w.precision, RateScale{});
  if (software == "llama.cpp" && plain.fp16_acc16_flops > 0) {
    plain.matrix_flops = plain.fp16_acc16_flops;
  }
  if (engine.decode_bandwidth_efficiency && plain.bandwidth > 0) {
    stack_.stream_fraction =
        *engine.decode_bandwidth_efficiency * plain.datasheet_bandwidth / plain.bandwidth;
    stack_.sm_bytes_per_s = 0;
  }
  if (engine.prefill_compute_efficiency && plain.matrix_flops > 0) {
    double fraction =
        *engine.prefill_compute_efficiency * plain.peak_matrix_flops / plain.matrix_flops;
    stack_.gemm_fraction = fraction;
    stack_.attention_fraction = std::min(stack_.attention_fraction, fraction);
  }
  comm_ = BuildCommunicationModel(eff, hw);
  devices_ = hw.has_gpu() ? hw.total_gpus() : 1;
  double bits = w.weight_bits > 0 ? w.weight_bits : BytesPerWeight(w.precision) * 8;
  device_.weight_bytes = bits / 8;
  weight_bytes_ = m_.params * bits / 8;
  kv_per_token_ = KvCacheBytesPerToken(m_, engine.kv_bytes_per_element);
  layer_hop_s_ = eff.Lookup("layer_split_hop_us", software, "*", 100) * 1e-6;
  dequantize_above_tokens_ = eff.Lookup("dequantize_above_tokens", software, "gpu", 0);
  ggml_gpu_ = hw.has_gpu() && software == "llama.cpp";
  notes_ = device_.notes;
  if (dequantize_above_tokens_ > 0 && hw.has_gpu() &&
      device_.weight_bytes < device_.activation_bytes) {
    notes_.push_back(fmt::format(
        "{} dequantizes the quantized weights to FP16 for prompt batches over {:.0f} tokens (its "
        "CUDA backend before June 2024, which public benchmarks ran); later builds multiply them "
        "in place and process prompts faster",
        software, dequantize_above_tokens_));
  }
  // A serving estimate times hundreds of decode steps; only the attended length changes from
  // one to the next. The operators that depend on it, and how, are found by building the list
  // at one and two tokens (physics_test checks the reuse against a list built afresh); a list
  // that does not scale so is built afresh for every step.
  decode_ops_ = DecodeOperators(m_, PassOptions(), 1);
  decode_ops_reusable_ =
      ScalesWithContext(decode_ops_, DecodeOperators(m_, PassOptions(), 2), &decode_context_ops_);
}

TransformerOpsOptions LlmStepModel::PassOptions() const {
  TransformerOpsOptions o;
  o.tensor_parallel = w_.layer_split ? 1 : devices_;
  o.flash_attention = w_.flash_attention;
  o.ggml_graph = ggml_gpu_;
  o.quantized_weights = device_.weight_bytes < device_.activation_bytes;
  o.ggml_quantize_rows = dequantize_above_tokens_ > 0 ? dequantize_above_tokens_
                                                      : std::numeric_limits<double>::infinity();
  return o;
}

template <typename Fn>
void LlmStepModel::ForEachDecodeOperator(double context, Fn&& fn) const {
  const double keys = std::max(1.0, context);
  if (!decode_ops_reusable_) {
    for (const Operator& op : DecodeOperators(m_, PassOptions(), context)) fn(op);
    return;
  }
  size_t next = 0;
  for (size_t i = 0; i < decode_ops_.size(); ++i) {
    if (next < decode_context_ops_.size() && decode_context_ops_[next].index == i) {
      // Built at one token, so each field that grows with the length holds its value per token.
      const ContextScaledOperator& c = decode_context_ops_[next++];
      Operator op = decode_ops_[i];
      if (c.n) op.n *= keys;
      if (c.k) op.k *= keys;
      if (c.read) op.read_elements *= keys;
      if (c.written) op.written_elements *= keys;
      fn(op);
    } else {
      fn(decode_ops_[i]);
    }
  }
}

bool LlmStepModel::language_model() const {
  return m_.family == "decoder" || m_.family == "moe" || m_.family == "encoder-decoder" ||
         (m_.family == "speech" && m_.layers > 0);
}

double LlmStepModel::TensorParallelSeconds(double tokens) const {
  if (devices_ <= 1 || w_.layer_split || !hw_.has_gpu()) return 0;
  // Two all-reduces of the hidden state per layer (after attention and after the MLP).
  return 2.0 * m_.layers * AllReduceSeconds(comm_, tokens * m_.hidden * 2, devices_);
}

PassTime LlmStepModel::DecodeStep(double batch, double context) const {
  PassTime t;
  ForEachDecodeOperator(context, [&](const Operator& op) {
    AddOperatorTime(op, batch, Pass::kInference, device_, stack_, 1, &t);
  });
  return t;
}

double LlmStepModel::DecodeStepSeconds(double batch, double context) const {
  return engine_.step_overhead_s + DecodeKernelSeconds(batch, context);
}

double LlmStepModel::PrefillSeconds(double batch, double tokens) const {
  return engine_.step_overhead_s + PrefillKernelSeconds(batch, tokens);
}

double LlmStepModel::DecodeKernelSeconds(double batch, double context) const {
  PassClock t;
  ForEachDecodeOperator(context, [&](const Operator& op) {
    AddOperatorSeconds(op, batch, Pass::kInference, device_, stack_, 1, &t);
  });
  if (w_.layer_split && devices_ > 1) {
    // Each GPU streams its layers in turn: one GPU's time for all of them, plus a hand-off at
    // every boundary.
    return t.seconds() + (devices_ - 1) * layer_hop_s_;
  }
  return t.seconds() + TensorParallelSeconds(batch);
}

double LlmStepModel::PrefillKernelSeconds(double batch, double tokens) const {
  TransformerOpsOptions o = PassOptions();
  o.seq_len = tokens;
  o.key_len = tokens;
  o.causal = true;
  o.head = TransformerHead::kLogits;
  std::vector<Operator> ops = TransformerOperators(m_, o);
  PassTime t;
  if (ggml_gpu_ && batch == 1) {
    // llama.cpp runs a prompt in micro-batches of n_ubatch tokens, each attending to the cache
    // so far (its unfused scores cover all of it, masked: n_kv grows by a micro-batch at a
    // time), at that many rows per product, and takes the logits of the last token of each
    // llama_decode call (n_batch tokens).
    const double chunks = std::ceil(tokens / kPrefillChunkTokens);
    const double per_call = kPrefillBatchTokens / kPrefillChunkTokens;
    for (double c = 0; c < chunks; ++c) {
      TransformerOpsOptions u = o;
      u.seq_len = std::min(kPrefillChunkTokens, tokens - c * kPrefillChunkTokens);
      u.key_len = c * kPrefillChunkTokens + u.seq_len;
      u.fp32_scores = true;
      if (c + 1 < chunks && std::fmod(c + 1, per_call) != 0) u.head = TransformerHead::kNone;
      t.Add(TimePass(TransformerOperators(m_, u), 1, Pass::kInference, device_, stack_));
    }
  } else {
    t = TimePass(ops, batch, Pass::kInference, device_, stack_);
  }
  const double dequantize_s = PrefillDequantizeSeconds(ops, batch, tokens);
  if (w_.layer_split && devices_ > 1) {
    // Layer-split engines feed the prompt through the GPUs in micro-batches (llama.cpp's
    // default n_ubatch is 512 tokens), so the stages overlap once there are several: a
    // pipeline of k chunks over n stages takes (k + n - 1) / (k * n) of the serial time.
    // The pipeline fills within one logical batch (n_batch, 2048 tokens).
    double total_chunks = std::ceil(batch * tokens / kPrefillChunkTokens);
    double per_batch = std::min(total_chunks, kPrefillBatchTokens / kPrefillChunkTokens);
    double serial = t.seconds() + dequantize_s;
    // Each hand-off moves a micro-batch's hidden states, in FP32 as ggml keeps them, over the
    // link between the two GPUs (through host memory where they have no peer access).
    double chunk = std::min(batch * tokens, kPrefillChunkTokens);
    double hop = layer_hop_s_;
    if (comm_.intra.bus_bytes_per_s > 0) hop += chunk * m_.hidden * 4 / comm_.intra.bus_bytes_per_s;
    return serial * (per_batch + devices_ - 1) / (per_batch * devices_) +
           total_chunks * (devices_ - 1) * hop;
  }
  return t.seconds() + dequantize_s + TensorParallelSeconds(batch * tokens);
}

double LlmStepModel::PrefillDequantizeSeconds(const std::vector<Operator>& ops, double batch,
                                              double tokens) const {
  // Only quantized weights (narrower than the activations) on a stack that dequantizes them.
  if (dequantize_above_tokens_ <= 0 || !hw_.has_gpu() ||
      device_.weight_bytes >= device_.activation_bytes) {
    return 0;
  }
  const double chunks = std::ceil(batch * tokens / kPrefillChunkTokens);
  double weights = 0, matrices = 0;
  for (const Operator& op : ops) {
    if (op.kind != OpKind::kGemm) continue;
    // Rows of the product in one micro-batch: the prompt's tokens (the last-position head has
    // one per prompt and keeps the quantized kernel).
    double rows = std::min(op.m * batch, kPrefillChunkTokens);
    if (rows <= dequantize_above_tokens_) continue;
    weights += op.weight_elements();
    matrices += std::max(1.0, op.repeats);
  }
  // Each micro-batch reads every quantized matrix and writes it back in FP16.
  double bytes = weights * (device_.weight_bytes + device_.activation_bytes);
  return chunks * (bytes / StackBandwidth(device_, stack_, stack_.stream_fraction) +
                   matrices * stack_.kernel_gap_s);
}

MemoryBreakdown LlmStepModel::Memory(double batch, double context) const {
  MemoryBreakdown mem;
  mem.capacity_bytes = device_.memory_bytes;
  mem.weights_bytes = WeightsPerDevice();
  mem.kv_cache_bytes = batch * context * kv_per_token_ / shards();
  // Working set of one layer during prefill (chunked at 2,048 tokens) and the last-token
  // logits in fp32.
  double chunk = std::min<double>(context, 2048);
  ActivationOptions o;
  o.flash_attention = true;
  o.dropout = false;
  mem.activations_bytes =
      LayerActivationBytes(m_, chunk, 1, o) + batch * static_cast<double>(m_.vocab) * 4;
  if (devices_ > 1) mem.comm_buffers_bytes = kNcclBufferBytes;
  if (hw_.has_gpu()) mem.runtime_bytes = kCudaRuntimeBytes;
  return mem;
}

double LlmStepModel::KvCapacityTokens() const {
  MemoryBreakdown fixed = Memory(1, 0);
  double budget = engine_.memory_share_of_free
                      ? (device_.memory_bytes - fixed.total_bytes()) * engine_.memory_share
                      : device_.memory_bytes * engine_.memory_share - fixed.total_bytes();
  return std::max(0.0, budget) / (kv_per_token_ / shards());
}

}  // namespace cloudfit
