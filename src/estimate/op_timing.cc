#include "estimate/op_timing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace cloudfit {

namespace {

// FlashAttention's backward pass recomputes the scores and runs five matrix products against the
// forward pass's two: 2.5 times the forward FLOPs (Dao 2023, FlashAttention-2, section 3.1).
constexpr double kFusedAttentionBackwardFlops = 2.5;
// Below this much reduction depth a split-K kernel does not pay for its extra partial sums
// (CUTLASS's split-K examples split K into slices of a few hundred).
constexpr double kMinSplitKSlice = 256;

// Winograd's minimal filtering F(2x2, 3x3) computes a 2x2 output tile of a 3x3 convolution with
// 16 multiplications instead of 36: 2.25 times fewer (Lavin and Gray 2016, "Fast Algorithms for
// Convolutional Neural Networks", section 4; F(4x4, 3x3) saves 4x, less after its transforms).
// cuDNN runs it (CUDNN_CONVOLUTION_*_ALGO_WINOGRAD, WINOGRAD_NONFUSED) for 3x3 stride-1
// convolutions in FP32 on the vector units, and its autotuner (cudnn.benchmark, which NVIDIA's
// DeepLearningExamples set) picks it there; on tensor cores implicit GEMM wins and is used.
constexpr double kWinogradSaving = 2.25;

// PyTorch's softmax keeps a row of up to 1,024 elements in registers and reads it once
// (dispatch_softmax_forward, "persistent" softmax); longer rows go to cunn_SoftMaxForward, which
// reads them three times (aten/src/ATen/native/cuda/SoftMax.cu, PyTorch 1.x-2.x).
constexpr double kPersistentSoftmaxRow = 1024;

// The layout copies around a channels-first convolution on tensor cores, each reading and
// writing the convolution's input or output (half of its input plus output, on average): the
// input in and the output out forward; backward the output's gradient in and the input's
// gradient out for the data gradient, the input and the output's gradient in again for the
// weight gradient.
constexpr double kChannelsFirstForwardCopies = 2;
constexpr double kChannelsFirstBackwardCopies = 4;

// PyTorch keeps trainable parameters, and so their gradients, in FP32 under automatic mixed
// precision as in FP32 training (torch.cuda.amp casts copies for the forward pass).
constexpr double kParameterGradientBytes = 4;

// The arithmetic saving of a convolution's fastest algorithm on this device: Winograd's for a
// dense 3x3 stride-1 convolution over a feature map on the vector units, else none. The kernel
// area over the stride squared is k x m / input elements (k = input channels x area, m = output
// positions); it is 9 exactly for 3x3 stride 1.
double ConvolutionSaving(const Operator& op, const DeviceModel& device) {
  if (!device.gpu || device.math_unit.rfind("simt", 0) != 0) return 1;
  if (op.kind != OpKind::kConv || !op.spatial || op.groups > 1 || op.read_elements <= 0) return 1;
  double area_over_stride2 = op.k * op.m / op.read_elements;
  return std::abs(area_over_stride2 - 9) < 0.05 ? kWinogradSaving : 1;
}

bool OnTensorCores(const DeviceModel& device) {
  return device.gpu && device.math_unit.rfind("tensor", 0) == 0;
}

std::string UnitClass(const DeviceModel& device) {
  if (!device.gpu) return "cpu";
  return OnTensorCores(device) ? "tensor" : "simt";
}

// The share of the device's SMs a GEMM keeps busy: its output tiles (times any split of K that
// cuBLAS would choose for a short, deep product) spread over the SMs in waves, the last of which
// may be partly empty.
double WaveFill(double m, double n, double k, double count, const DeviceModel& device) {
  if (!device.gpu || device.sm_count <= 0) return 1;
  TileShape tile = MatrixTile(device);
  double sms = device.sm_count;
  double tiles = std::ceil(m / tile.rows) * std::ceil(n / tile.cols) * count;
  if (tiles < sms) {
    double split = std::floor(sms / tiles);
    split = std::clamp(split, 1.0, std::max(1.0, std::floor(k / kMinSplitKSlice)));
    tiles *= split;
  }
  double waves = std::ceil(tiles / sms);
  return tiles / (waves * sms);
}

struct Kernel {
  double compute_s = 0;
  double memory_s = 0;
  double flops = 0;
  double bytes = 0;
  // A call the host dispatches that launches nothing on the device (a view).
  bool host_only = false;
};

// Advances the host's and the device's clocks by `kernels` launches of a kernel busy for
// `busy_each` seconds each, and returns the device time added beyond the kernels' own: the gaps,
// and in a launch queue the waits for the host. Without a launch queue the two clocks are plain
// sums. With one, the host launches kernel i at host + i * dispatch and the device starts it at the
// later of that and the end of kernel i - 1 plus the gap. When the launch interval is the
// shorter, the device runs the kernels back to back from the first launch on; otherwise it
// finishes `busy_each` after the host's last launch, or at the end of its own back-to-back run if
// that is later. `kernels` is at least one: ForEachKernel repeats every operator at least once.
double AdvanceClocks(double busy_each, double kernels, const StackProfile& stack, double* host_s,
                     double* device_s) {
  const double gap = stack.kernel_gap_s, launch = stack.dispatch_s;
  const double before = *device_s;
  *host_s += launch * kernels;
  if (!stack.launch_queue) {
    *device_s += busy_each * kernels + gap * kernels;
    return gap * kernels;
  }
  const double first_launch = *host_s - (kernels - 1) * launch;
  if (launch <= busy_each + gap) {
    *device_s =
        std::max(before + gap, first_launch) + busy_each + (kernels - 1) * (busy_each + gap);
  } else {
    *device_s = std::max(before + kernels * (busy_each + gap), *host_s + busy_each);
  }
  return *device_s - before - busy_each * kernels;
}

void AddKernels(const Kernel& k, double kernels, const StackProfile& stack, GroupTime* g,
                PassTime* pass) {
  if (k.host_only) {
    pass->host_s += stack.dispatch_s * kernels;
    return;
  }
  double each = std::max(k.compute_s, k.memory_s);
  double busy = each * kernels;
  if (k.compute_s >= k.memory_s)
    g->compute_s += busy;
  else
    g->memory_s += busy;
  g->overhead_s += AdvanceClocks(each, kernels, stack, &pass->host_s, &pass->device_s);
  g->flops += k.flops * kernels;
  g->bytes += k.bytes * kernels;
  g->kernels += kernels;
  pass->kernels += kernels;
}

// `weights`: the k x n operand is a weight matrix (read at the weights' format) rather than
// activations.
Kernel Matmul(double m, double n, double k, double count, double fraction, bool weights,
              const DeviceModel& device, const StackProfile& stack) {
  double b_bytes = weights ? device.weight_bytes : device.activation_bytes;
  MatmulTime t = TimeMatmul(m, n, k, count, fraction, device.matrix_flops, device.activation_bytes,
                            b_bytes, device, stack);
  return {t.compute_s, t.memory_s, 2 * m * n * k * count,
          ((m * k + m * n) * device.activation_bytes + k * n * b_bytes) * count};
}

Kernel Stream(double elements, double element_bytes, double fraction, const DeviceModel& device,
              const StackProfile& stack) {
  Kernel k;
  k.bytes = elements * element_bytes;
  k.memory_s = k.bytes / StackBandwidth(device, stack, fraction);
  return k;
}

// Elements a memory-bound kind's backward kernel reads and writes, from its forward counts:
// normalisation and softmax read their input (or output) and the incoming gradient and write
// the input's gradient; activations likewise; pooling and resizing swap directions; embedding
// gradients scatter-add into the table; the loss writes the gradient of its input.
void BackwardElements(OpKind kind, double read, double written, double* bread, double* bwritten) {
  switch (kind) {
    case OpKind::kNorm:
    case OpKind::kSoftmax:
      *bread = read + written;
      *bwritten = read;
      return;
    case OpKind::kActivation:
      *bread = read + written;
      *bwritten = read;
      return;
    case OpKind::kPooling:
    case OpKind::kResize:
      *bread = written;
      *bwritten = read;
      return;
    case OpKind::kEmbedding:
      *bread = written;
      *bwritten = written;
      return;
    case OpKind::kLoss:
      *bread = read;
      *bwritten = read;
      return;
    case OpKind::kDepthwise:
    case OpKind::kLstmCell:
      *bread = 2 * read + written;
      *bwritten = 2 * written;
      return;
    default:
      *bread = read;
      *bwritten = written;
  }
}

}  // namespace

StackProfile LoadStackProfile(const EfficiencyTable& efficiency, const std::string& stack,
                              const DeviceModel& device) {
  StackProfile p;
  p.name = stack;
  p.unit = UnitClass(device);
  const std::string& unit = p.unit;
  auto get = [&](const char* parameter, const std::string& group, double fallback) {
    const EfficiencyFactor* row = nullptr;
    double v = efficiency.Lookup(parameter, stack, group, fallback, &row);
    if (row) p.rows.push_back(row);
    return v;
  };
  p.gemm_fraction = get("gemm_fraction", unit, p.gemm_fraction);
  p.conv_fraction = get("conv_fraction", unit, p.conv_fraction);
  // 1-D (often dilated) convolutions run other cuDNN kernels than 2-D ones; without a row of
  // their own they take the 2-D figure.
  p.conv1d_fraction = get("conv_fraction", unit + "-1d", p.conv_fraction);
  p.attention_fraction = get("attention_fraction", unit, p.attention_fraction);
  p.stream_fraction = get("stream_fraction", "*", p.stream_fraction);
  p.reduction_fraction = get("reduction_fraction", "*", p.reduction_fraction);
  p.sm_bytes_per_s = get("sm_bandwidth_gbps", "gpu", 0) * 1e9;
  p.sm_clock_ghz = get("sm_bandwidth_clock_ghz", "gpu", 0);
  p.gemm_k_half = get("gemm_k_half", device.gpu ? "gpu" : "cpu", 0);
  p.kernel_gap_s = get("kernel_gap_us", device.gpu ? "gpu" : "cpu", p.kernel_gap_s * 1e6) * 1e-6;
  p.dispatch_s = get("dispatch_us", device.gpu ? "gpu" : "cpu", p.dispatch_s * 1e6) * 1e-6;
  p.launch_queue = get("launch_queue", device.gpu ? "gpu" : "cpu", 0) != 0;
  return p;
}

const StackProfile& CachedStackProfile(const EfficiencyTable& efficiency, const std::string& stack,
                                       const DeviceModel& device,
                                       std::vector<StackProfile>* cache) {
  std::string unit = UnitClass(device);
  for (const StackProfile& p : *cache) {
    if (p.name == stack && p.unit == unit) return p;
  }
  cache->push_back(LoadStackProfile(efficiency, stack, device));
  return cache->back();
}

double StackBandwidth(const DeviceModel& device, const StackProfile& stack, double fraction) {
  double bw = device.bandwidth * fraction;
  if (device.gpu && stack.sm_bytes_per_s > 0 && device.sm_count > 0) {
    double clock = stack.sm_clock_ghz > 0 && device.sm_clock_ghz > 0
                       ? device.sm_clock_ghz / stack.sm_clock_ghz
                       : 1.0;
    bw = std::min(bw, device.sm_count * stack.sm_bytes_per_s * clock);
  }
  return bw;
}

namespace {

// Each kind's group as its place in name order among all the groups: entries kept in rank
// order are in name order, found without comparing names.
struct GroupRanks {
  std::array<int8_t, kOpKindCount> of_kind{};
  GroupRanks() {
    std::vector<std::string_view> names;
    for (int k = 0; k < kOpKindCount; ++k) names.push_back(OpGroupName(static_cast<OpKind>(k)));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (int k = 0; k < kOpKindCount; ++k) {
      auto it = std::lower_bound(names.begin(), names.end(), OpGroupName(static_cast<OpKind>(k)));
      of_kind[static_cast<size_t>(k)] = static_cast<int8_t>(it - names.begin());
    }
  }
};

const GroupRanks& Ranks() {
  static const GroupRanks ranks;
  return ranks;
}

int8_t RankOfGroup(std::string_view name) {
  for (int k = 0; k < kOpKindCount; ++k) {
    if (OpGroupName(static_cast<OpKind>(k)) == name) return Ranks().of_kind[static_cast<size_t>(k)];
  }
  assert(false && "not a group of OpGroupName");
  return 0;
}

}  // namespace

GroupTime& GroupTimes::operator[](std::string_view name) {
  return entries_[IndexOf(RankOfGroup(name), name)].second;
}

GroupTime& GroupTimes::For(OpKind kind) {
  int8_t& slot = slot_of_kind_[static_cast<size_t>(kind)];
  // IndexOf may insert, shifting the other kinds' slots; this one is set after.
  if (slot < 0) {
    slot =
        static_cast<int8_t>(IndexOf(Ranks().of_kind[static_cast<size_t>(kind)], OpGroupName(kind)));
  }
  return entries_[static_cast<size_t>(slot)].second;
}

size_t GroupTimes::IndexOf(int8_t rank, std::string_view name) {
  size_t i = 0;
  while (i < size_ && rank_[i] < rank) ++i;
  if (i < size_ && rank_[i] == rank) return i;
  // A new group, inserted where name order puts it. Every operator kind has one group, so
  // there are never more names than kinds, the array's size.
  assert(size_ < entries_.size());
  for (size_t j = size_; j > i; --j) {
    entries_[j] = entries_[j - 1];
    rank_[j] = rank_[j - 1];
  }
  entries_[i] = {name, GroupTime()};
  rank_[i] = rank;
  ++size_;
  for (int8_t& slot : slot_of_kind_) {
    if (slot >= static_cast<int8_t>(i)) ++slot;
  }
  return i;
}

void PassTime::Add(const PassTime& other) {
  // Forward, backward and recompute passes of one operator list have the same groups in the
  // same (name) order: add them entry by entry without searching.
  bool aligned = groups.size() == other.groups.size();
  for (size_t i = 0; aligned && i < groups.size(); ++i) {
    aligned = groups.begin()[i].first.data() == other.groups.begin()[i].first.data();
  }
  for (size_t i = 0; i < other.groups.size(); ++i) {
    const auto& [name, g] = other.groups.begin()[i];
    GroupTime& mine = aligned ? groups.at(i) : groups[name];
    mine.compute_s += g.compute_s;
    mine.memory_s += g.memory_s;
    mine.overhead_s += g.overhead_s;
    mine.flops += g.flops;
    mine.bytes += g.bytes;
    mine.kernels += g.kernels;
  }
  device_s += other.device_s;
  host_s += other.host_s;
  kernels += other.kernels;
}

MatmulTime TimeMatmul(double m, double n, double k, double count, double fraction,
                      double rate_flops, double element_bytes, double b_element_bytes,
                      const DeviceModel& device, const StackProfile& stack) {
  MatmulTime t;
  // An empty product (a head over an unknown vocabulary) moves and computes nothing.
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return t;
  double fill = WaveFill(m, n, k, count, device);
  double depth = stack.gemm_k_half > 0 ? k / (k + stack.gemm_k_half) : 1;
  t.compute_s = 2 * m * n * k * count / (rate_flops * fraction * fill * depth);
  double bytes = ((m * k + m * n) * element_bytes + k * n * b_element_bytes) * count;
  t.memory_s = bytes / StackBandwidth(device, stack, stack.stream_fraction);
  return t;
}

namespace {

// Calls add(kernel, count) for each group of identical kernels `op` runs in `pass`: the one
// place that times an operator, for TimePass (with the per-group breakdown) and AddOperatorSeconds
// (without it).
template <typename AddFn>
void ForEachKernel(const Operator& op, double batch, Pass pass, const DeviceModel& device,
                   const StackProfile& stack, double spatial_scale, AddFn&& add) {
  bool backward = pass == Pass::kBackward;
  double scale = op.spatial ? spatial_scale : 1;
  double repeats = std::max(1.0, op.repeats);
  switch (op.kind) {
    case OpKind::kGemm:
    case OpKind::kConv:
    case OpKind::kGemmSequential:
    case OpKind::kGemmStep: {
      double fraction = op.kind != OpKind::kConv ? stack.gemm_fraction
                        : op.spatial             ? stack.conv_fraction
                                                 : stack.conv1d_fraction;
      // Fewer multiplications do the same convolution: the nominal FLOPs at a higher rate.
      fraction *= ConvolutionSaving(op, device);
      double m = op.m * scale * batch;
      // A convolution reads its real input, not the m x k view of it an implicit GEMM forms.
      auto real_traffic = [&](Kernel k) {
        if (op.read_elements <= 0) return k;
        double weights = op.n * op.k * op.groups * device.weight_bytes;
        k.bytes =
            (op.read_elements + op.written_elements) * scale * batch * device.activation_bytes +
            weights;
        k.memory_s = k.bytes / StackBandwidth(device, stack, stack.stream_fraction);
        return k;
      };
      if (op.kind == OpKind::kConv && !op.spatial && op.read_elements > 0 &&
          OnTensorCores(device)) {
        // cuDNN's tensor-core convolutions run on channels-last data, and PyTorch has no
        // channels-last format for a 1-D convolution's 3-D tensors, so cuDNN transposes the
        // input before each and the output back after it (nchwToNhwc, nhwcToNchw): a copy of
        // each forward, and of the output's gradient and the input's gradient, then of the
        // input and the output's gradient for the weights, backward.
        double io = (op.read_elements + op.written_elements) * scale * batch;
        add(Stream(io, device.activation_bytes, stack.stream_fraction, device, stack),
            repeats * (backward ? kChannelsFirstBackwardCopies : kChannelsFirstForwardCopies));
      }
      if (!backward) {
        add(real_traffic(Matmul(m, op.n, op.k, op.groups, fraction, true, device, stack)), repeats);
        return;
      }
      // The gradient of the input, then the gradient of the weights (reduced over M).
      add(real_traffic(Matmul(m, op.k, op.n, op.groups, fraction, true, device, stack)), repeats);
      if (!op.trainable) return;
      if (op.kind == OpKind::kGemmSequential && repeats > 1) {
        // cuDNN's RNN backward takes the weight gradient of the whole sequence in one product
        // reduced over steps x batch (cudnnRNNBackwardWeights; PyTorch's nn.LSTM calls it once
        // after the data gradients of all the steps).
        add(Matmul(op.n, op.k, m * repeats, op.groups, fraction, false, device, stack), 1);
        return;
      }
      add(real_traffic(Matmul(op.n, op.k, m, op.groups, fraction, false, device, stack)), repeats);
      if (op.kind == OpKind::kGemmStep && repeats > 1) {
        // A weight used at every step of a loop the host runs feeds one gradient per step into
        // its parameter, and autograd adds each into the parameter's gradient as it arrives
        // (InputBuffer::accumulate): one more kernel per step after the first, reading both
        // gradients and writing the sum, in the parameter's FP32.
        add(Stream(3 * op.n * op.k * op.groups, kParameterGradientBytes, stack.stream_fraction,
                   device, stack),
            repeats - 1);
      }
      return;
    }
    case OpKind::kAttention: {
      double count = op.groups * batch;
      // Unfused attention computes the whole score matrix and masks it afterwards.
      Kernel k = Matmul(op.m, op.n, op.k, count, stack.gemm_fraction, false, device, stack);
      add(k, repeats * (backward ? 2 : 1));
      return;
    }
    case OpKind::kFusedAttention: {
      Kernel k;
      k.flops = op.flops() * batch * (backward ? kFusedAttentionBackwardFlops : 1) / repeats;
      k.compute_s = k.flops / (device.matrix_flops * stack.attention_fraction);
      // Reads queries, keys and values and writes the output (backward: and their gradients).
      k.bytes = (2 * op.m * op.k + 2 * op.n * op.k) * op.groups * batch * device.activation_bytes *
                (backward ? 2 : 1);
      k.memory_s = k.bytes / StackBandwidth(device, stack, stack.stream_fraction);
      add(k, repeats);
      return;
    }
    case OpKind::kLoss: {
      bool mixed = device.activation_bytes < 4;
      double per_element = 0, kernels = 0;
      if (op.n > kPersistentSoftmaxRow) {
        // Softmax cross-entropy over long rows (a vocabulary; `n` is the row) as PyTorch's
        // kernels run it (aten/src/ATen/native/cuda/SoftMax.cu, cunn_SoftMaxForward and
        // cunn_SoftMaxBackward, one block per row): log-softmax reads each row three times (its
        // maximum, the sum of exponentials, then the write pass) and writes it, and nll_loss
        // reads one entry per row. Backward, nll_loss's gradient is a zero-filled tensor with
        // one entry per row set, and log-softmax's backward reads it twice (its row sum, then
        // the write pass) with the saved output once, and writes the logits' gradient. Under
        // mixed precision autocast runs log-softmax in FP32: the 16-bit logits are cast up first
        // (read 2, write 4 bytes) and their gradient cast back (read 4, write 2).
        constexpr double kFp32 = 4;
        double casts = mixed ? 2 + kFp32 : 0;
        per_element = backward ? kFp32 + 4 * kFp32 + casts : 4 * kFp32 + casts;
        // Forward: the cast, log-softmax, nll_loss; backward: the zero fill, the scatter,
        // log-softmax's backward and the cast.
        kernels = (backward ? 3 : 2) + (mixed ? 1 : 0);
      } else {
        // Losses over short rows (1,000 classes, 81 per box), whose softmax PyTorch keeps in
        // registers, and elementwise ones (MSE, BCE): the logits cast to FP32 under mixed
        // precision (read 2, write 4 bytes), read twice and written; backward writes the FP32
        // gradient from the saved output and casts it back to 16 bits. In FP32 the casts go away.
        per_element = backward ? (mixed ? 14 : 8) : (mixed ? 18 : 12);
        kernels = mixed ? 3 : 2;
      }
      Kernel k;
      k.bytes = op.read_elements * scale * batch * per_element / kernels;
      k.memory_s = k.bytes / StackBandwidth(device, stack, stack.reduction_fraction);
      add(k, repeats * kernels);
      return;
    }
    case OpKind::kView: {
      // The call itself, forward or as its autograd node: dispatch only.
      Kernel call;
      call.host_only = true;
      add(call, repeats);
      if (!backward || op.read_elements <= 0) return;
      // Selecting one step of a tensor: its backward (PyTorch's select_backward) fills a gradient
      // of the whole tensor with zeros and copies the slice's gradient into it, and the autograd
      // engine adds that into the gradient the tensor's other uses have accumulated
      // (InputBuffer::accumulate: both read, the sum written). A loop that selects every step
      // of a tensor so moves the whole tensor four times per step.
      double whole = op.read_elements * scale * batch;
      double slice = op.written_elements * scale * batch;
      add(Stream(whole, device.activation_bytes, stack.stream_fraction, device, stack), repeats);
      add(Stream(2 * slice, device.activation_bytes, stack.stream_fraction, device, stack),
          repeats);
      add(Stream(3 * whole, device.activation_bytes, stack.stream_fraction, device, stack),
          repeats);
      return;
    }
    case OpKind::kNorm: {
      // Batch and group normalisation over feature maps take two passes in training: the
      // statistics, then the normalisation (cuDNN, PyTorch); backward reads the input and the
      // gradient once for the parameter gradients and again for the input's. Normalisation
      // over a hidden dimension (layer norm, RMS norm) fits in one pass per row.
      double read = op.read_elements * scale * batch;
      double written = op.written_elements * scale * batch;
      bool two_pass = op.spatial && pass != Pass::kInference;
      double passes = two_pass ? 2 : 1;
      double bytes_read = backward ? (read + written) * passes : read * passes;
      double bytes_written = backward ? read : written;
      // The traffic above is that of all the passes together; each of the `passes` kernels
      // moves its share of it.
      Kernel k = Stream((bytes_read + bytes_written) / passes, device.activation_bytes,
                        stack.reduction_fraction, device, stack);
      add(k, repeats * passes);
      return;
    }
    default: {
      double read = op.read_elements * scale * batch;
      double written = op.written_elements * scale * batch;
      if (backward) {
        double bread = 0, bwritten = 0;
        BackwardElements(op.kind, read, written, &bread, &bwritten);
        read = bread;
        written = bwritten;
      }
      bool reduces = op.kind == OpKind::kSoftmax;
      Kernel k = Stream(read + written, device.activation_bytes,
                        reduces ? stack.reduction_fraction : stack.stream_fraction, device, stack);
      if (op.kind == OpKind::kDepthwise) k.flops = op.flops() * scale * batch / repeats;
      add(k, repeats);
      return;
    }
  }
}

}  // namespace

void AddOperatorTime(const Operator& op, double batch, Pass pass, const DeviceModel& device,
                     const StackProfile& stack, double spatial_scale, PassTime* out) {
  GroupTime& g = out->groups.For(op.kind);
  ForEachKernel(op, batch, pass, device, stack, spatial_scale,
                [&](const Kernel& k, double kernels) { AddKernels(k, kernels, stack, &g, out); });
}

void AddOperatorSeconds(const Operator& op, double batch, Pass pass, const DeviceModel& device,
                        const StackProfile& stack, double spatial_scale, PassClock* out) {
  // The same sums as AddKernels, in the same order, so that the total is bit for bit that of
  // TimePass.
  ForEachKernel(op, batch, pass, device, stack, spatial_scale,
                [&](const Kernel& k, double kernels) {
                  if (k.host_only) {
                    out->host_s += stack.dispatch_s * kernels;
                    return;
                  }
                  AdvanceClocks(std::max(k.compute_s, k.memory_s), kernels, stack, &out->host_s,
                                &out->device_s);
                });
}

PassTime TimePass(const std::vector<Operator>& ops, double batch, Pass pass,
                  const DeviceModel& device, const StackProfile& stack, double spatial_scale) {
  PassTime out;
  for (const Operator& op : ops) {
    AddOperatorTime(op, batch, pass, device, stack, spatial_scale, &out);
  }
  return out;
}

}  // namespace cloudfit
