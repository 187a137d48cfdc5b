// Training and fine-tuning: memory per device by component, time per optimizer step by
// component, and the parallel layout when the model does not fit one device.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"
#include "estimate/transformer_math.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// Activation bytes per forward FLOP for models given only by per-sample FLOPs (CNNs, U-Nets),
// 16-bit activations: fitted so ResNet-50 at 224 px stores ~50 MB per sample (8.2 GFLOPs),
// consistent with NVIDIA's DeepLearningExamples training it at batch 256 in AMP on 16 GB V100s
// (shared/calibration/train_throughput.csv rows with batch_size_per_gpu 256).
constexpr double kActivationBytesPerFlop = 0.006;
// The optimizer touches each parameter's states once per step; bytes read + written per
// parameter for mixed-precision AdamW: fp32 master, m, v and 16-bit grad read (14), master,
// m, v and the 16-bit weight written (14).
double OptimizerTrafficBytesPerParam(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW: return 28;
    case Optimizer::kSgdMomentum: return 20;
    case Optimizer::kAdafactor: return 14;
    case Optimizer::kAdam8bit: return 16;
  }
  return 28;
}

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
    case Optimizer::kAdamW: moments = 2 * state; break;
    case Optimizer::kSgdMomentum: moments = state; break;
    // Adafactor keeps factored second moments: rows + columns, negligible per parameter.
    case Optimizer::kAdafactor: moments = 0.05 * state; break;
    case Optimizer::kAdam8bit: moments = 2; break;  // two 8-bit moments
  }
  return {weight, weight, master + moments};
}

struct Plan {
  Layout layout;
  MemoryBreakdown memory;
  TimeBreakdown time;
  double samples_per_s = 0;
  std::string bottleneck;
};

class TrainingModel {
 public:
  TrainingModel(const Catalog& catalog, const Workload& w, const Hardware& hw)
      : catalog_(catalog), w_(w), hw_(hw), m_(w.model) {
    // Transformers are costed from their shape; the efficiency class may be finer (the
    // transformer-xl class covers memory attention and adaptive softmax the shape misses).
    transformer_ = m_.layers > 0 && m_.hidden > 0;
    rates_ = WorkloadRates(w, hw);
    lora_ = w.kind == WorkloadKind::kLora || w.kind == WorkloadKind::kQlora;
    wide_ = w.precision == NumericFormat::kFp32 || w.precision == NumericFormat::kTf32;
    seq_ = transformer_ ? std::max(1, w.seq_len) : 1;
    const EfficiencyTable& eff = catalog.efficiency();
    std::string cls = ComputeClass(m_);
    // Convolutions, GEMMs and recurrent kernels reach different fractions of the same peak.
    compute_eff_ = ClassComputeEfficiency(eff, rates_, cls, &compute_row_);
    if (transformer_) {
      // Matrix multiplies reach more of the peak as they grow: a transformer's GEMMs are about
      // hidden-sized, so efficiency rises as h / (h + h_half) with a fitted h_half. Normalised at
      // h = 1024 (BERT-large), so the per-architecture efficiencies keep their meaning there.
      double half = eff.Lookup("gemm_half_size", "*", "*", cls, 0);
      if (half > 0) {
        double h = m_.hidden;
        compute_eff_ = std::min(1.0, compute_eff_ * (h / (h + half)) / (1024.0 / (1024.0 + half)));
      }
    }
    bandwidth_eff_ = eff.Lookup("bandwidth_efficiency", rates_.architecture, "*", "*", 0.8);
    traffic_factor_ = eff.Lookup("activation_traffic", "*", "*", cls, 3);
    flops_per_byte_ = eff.Lookup("flops_per_byte", "*", "*", cls, 50);
    // Overlap of gradient communication with computation: PyTorch DDP and FSDP launch bucketed
    // collectives while backward runs (Li et al., VLDB 2020; Zhao et al., VLDB 2023), hiding
    // most of it when there is enough computation to hide behind. 0.9 by assumption.
    overlap_ = eff.Lookup("allreduce_overlap", "*", "*", "*", 0.9);
    dp_overhead_ = eff.Lookup("sync_seconds_per_doubling", "*", "*", "*", 0.0);
  }

  double ActivationScale() const { return wide_ ? 2.0 : 1.0; }

  double ForwardFlopsPerSample() const {
    if (transformer_) {
      bool causal = m_.family == "decoder" || m_.family == "moe";
      return ForwardFlopsPerToken(m_, seq_, causal) * seq_;
    }
    double scale = 1;
    if (w_.resolution > 0 && m_.resolution > 0) {
      scale = std::pow(static_cast<double>(w_.resolution) / m_.resolution, 2);
    }
    return m_.gflops_per_sample.value_or(0) * 1e9 * scale;
  }

  // Forward + backward (+ recomputed forward) FLOPs per sample.
  double TrainFlopsPerSample() const {
    double passes = lora_ ? 2 : 3;  // frozen weights need no weight gradients
    if (w_.recompute == Recompute::kFull) passes += 1;
    return ForwardFlopsPerSample() * passes;
  }

  double TrainableParams() const {
    return lora_ ? LoraParams(m_, w_.lora_targets, w_.lora_rank) : m_.params;
  }

  MemoryBreakdown Memory(const Layout& l) const {
    MemoryBreakdown mem;
    mem.capacity_bytes = rates_.memory_bytes;
    double shard = static_cast<double>(l.tensor_parallel) * l.pipeline_parallel;
    double dp = l.data_parallel;
    BytesPerParam bpp = TrainableBytes(w_);
    if (lora_) {
      double base_bytes;
      if (w_.kind == WorkloadKind::kQlora) {
        double embedding = static_cast<double>(m_.vocab) * m_.hidden * (m_.tied_embeddings ? 1 : 2);
        base_bytes = (m_.params - embedding) * kNf4BitsPerWeight / 8 + embedding * 2;
      } else if (w_.precision == NumericFormat::kInt8) {
        // LLM.int8: linear weights in 8 bits, embeddings in 16.
        double embedding = static_cast<double>(m_.vocab) * m_.hidden * (m_.tied_embeddings ? 1 : 2);
        base_bytes = (m_.params - embedding) * 1 + embedding * 2;
      } else {
        base_bytes = m_.params * (wide_ ? 4 : 2);
      }
      double adapters = TrainableParams();
      // PEFT keeps adapter weights in fp32 (autocast_adapter_dtype) with fp32 grads and Adam.
      mem.weights_bytes = (base_bytes + adapters * 4) / shard;
      mem.gradients_bytes = adapters * 4 / shard;
      mem.optimizer_bytes = adapters * (w_.optimizer == Optimizer::kAdamW ? 8 : 4) / shard;
    } else {
      double p = m_.params / shard;
      mem.weights_bytes = p * bpp.weights / (l.zero_stage >= 3 ? dp : 1);
      mem.gradients_bytes = p * bpp.gradients / (l.zero_stage >= 2 ? dp : 1);
      mem.optimizer_bytes = p * bpp.optimizer / (l.zero_stage >= 1 ? dp : 1);

    }
    mem.activations_bytes = Activations(l) * ActivationScale();
    if (!lora_ && l.zero_stage >= 3 && dp > 1 && m_.layers > 0) {
      // ZeRO-3 gathers one layer's full weights at a time (prefetch keeps about two).
      mem.comm_buffers_bytes += 2 * (m_.params / m_.layers) * bpp.weights / l.tensor_parallel;
    }
    if (hw_.total_gpus() > 1) {
      mem.comm_buffers_bytes += kNcclBufferBytes;
      if (dp > 1 && !lora_) {
        mem.comm_buffers_bytes += l.zero_stage == 0
                                      ? mem.gradients_bytes  // DDP bucket copies of the grads
                                      : std::min(mem.gradients_bytes, kZeroReduceBucketBytes);
      }
    }
    if (hw_.has_gpu()) {
      mem.runtime_bytes = kCudaRuntimeBytes +
                          kAllocatorSlack * (mem.activations_bytes + mem.gradients_bytes);
    }
    return mem;
  }

  // Activation bytes held by one device (16-bit elements).
  double Activations(const Layout& l) const {
    double b = l.micro_batch;
    if (!transformer_) {
      double per_sample = ForwardFlopsPerSample() * kActivationBytesPerFlop;
      if (w_.recompute == Recompute::kFull) per_sample *= 0.25;  // checkpoints at block edges
      return per_sample * b;
    }
    ActivationOptions o;
    o.tensor_parallel = l.tensor_parallel;
    o.sequence_parallel = l.tensor_parallel > 1;
    o.recompute = w_.recompute;
    o.flash_attention = w_.flash_attention;
    o.dropout = UsesDropout(m_);
    // 1F1B pipelining: the first stage holds p micro-batches of L/p layers = L layers' worth.
    double layers = m_.layers;
    double bytes = LayerActivationBytes(m_, seq_, b, o) * layers;
    if (w_.recompute == Recompute::kFull) {
      ActivationOptions working = o;
      working.recompute = Recompute::kNone;
      bytes += LayerActivationBytes(m_, seq_, b, working);
    }
    if (m_.family == "decoder" || m_.family == "moe") {
      // Logits for the loss: 16-bit logits plus the fp32 copy the cross-entropy upcasts to.
      bytes += seq_ * b * static_cast<double>(m_.vocab) * 6 / l.tensor_parallel;
    }
    if (w_.kind == WorkloadKind::kLora || w_.kind == WorkloadKind::kQlora) {
      bytes += seq_ * b * w_.lora_rank * 2.0 * 7 * m_.layers;  // adapter intermediates
    }
    return bytes;
  }

  TimeBreakdown StepTime(const Layout& l, std::string* bottleneck) const {
    TimeBreakdown t;
    double devices = static_cast<double>(l.data_parallel) * l.tensor_parallel * l.pipeline_parallel;
    double flops_micro = TrainFlopsPerSample() * l.micro_batch * l.data_parallel / devices;
    double weights_on_device = Memory(l).weights_bytes;
    double traffic_micro;
    if (transformer_) {
      traffic_micro = Activations(l) * ActivationScale() * traffic_factor_ / l.pipeline_parallel;
      traffic_micro += 3 * weights_on_device;  // read forward, read backward, write gradients
    } else {
      traffic_micro = flops_micro / flops_per_byte_;
    }
    double micro_compute = flops_micro / (rates_.peak_flops * compute_eff_);
    double micro_memory = traffic_micro / (rates_.bandwidth_bytes_per_s * bandwidth_eff_);
    int micro_steps = l.grad_accumulation;
    t.compute_s = micro_compute * micro_steps;
    t.memory_s = micro_memory * micro_steps;
    double trainable_on_device = TrainableParams() / (l.tensor_parallel * l.pipeline_parallel) /
                                 (l.zero_stage >= 1 ? l.data_parallel : 1);
    t.optimizer_s = trainable_on_device * OptimizerTrafficBytesPerParam(w_.optimizer) /
                    (rates_.bandwidth_bytes_per_s * bandwidth_eff_);
    double busy = t.compute_s + t.memory_s;
    // Phases: the forward pass is one of the passes counted in TrainFlopsPerSample.
    double passes = (lora_ ? 2 : 3) + (w_.recompute == Recompute::kFull ? 1 : 0);
    t.forward_s = busy / passes;
    t.backward_s = busy - t.forward_s;
    // Data-parallel gradient all-reduce: ring moves 2(N-1)/N of the bytes; overlapped with the
    // backward pass (two thirds of the step's work) up to the fitted overlap fraction.
    if (l.data_parallel > 1 && hw_.has_gpu()) {
      double grad_bytes = TrainableParams() / (l.tensor_parallel * l.pipeline_parallel) *
                          (lora_ ? 4 : (wide_ ? 4 : 2));
      double n = l.data_parallel;
      double volume = 2 * (n - 1) / n * grad_bytes * (l.zero_stage >= 3 ? 1.5 : 1);
      double link = hw_.intra_node_bytes_per_s;
      int gpus_per_node = static_cast<int>(std::ceil(hw_.gpus_per_node));
      if (l.data_parallel * l.tensor_parallel * l.pipeline_parallel > gpus_per_node) {
        link = std::min(link, hw_.inter_node_bytes_per_s /
                                  std::max(1, gpus_per_node / (l.tensor_parallel * l.pipeline_parallel)));
      }
      double comm = volume / link;
      // ZeRO-3/FSDP gathers the weights again for every micro-step, and prefetches them during
      // the forward and backward passes; plain data parallelism reduces once per step, during
      // the last backward pass.
      double hidden_behind = busy * 2.0 / 3.0 / micro_steps;
      if (l.zero_stage >= 3) {
        comm *= micro_steps;
        hidden_behind = busy;
      }
      t.communication_s += std::max(0.0, comm - overlap_ * hidden_behind);
    }
    if (l.tensor_parallel > 1 && transformer_) {
      double tp = l.tensor_parallel;
      double per_allreduce = 2 * (tp - 1) / tp * seq_ * l.micro_batch * m_.hidden * 2;
      t.communication_s += 4 * m_.layers / l.pipeline_parallel * per_allreduce /
                           hw_.intra_node_bytes_per_s * micro_steps;
    }
    if (l.pipeline_parallel > 1) {
      t.bubble_s = (l.pipeline_parallel - 1.0) / micro_steps * busy;
    }
    t.step_s = busy + t.optimizer_s + t.communication_s + t.bubble_s;
    if (devices > 1) {
      // Synchronisation beyond the all-reduce bytes (collective launch latency, stragglers,
      // framework bookkeeping): a fitted time per step for each doubling of the ranks. Fixed
      // in seconds, so it weighs on short steps and fades on long ones.
      double sync = dp_overhead_ * std::log2(devices);
      t.communication_s += sync;
      t.step_s += sync;
    }
    if (w_.loader_samples_per_core_s && hw_.vcpus_per_node > 0) {
      double cap = *w_.loader_samples_per_core_s * hw_.vcpus_per_node * hw_.nodes;
      t.input_s = l.global_batch / cap;
    }
    if (w_.storage_gb_s && w_.data_gb > 0 && w_.dataset_samples > 0) {
      // Reading the samples: dataset bytes per sample at the storage's rate.
      double bytes_per_sample = w_.data_gb * 1e9 / w_.dataset_samples;
      t.input_s = std::max(t.input_s, l.global_batch * bytes_per_sample / (*w_.storage_gb_s * 1e9));
    }
    std::pair<double, const char*> parts[] = {{t.compute_s, "compute"},
                                              {t.memory_s, "memory bandwidth"},
                                              {t.communication_s, "communication"},
                                              {t.bubble_s, "pipeline bubble"},
                                              {t.optimizer_s, "optimizer step"},
                                              {t.input_s, "input pipeline"}};
    auto worst = std::max_element(std::begin(parts), std::end(parts));
    *bottleneck = worst->second;
    if (t.input_s > t.step_s) t.step_s = t.input_s;
    return t;
  }

  Status Choose(Plan* out, std::vector<std::string>* notes) const {
    int devices = hw_.has_gpu() ? hw_.total_gpus() : 1;
    int per_node = hw_.has_gpu() ? static_cast<int>(std::ceil(hw_.gpus_per_node)) : 1;
    std::vector<int> tps, pps;
    if (w_.tensor_parallel > 0) tps = {w_.tensor_parallel};
    else for (int t = 1; t <= per_node; t *= 2) tps.push_back(t);
    if (w_.pipeline_parallel > 0) pps = {w_.pipeline_parallel};
    else for (int p = 1; p <= devices; p *= 2) pps.push_back(p);
    bool found = false;
    bool any = false;
    Plan best, smallest;
    // ZeRO stage: the user's, or each of them (the stage only matters with data parallelism).
    std::vector<int> zeros;
    if (w_.zero_stage >= 0) zeros = {w_.zero_stage};
    else zeros = {0, 1, 2, 3};
    for (int zero : zeros)
    for (int tp : tps) {
      for (int pp : pps) {
        if (devices % (tp * pp) != 0) continue;
        if (w_.zero_stage < 0 && zero > 0 && devices / (tp * pp) == 1) continue;
        if (transformer_ && tp > 1 && (m_.heads % tp != 0)) continue;
        if (pp > 1 && (m_.layers == 0 || m_.layers < pp)) continue;
        if (!transformer_ && (tp > 1 || pp > 1)) continue;
        Layout l;
        l.zero_stage = zero;
        l.tensor_parallel = tp;
        l.pipeline_parallel = pp;
        l.data_parallel = devices / (tp * pp);
        Status s = Batches(&l);
        // With only a global batch given, take the largest micro-batch that fits; the rest
        // becomes gradient accumulation.
        while (s.ok() && w_.micro_batch == 0 && l.micro_batch > 1 && !Memory(l).fits()) {
          Layout smaller = l;
          smaller.micro_batch = l.micro_batch / 2;
          if (l.global_batch % (smaller.micro_batch * l.data_parallel) != 0) break;
          smaller.grad_accumulation = l.global_batch / (smaller.micro_batch * l.data_parallel);
          l = smaller;
        }
        if (!s.ok()) {
          if (w_.tensor_parallel > 0 || w_.pipeline_parallel > 0 || tps.size() * pps.size() == 1) {
            return s;
          }
          continue;
        }
        Plan p;
        p.layout = l;
        p.memory = Memory(l);
        p.time = StepTime(l, &p.bottleneck);
        p.samples_per_s = l.global_batch / p.time.step_s;
        if (!any || p.memory.total_bytes() < smallest.memory.total_bytes()) smallest = p;
        any = true;
        if (p.memory.fits() && (!found || p.samples_per_s > best.samples_per_s)) {
          best = p;
          found = true;
        }
      }
    }
    if (!any) {
      return Status::InvalidArgument(fmt::format(
          "tp/pp: no layout of {} devices divides the model ({} heads, {} layers) and the batch",
          devices, m_.heads, m_.layers));
    }
    *out = found ? best : smallest;
    if (!found) {
      notes->push_back(fmt::format(
          "does not fit: needs {:.1f} GiB per device, has {:.1f} GiB", smallest.memory.total_bytes() / kGiB,
          smallest.memory.capacity_bytes / kGiB));
    }
    return Status::OK();
  }

  // Fills micro-batch, global batch and gradient accumulation for a layout, or says why the
  // batch does not divide.
  Status Batches(Layout* l) const {
    int dp = l->data_parallel;
    int micro = w_.micro_batch;
    int global = w_.global_batch;
    if (micro == 0 && global == 0) micro = transformer_ ? 1 : 32;
    if (micro == 0) {
      if (global % dp != 0) {
        return Status::InvalidArgument(fmt::format(
            "batch: the global batch {} does not divide over {} data-parallel replicas", global, dp));
      }
      micro = global / dp;
      // A pipeline needs p micro-batches in flight, and fills best with many: Megatron-LM's
      // default micro-batch of 1.
      if (l->pipeline_parallel > 1) micro = 1;
    }
    if (global == 0) global = micro * dp;
    if (global % (micro * dp) != 0) {
      return Status::InvalidArgument(fmt::format(
          "batch: the global batch {} is not a multiple of micro_batch {} x {} data-parallel "
          "replicas",
          global, micro, dp));
    }
    l->micro_batch = micro;
    l->global_batch = global;
    l->grad_accumulation = global / (micro * dp);
    if (l->pipeline_parallel > 1 && l->grad_accumulation < l->pipeline_parallel) {
      // A pipeline needs at least p micro-batches in flight to fill.
      return Status::InvalidArgument(fmt::format(
          "batch: pipeline parallel {} needs at least {} micro-batches per step; raise batch",
          l->pipeline_parallel, l->pipeline_parallel));
    }
    return Status::OK();
  }

  double SamplesPerSecondOnOneDevice(const Layout& like) const {
    Layout one;
    one.micro_batch = like.micro_batch;
    one.global_batch = like.micro_batch * like.grad_accumulation;
    one.grad_accumulation = like.grad_accumulation;
    std::string unused;
    return one.global_batch / StepTime(one, &unused).step_s;
  }

  bool transformer() const { return transformer_; }
  int seq() const { return seq_; }
  const DeviceRates& rates() const { return rates_; }
  double compute_eff() const { return compute_eff_; }
  double bandwidth_eff() const { return bandwidth_eff_; }
  const EfficiencyFactor* compute_row() const { return compute_row_; }

 private:
  const Catalog& catalog_;
  const Workload& w_;
  const Hardware& hw_;
  const Model& m_;
  DeviceRates rates_;
  bool transformer_ = false;
  bool lora_ = false;
  bool wide_ = false;
  int seq_ = 1;
  double compute_eff_ = 0.5;
  double bandwidth_eff_ = 0.8;
  double traffic_factor_ = 3;
  double flops_per_byte_ = 50;
  double overlap_ = 0.7;
  double dp_overhead_ = 0;
  const EfficiencyFactor* compute_row_ = nullptr;
};

double StepsForAmount(const Workload& w, const Layout& l, int seq, bool transformer,
                      std::vector<std::string>* notes) {
  double per_step_samples = l.global_batch;
  if (w.tokens > 0 && transformer) return w.tokens / (per_step_samples * seq);
  if (w.samples > 0) return w.samples / per_step_samples;
  if (w.epochs > 0 && w.dataset_samples > 0) return w.epochs * w.dataset_samples / per_step_samples;
  if (w.steps > 0) return w.steps;
  notes->push_back("no amount of work given (tokens, samples, epochs or steps): total time is for 1,000 steps");
  return 1000;
}

}  // namespace

Status EstimateTraining(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        Estimate* e) {
  TrainingModel model(catalog, w, hw);
  e->runs_on_gpu = hw.has_gpu();
  if (!hw.has_gpu() && hw.vcpus_per_node <= 0) {
    return Status::InvalidArgument("--instance: CPU execution needs an instance with vCPUs");
  }
  Plan plan;
  Status s = model.Choose(&plan, &e->notes);
  if (!s.ok()) return s;
  e->layout = plan.layout;
  e->memory = plan.memory;
  e->fits = plan.memory.fits();
  e->time = plan.time;
  e->bottleneck = plan.bottleneck;
  double samples_per_s = plan.samples_per_s;
  if (model.transformer()) {
    e->throughput = samples_per_s * model.seq();
    e->throughput_unit = "tokens/s";
  } else {
    e->throughput = samples_per_s;
    e->throughput_unit = "samples/s";
  }
  int devices = hw.has_gpu() ? hw.total_gpus() : 1;
  if (devices > 1) {
    e->scaling_efficiency = samples_per_s / (devices * model.SamplesPerSecondOnOneDevice(plan.layout));
  }
  double steps = StepsForAmount(w, plan.layout, model.seq(), model.transformer(), &e->notes);
  e->total_s = steps * plan.time.step_s;

  const DeviceRates& r = model.rates();
  AddTerm(e, "peak", r.peak_flops / 1e12, "TFLOP/s",
          fmt::format("dense {} peak of {}", r.precision_key, hw.has_gpu() ? hw.gpu->name : "the CPUs"));
  AddTerm(e, "compute efficiency", model.compute_eff(), "",
          model.compute_row() ? "data/efficiency.csv, fitted to " + model.compute_row()->fitted_to
                              : "default (no matching row)");
  AddTerm(e, "bandwidth", r.bandwidth_bytes_per_s / 1e9, "GB/s",
          fmt::format("x efficiency {}", model.bandwidth_eff()));
  AddTerm(e, "layout", devices, "devices",
          fmt::format("data {} (ZeRO {}) x tensor {} x pipeline {}; micro-batch {}, global batch "
                      "{}, {} accumulation steps",
                      plan.layout.data_parallel, plan.layout.zero_stage, plan.layout.tensor_parallel,
                      plan.layout.pipeline_parallel, plan.layout.micro_batch,
                      plan.layout.global_batch, plan.layout.grad_accumulation));
  AddTerm(e, "weights", plan.memory.weights_bytes / kGiB, "GiB",
          w.kind == WorkloadKind::kQlora ? "NF4 base (4.127 bits/param) + fp32 adapters"
          : w.kind == WorkloadKind::kLora ? "frozen base + fp32 adapters"
                                          : "params x bytes/param / (tensor x pipeline [x data under ZeRO-3])");
  AddTerm(e, "gradients", plan.memory.gradients_bytes / kGiB, "GiB", "sharded by ZeRO >= 2");
  AddTerm(e, "optimizer", plan.memory.optimizer_bytes / kGiB, "GiB",
          "mixed-precision Adam K=12 bytes/param (ZeRO paper; DeepSpeed's 18 adds fp32 grads), sharded by ZeRO >= 1");
  AddTerm(e, "activations", plan.memory.activations_bytes / kGiB, "GiB",
          model.transformer() ? "Korthikanti et al. 2022 per layer x layers (+ logits)"
                              : "0.006 bytes per forward FLOP x micro-batch");
  AddTerm(e, "compute time", plan.time.compute_s, "s/step", "FLOPs / (peak x efficiency)");
  AddTerm(e, "memory time", plan.time.memory_s, "s/step", "traffic / (bandwidth x efficiency)");
  AddTerm(e, "communication", plan.time.communication_s, "s/step",
          "ring all-reduce 2(N-1)/N x gradient bytes over " +
              (hw.intra_node_link.empty() ? std::string("-") : hw.intra_node_link) +
              ", not hidden behind backward");
  AddTerm(e, "step", plan.time.step_s, "s", "sum of the above + optimizer + bubble");
  return Status::OK();
}

}  // namespace cloudfit
