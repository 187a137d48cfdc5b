// Training and fine-tuning: the parallel layout (data, ZeRO stage, tensor, pipeline, micro-batch)
// that fits and runs fastest, and the time of one optimizer step as the sum of its operators'
// forward, backward and recomputed passes, the optimizer update, the collectives that the
// backward pass does not hide, the pipeline bubble and the input pipeline.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string_view>

#include "estimate/estimate_internal.h"
#include "estimate/estimate_scratch.h"
#include "estimate/model_operators.h"
#include "estimate/training_plan.h"
#include "estimate/transformer_math.h"
#include "estimate/transformer_ops.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// PyTorch DDP's default gradient bucket (bucket_cap_mb = 25); apex's DDP and Horovod's fusion
// buffer are of the same order (10 M elements, 64 MB).
constexpr double kDdpBucketBytes = 25.0 * 1024 * 1024;

// The optimizer touches each parameter's states once per step; bytes read + written per
// parameter for mixed-precision AdamW: fp32 master, m, v and 16-bit grad read (14), master,
// m, v and the 16-bit weight written (14).
double OptimizerTrafficBytesPerParam(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
      return 28;
    case Optimizer::kSgdMomentum:
      return 20;
    case Optimizer::kAdafactor:
      return 14;
    case Optimizer::kAdam8bit:
      return 16;
  }
  return 28;
}

struct Plan {
  Layout layout;
  MemoryBreakdown memory;
  TimeBreakdown time;
  std::shared_ptr<const MicroBatchTime> passes;  // forward + backward (+ recompute)
  double samples_per_s = 0;
  const char* bottleneck = "";
};

class TrainingEstimator {
 public:
  TrainingEstimator(const Catalog& catalog, const Workload& w, const Hardware& hw,
                    EstimateScratch* scratch)
      : tables_(scratch != nullptr ? &scratch->For(w) : nullptr) {
    const EfficiencyTable& eff = catalog.efficiency();
    s_.workload = &w;
    s_.hardware = &hw;
    const Model& m = w.model;
    s_.device = Device(eff, w, hw);
    std::string software = w.software.empty() ? "pytorch" : w.software;
    std::string stack = hw.has_gpu() ? software : "cpu";
    s_.stack = tables_ != nullptr ? CachedStackProfile(eff, stack, s_.device, &tables_->stacks)
                                  : LoadStackProfile(eff, stack, s_.device);
    s_.comm = Communication(eff, hw);
    if (tables_ != nullptr) s_.activation_bytes = &tables_->activation_bytes;
    s_.transformer = m.layers > 0 && m.hidden > 0 && m.operators.empty();
    s_.lora = w.kind == WorkloadKind::kLora || w.kind == WorkloadKind::kQlora;
    s_.seq = s_.transformer ? std::max(1, w.seq_len) : 1;
    if (!s_.transformer && w.resolution > 0 && m.resolution > 0) {
      s_.spatial_scale = std::pow(static_cast<double>(w.resolution) / m.resolution, 2);
    }
    s_.notes = s_.device.notes;
    s_.notes.insert(s_.notes.end(), s_.comm.notes.begin(), s_.comm.notes.end());
    if (!s_.transformer) DataModelOperators(m, &s_.notes);
  }

  // The device model, kept by a scratch per GPU model and memory (a CPU's depends on the instance).
  DeviceModel Device(const EfficiencyTable& eff, const Workload& w, const Hardware& hw) const {
    auto build = [&] {
      DeviceModel d = BuildDeviceModel(eff, hw, w.precision, w.calibration.For(DeviceName(hw)));
      ApplySoftwareToolkit(eff, hw, w.cuda_version, &d);
      return d;
    };
    if (tables_ == nullptr || !hw.has_gpu()) return build();
    auto [kept, added] = tables_->devices.try_emplace({hw.gpu, hw.gpu_memory_bytes});
    if (added) kept->second = build();
    return kept->second;
  }

  // The communication model, kept by a scratch per set of links.
  CommunicationModel Communication(const EfficiencyTable& eff, const Hardware& hw) const {
    if (tables_ == nullptr) return BuildCommunicationModel(eff, hw);
    EstimateScratch::Tables::LinksKey key{
        hw.has_gpu() ? static_cast<int>(std::ceil(hw.gpus_per_node)) : 0,
        hw.nodes,
        hw.intra_link,
        hw.intra_node_bytes_per_s,
        hw.intra_node_link,
        hw.interconnect,
        hw.inter_node_bytes_per_s,
        hw.inter_node_assumed};
    auto [kept, added] = tables_->links.try_emplace(std::move(key));
    if (added) kept->second = BuildCommunicationModel(eff, hw);
    return kept->second;
  }

  static std::string DeviceName(const Hardware& hw) {
    return hw.has_gpu() ? hw.gpu->name : hw.cpu != nullptr ? hw.cpu->name : "";
  }

  const TrainingSetup& setup() const { return s_; }

  // The forward operators of one sample on one device of the layout, made once per split when
  // a scratch keeps them.
  std::shared_ptr<const std::vector<Operator>> OperatorsOf(const Layout& l) const {
    if (tables_ == nullptr) return std::make_shared<const std::vector<Operator>>(Operators(l));
    auto& kept = tables_->operators[{l.tensor_parallel, l.pipeline_parallel}];
    if (!kept) kept = std::make_shared<const std::vector<Operator>>(Operators(l));
    return kept;
  }

  // One micro-batch's passes on one device of the layout; the same on every instance type with
  // this GPU, so a scratch keeps them per GPU model. The layout search asks for thousands.
  std::shared_ptr<const MicroBatchTime> MicroBatchOf(const Layout& l) const {
    const Hardware& hw = *s_.hardware;
    if (tables_ == nullptr || !hw.has_gpu()) {
      return std::make_shared<const MicroBatchTime>(TimeMicroBatch(l));
    }
    auto& kept =
        tables_->micro_batches[{hw.gpu, l.tensor_parallel, l.pipeline_parallel, l.micro_batch}];
    if (!kept) kept = std::make_shared<const MicroBatchTime>(TimeMicroBatch(l));
    return kept;
  }

  MicroBatchTime TimeMicroBatch(const Layout& l) const {
    const Workload& w = *s_.workload;
    std::shared_ptr<const std::vector<Operator>> ops = OperatorsOf(l);
    auto time = [&](const std::vector<Operator>& list, Pass pass) {
      return TimePass(list, l.micro_batch, pass, s_.device, s_.stack, s_.spatial_scale);
    };
    PassTime forward = time(*ops, Pass::kForward);
    PassTime backward = time(*ops, Pass::kBackward);
    MicroBatchTime t;
    t.all = forward;
    t.all.Add(backward);
    t.forward_s = forward.seconds();
    t.backward_s = backward.seconds();
    if (w.recompute == Recompute::kFull) {
      t.all.Add(forward);
      t.recompute_s = forward.seconds();
    } else if (w.recompute == Recompute::kSelective && s_.transformer) {
      // Selective recomputation repeats the attention core (Korthikanti et al. section 5).
      std::vector<Operator> core;
      for (const Operator& op : *ops) {
        if (op.kind == OpKind::kAttention || op.kind == OpKind::kSoftmax ||
            op.kind == OpKind::kFusedAttention) {
          core.push_back(op);
        }
      }
      PassTime recompute = time(core, Pass::kRecompute);
      t.all.Add(recompute);
      t.recompute_s = recompute.seconds();
    }
    return t;
  }

  // The forward operators of one sample on one device of the layout.
  std::vector<Operator> Operators(const Layout& l) const {
    const Workload& w = *s_.workload;
    const Model& m = w.model;
    if (s_.transformer) {
      TransformerOpsOptions o;
      o.seq_len = s_.seq;
      // Transformer-XL attends over the segment and the memory of the previous one.
      o.key_len = m.compute_class == "transformer-xl" ? 2.0 * s_.seq : s_.seq;
      o.tensor_parallel = l.tensor_parallel;
      o.layers = static_cast<double>(m.layers) / l.pipeline_parallel;
      o.flash_attention = w.flash_attention;
      o.causal = true;
      o.dropout = UsesDropout(m);
      o.head = DefaultTrainingHead(m);
      o.lora = s_.lora;
      o.lora_targets = w.lora_targets;
      o.lora_rank = w.lora_rank;
      return TransformerOperators(m, o);
    }
    std::vector<std::string> unused;
    return OperatorsForRun(DataModelOperators(m, &unused), true, w.flash_attention);
  }

  // The time of one optimizer step of a layout, what bounds it (`bottleneck`, a static name),
  // and the micro-batch's passes it is made of (`passes`).
  TimeBreakdown StepTime(const Layout& l, const char** bottleneck,
                         std::shared_ptr<const MicroBatchTime>* passes) const {
    const Workload& w = *s_.workload;
    const Hardware& hw = *s_.hardware;
    const Model& m = w.model;
    TimeBreakdown t;
    double micro = l.micro_batch;
    *passes = MicroBatchOf(l);
    const MicroBatchTime& micro_batch = **passes;
    const PassTime& all = micro_batch.all;
    double rec_s = micro_batch.recompute_s;
    double steps = l.grad_accumulation;
    // The host launches kernels ahead of the device; a step takes the longer of the two.
    double micro_s = all.seconds();
    double busy = micro_s * steps;
    for (const auto& [name, g] : all.groups) {
      t.compute_s += g.compute_s * steps;
      t.memory_s += g.memory_s * steps;
      t.launch_s += g.overhead_s * steps;
    }
    t.launch_s += std::max(0.0, all.host_s - all.device_s) * steps;
    t.forward_s = micro_batch.forward_s * steps;
    t.backward_s = busy - t.forward_s;

    double trainable_on_device = s_.TrainableParams() / (l.tensor_parallel * l.pipeline_parallel) /
                                 (l.zero_stage >= 1 ? l.data_parallel : 1);
    if (w.optimizer_offload && hw.has_gpu()) {
      // The update runs on the host's memory bandwidth; gradients go down and weights come
      // back over PCIe.
      double host_bw = 50e9;
      if (hw.cpu) host_bw = hw.cpu->memory_bandwidth_bytes_per_s_per_socket;
      double pcie = PcieBytesPerSecond(hw.gpu->pcie_gen > 0 ? hw.gpu->pcie_gen : 3) * 0.8;
      t.optimizer_s = trainable_on_device * OptimizerTrafficBytesPerParam(w.optimizer) / host_bw +
                      trainable_on_device * 4 / pcie;
    } else {
      t.optimizer_s = trainable_on_device * OptimizerTrafficBytesPerParam(w.optimizer) /
                      StackBandwidth(s_.device, s_.stack, s_.stack.stream_fraction);
    }

    if (hw.has_gpu() && l.data_parallel > 1) {
      double params_on_device = s_.TrainableParams() / (l.tensor_parallel * l.pipeline_parallel);
      if (l.zero_stage >= 3 && !s_.lora) {
        // FSDP / ZeRO-3: every micro-step gathers the 16-bit weights for forward and again for
        // backward, and reduce-scatters the gradients; prefetching hides them behind compute.
        double bytes = params_on_device * 2;
        double per_micro = 3 * AllGatherSeconds(s_.comm, bytes, l.data_parallel);
        double first_layer = m.layers > 0 ? per_micro / m.layers : per_micro;
        t.communication_s += std::max(0.0, per_micro - micro_s) * steps + first_layer;
      } else {
        double bytes = params_on_device * GradientBytesPerParam(w, s_.lora);
        double backward_last = micro_batch.backward_s + rec_s;
        GradientSync sync = DataParallelGradientSync(s_.comm, bytes, l.data_parallel, backward_last,
                                                     kDdpBucketBytes);
        t.communication_s += sync.exposed_s;
        if (l.zero_stage >= 1 && !s_.lora) {
          // ZeRO-1/2: each rank updates its shard, then the updated 16-bit weights are
          // all-gathered; nothing is left to overlap with after the optimizer step.
          t.communication_s += AllGatherSeconds(s_.comm, params_on_device * 2, l.data_parallel);
        }
      }
    }
    if (hw.has_gpu() && l.tensor_parallel > 1 && s_.transformer) {
      // Megatron: two all-reduces of the layer's activations in forward and two in backward
      // (sequence parallelism swaps each for a reduce-scatter and an all-gather of the same
      // volume); they sit on the critical path.
      double bytes = s_.seq * micro * m.hidden * 2;
      double per_layer = 4 * AllReduceSeconds(s_.comm, bytes, l.tensor_parallel);
      if (w.recompute == Recompute::kFull) per_layer *= 1.5;
      t.communication_s += per_layer * m.layers / l.pipeline_parallel * steps;
    }
    if (l.pipeline_parallel > 1) {
      t.bubble_s = (l.pipeline_parallel - 1.0) / steps * busy;
      if (s_.transformer) {
        // Activations and their gradients cross each stage boundary once per micro-batch.
        double bytes = s_.seq * micro * m.hidden * 2;
        t.communication_s += 2 * bytes / s_.comm.intra.bus_bytes_per_s * steps;
      }
    }
    t.step_s = busy + t.optimizer_s + t.communication_s + t.bubble_s;
    if (w.loader_samples_per_core_s && hw.vcpus_per_node > 0) {
      double cap = *w.loader_samples_per_core_s * hw.vcpus_per_node * hw.nodes;
      t.input_s = l.global_batch / cap;
    }
    if (w.storage_gb_s && w.data_gb > 0 && w.dataset_samples > 0) {
      // Reading the samples: dataset bytes per sample at the storage's rate.
      double bytes_per_sample = w.data_gb * 1e9 / w.dataset_samples;
      t.input_s = std::max(t.input_s, l.global_batch * bytes_per_sample / (*w.storage_gb_s * 1e9));
    }
    std::pair<double, const char*> parts[] = {
        {t.compute_s, "compute"},        {t.memory_s, "memory bandwidth"},
        {t.launch_s, "kernel launches"}, {t.communication_s, "communication"},
        {t.bubble_s, "pipeline bubble"}, {t.optimizer_s, "optimizer step"},
        {t.input_s, "input pipeline"}};
    *bottleneck = std::max_element(std::begin(parts), std::end(parts))->second;
    if (t.input_s > t.step_s) t.step_s = t.input_s;
    return t;
  }

  // Fills micro-batch, global batch and gradient accumulation for a layout, or says why the
  // batch does not divide.
  Status Batches(Layout* l) const {
    const Workload& w = *s_.workload;
    int dp = l->data_parallel;
    int micro = w.micro_batch;
    int global = w.global_batch;
    if (micro == 0 && global == 0) micro = s_.transformer ? 1 : 32;
    if (micro == 0) {
      if (global % dp != 0) {
        return Status::InvalidArgument(
            fmt::format("batch: the global batch {} does not divide over {} data-parallel replicas",
                        global, dp));
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
      return Status::InvalidArgument(fmt::format(
          "batch: pipeline parallel {} needs at least {} micro-batches per step; raise batch",
          l->pipeline_parallel, l->pipeline_parallel));
    }
    if (w.optimizer_in_backward && l->grad_accumulation > 1) {
      return Status::InvalidArgument(
          "optimizer_in_backward: the optimizer steps during backward, so gradients cannot "
          "accumulate over micro-batches; set batch = micro_batch x data-parallel replicas");
    }
    return Status::OK();
  }

  // The step time of a plan's layout and the samples per second it gives.
  void Time(Plan* p) const {
    p->time = StepTime(p->layout, &p->bottleneck, &p->passes);
    p->samples_per_s = p->layout.global_batch / p->time.step_s;
  }

  Status Choose(Plan* out, std::vector<std::string>* notes) const {
    const Workload& w = *s_.workload;
    const Hardware& hw = *s_.hardware;
    const Model& m = w.model;
    int devices = hw.has_gpu() ? hw.total_gpus() : 1;
    int per_node = hw.has_gpu() ? static_cast<int>(std::ceil(hw.gpus_per_node)) : 1;
    std::vector<int> tps, pps;
    if (w.tensor_parallel > 0)
      tps = {w.tensor_parallel};
    else
      for (int t = 1; t <= per_node; t *= 2) tps.push_back(t);
    if (w.pipeline_parallel > 0)
      pps = {w.pipeline_parallel};
    else
      for (int p = 1; p <= devices; p *= 2) pps.push_back(p);
    std::vector<int> zeros;
    if (w.zero_stage >= 0)
      zeros = {w.zero_stage};
    else
      zeros = {0, 1, 2, 3};
    bool found = false, any = false;
    Plan best, smallest;
    for (int zero : zeros) {
      for (int tp : tps) {
        for (int pp : pps) {
          if (devices % (tp * pp) != 0) continue;
          if (w.zero_stage < 0 && zero > 0 && devices / (tp * pp) == 1) continue;
          if (s_.transformer && tp > 1 && (m.heads % tp != 0)) continue;
          if (pp > 1 && (m.layers == 0 || m.layers < pp)) continue;
          if (!s_.transformer && (tp > 1 || pp > 1)) continue;
          Layout l;
          l.zero_stage = zero;
          l.tensor_parallel = tp;
          l.pipeline_parallel = pp;
          l.data_parallel = devices / (tp * pp);
          Status st = Batches(&l);
          // With only a global batch given, take the largest micro-batch that fits; the rest
          // becomes gradient accumulation.
          while (st.ok() && w.micro_batch == 0 && l.micro_batch > 1 &&
                 !TrainingMemory(s_, l).fits() && !w.optimizer_in_backward) {
            Layout smaller = l;
            smaller.micro_batch = l.micro_batch / 2;
            if (l.global_batch % (smaller.micro_batch * l.data_parallel) != 0) break;
            smaller.grad_accumulation = l.global_batch / (smaller.micro_batch * l.data_parallel);
            l = smaller;
          }
          if (!st.ok()) {
            if (w.tensor_parallel > 0 || w.pipeline_parallel > 0 || tps.size() * pps.size() == 1) {
              return st;
            }
            continue;
          }
          Plan p;
          p.layout = l;
          p.memory = TrainingMemory(s_, l);
          bool fits = p.memory.fits();
          bool smaller = !any || p.memory.total_bytes() < smallest.memory.total_bytes();
          any = true;
          // A layout that does not fit is only ever shown as the smallest when nothing fits:
          // its time waits until then.
          if (fits) Time(&p);
          if (smaller) smallest = p;
          if (fits && (!found || p.samples_per_s > best.samples_per_s)) {
            best = p;
            found = true;
          }
        }
      }
    }
    if (!any) {
      return Status::InvalidArgument(fmt::format(
          "tp/pp: no layout of {} devices divides the model ({} heads, {} layers) and the batch",
          devices, m.heads, m.layers));
    }
    if (!found && smallest.passes == nullptr) Time(&smallest);
    *out = found ? best : smallest;
    if (!found) {
      notes->push_back(fmt::format("does not fit: needs {:.1f} GiB per device, has {:.1f} GiB",
                                   smallest.memory.total_bytes() / kGiB,
                                   smallest.memory.capacity_bytes / kGiB));
    }
    return Status::OK();
  }

  double SamplesPerSecondOnOneDevice(const Layout& like) const {
    Layout one;
    one.micro_batch = like.micro_batch;
    one.global_batch = like.micro_batch * like.grad_accumulation;
    one.grad_accumulation = like.grad_accumulation;
    const char* unused;
    std::shared_ptr<const MicroBatchTime> passes;
    return one.global_batch / StepTime(one, &unused, &passes).step_s;
  }

 private:
  EstimateScratch::Tables* tables_;  // null: nothing shared with other estimates
  TrainingSetup s_;
};

double StepsForAmount(const Workload& w, const Layout& l, int seq, bool transformer,
                      std::vector<std::string>* notes) {
  double per_step_samples = l.global_batch;
  if (w.tokens > 0 && transformer) return w.tokens / (per_step_samples * seq);
  if (w.samples > 0) return w.samples / per_step_samples;
  if (w.epochs > 0 && w.dataset_samples > 0) return w.epochs * w.dataset_samples / per_step_samples;
  if (w.steps > 0) return w.steps;
  notes->push_back(
      "no amount of work given (tokens, samples, epochs or steps): total time is for 1,000 steps");
  return 1000;
}

void ExplainTraining(const TrainingEstimator& model, const Plan& plan, const Workload& w,
                     const Hardware& hw, Estimate* e) {
  const TrainingSetup& s = model.setup();
  const DeviceModel& d = s.device;
  int devices = hw.has_gpu() ? hw.total_gpus() : 1;
  AddTerm(e, "matrix rate", d.matrix_flops / 1e12, "TFLOP/s",
          fmt::format("{} dense {} peak {:.1f} TFLOP/s x sustained clock ratio {:.2f}", d.name,
                      d.math_unit, d.peak_matrix_flops / 1e12, d.clock_ratio));
  AddTerm(e, "memory bandwidth", d.bandwidth / 1e9, "GB/s",
          fmt::format("achievable, of {:.0f} GB/s on the datasheet", d.datasheet_bandwidth / 1e9));
  AddTerm(
      e, "software efficiency", s.stack.gemm_fraction, "",
      fmt::format("{}: GEMMs {:.2f}, convolutions {:.2f}, fused attention {:.2f} of the "
                  "matrix rate; memory-bound kernels {:.2f} (reductions {:.2f}) of the "
                  "bandwidth; {:.1f} us per kernel launch, {:.1f} us host dispatch per "
                  "operator (data/efficiency.csv)",
                  s.stack.name, s.stack.gemm_fraction, s.stack.conv_fraction,
                  s.stack.attention_fraction, s.stack.stream_fraction, s.stack.reduction_fraction,
                  s.stack.kernel_gap_s * 1e6, s.stack.dispatch_s * 1e6));
  AddTerm(
      e, "layout", devices, "devices",
      fmt::format("data {} (ZeRO {}) x tensor {} x pipeline {}; micro-batch {}, global batch "
                  "{}, {} accumulation steps",
                  plan.layout.data_parallel, plan.layout.zero_stage, plan.layout.tensor_parallel,
                  plan.layout.pipeline_parallel, plan.layout.micro_batch, plan.layout.global_batch,
                  plan.layout.grad_accumulation));
  // Time by operator group, one micro-batch (forward + backward + recompute).
  for (const auto& [name, g] : plan.passes->all.groups) {
    if (g.kernels <= 0) continue;
    AddTerm(e, "operators: " + std::string(name), g.seconds() * 1e3, "ms/micro-batch",
            fmt::format("{:.0f} kernels; {:.2f} TFLOP, {:.2f} GB moved; {:.0f}% compute-bound, "
                        "{:.0f}% memory-bound, {:.0f}% launch gaps",
                        g.kernels, g.flops / 1e12, g.bytes / 1e9,
                        100 * g.compute_s / std::max(1e-12, g.seconds()),
                        100 * g.memory_s / std::max(1e-12, g.seconds()),
                        100 * g.overhead_s / std::max(1e-12, g.seconds())));
  }
  AddTerm(e, "weights", plan.memory.weights_bytes / kGiB, "GiB",
          w.kind == WorkloadKind::kQlora ? "NF4 base (4.127 bits/param) + fp32 adapters"
          : w.kind == WorkloadKind::kLora
              ? "frozen base + fp32 adapters"
              : "params x bytes/param / (tensor x pipeline [x data under ZeRO-3])");
  AddTerm(e, "gradients", plan.memory.gradients_bytes / kGiB, "GiB",
          w.optimizer_in_backward ? "stepped in backward: about one matrix at a time"
                                  : "sharded by ZeRO >= 2");
  AddTerm(e, "optimizer", plan.memory.optimizer_bytes / kGiB, "GiB",
          "mixed-precision Adam K=12 bytes/param (ZeRO paper; DeepSpeed's 18 adds fp32 grads), "
          "sharded by ZeRO >= 1");
  AddTerm(e, "activations", plan.memory.activations_bytes / kGiB, "GiB",
          s.transformer ? "Korthikanti et al. 2022 per layer x layers (+ logits)"
                        : "every operator output of the forward pass x micro-batch");
  if (plan.memory.host_bytes > 0) {
    AddTerm(e, "host memory", plan.memory.host_bytes / kGiB, "GiB",
            "offloaded optimizer state, activations or paged-optimizer spill, per node");
  }
  AddTerm(e, "compute time", plan.time.compute_s, "s/step", "compute-bound kernels");
  AddTerm(e, "memory time", plan.time.memory_s, "s/step", "memory-bound kernels");
  AddTerm(e, "launch overhead", plan.time.launch_s, "s/step",
          "kernel launch gaps, and host dispatch beyond the device's work");
  AddTerm(e, "communication", plan.time.communication_s, "s/step",
          fmt::format("collectives over {} (inside a node) and {} (between nodes) not hidden "
                      "behind backward",
                      s.comm.intra.name, s.comm.inter.name));
  AddTerm(e, "step", plan.time.step_s, "s", "sum of the above + optimizer + bubble");
}

}  // namespace

Status EstimateTraining(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        const EstimateOptions& options, Estimate* e) {
  e->runs_on_gpu = hw.has_gpu();
  if (!hw.has_gpu() && hw.vcpus_per_node <= 0) {
    return Status::InvalidArgument("--instance: CPU execution needs an instance with vCPUs");
  }
  TrainingEstimator model(catalog, w, hw, options.scratch);
  Plan plan;
  Status s = model.Choose(&plan, &e->notes);
  if (!s.ok()) return s;
  const TrainingSetup& setup = model.setup();
  e->notes.insert(e->notes.end(), setup.notes.begin(), setup.notes.end());
  e->layout = plan.layout;
  e->memory = plan.memory;
  e->fits = plan.memory.fits();
  e->time = plan.time;
  e->bottleneck = plan.bottleneck;
  double samples_per_s = plan.samples_per_s;
  if (setup.transformer) {
    e->throughput = samples_per_s * setup.seq;
    e->throughput_unit = "tokens/s";
  } else {
    e->throughput = samples_per_s;
    e->throughput_unit = "samples/s";
  }
  int devices = hw.has_gpu() ? hw.total_gpus() : 1;
  if (devices > 1) {
    e->scaling_efficiency =
        samples_per_s / (devices * model.SamplesPerSecondOnOneDevice(plan.layout));
    if (e->scaling_efficiency < 0.5 && std::string_view(plan.bottleneck) == "communication") {
      e->notes.push_back(fmt::format(
          "communication-bound: {} GPUs reach {:.0f}% of {} x one GPU's throughput over {}",
          devices, 100 * e->scaling_efficiency, devices,
          hw.nodes > 1 ? setup.comm.inter.name : setup.comm.intra.name));
    }
  }
  double steps = StepsForAmount(w, plan.layout, setup.seq, setup.transformer, &e->notes);
  e->total_s = steps * plan.time.step_s;
  if (options.explain) ExplainTraining(model, plan, w, hw, e);
  return Status::OK();
}

}  // namespace cloudfit
