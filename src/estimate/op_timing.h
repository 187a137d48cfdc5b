// The time of a pass over a model's operators on one device. Each operator is a kernel (or
// `repeats` kernels) on its own roofline: matrix kinds at a fraction of the device's sustained
// matrix rate, reduced by wave quantisation when the output tiles do not fill the SMs; every
// other kind at a fraction of the achievable memory bandwidth. Each kernel also costs a launch
// gap on the device, and each operator a dispatch on the host; the host runs ahead of the
// device, so a pass takes whichever of the two is longer, or, for stacks timed as a launch
// queue, as long as the device waits for each launch in turn. The fractions are per software
// stack (StackProfile), not per GPU.
#ifndef CLOUDFIT_ESTIMATE_OP_TIMING_H_
#define CLOUDFIT_ESTIMATE_OP_TIMING_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cloudfit/efficiency.h"
#include "cloudfit/operators.h"
#include "estimate/device_model.h"

namespace cloudfit {

// How much of the device a software stack's kernels reach. Read from data/efficiency.csv.
struct StackProfile {
  std::string name;
  std::string unit;                 // "tensor", "simt" or "cpu": the rows it was read for
  double gemm_fraction = 0.8;       // large GEMMs, of the sustained matrix rate
  double conv_fraction = 0.7;       // implicit-GEMM convolutions over feature maps
  double conv1d_fraction = 0.7;     // convolutions over sequences (dilated, 1-D)
  double attention_fraction = 0.5;  // fused attention (FlashAttention-style) kernels
  double stream_fraction = 0.9;     // elementwise kernels, of the achievable bandwidth
  double reduction_fraction = 0.7;  // normalisation, softmax, loss (kernels that reduce)
  // Memory throughput one SM sustains in this stack's memory-bound kernels: the bytes they keep
  // in flight per SM over the memory latency (Little's law). A device with more bandwidth per SM
  // than this (HBM parts) is limited by it; 0 = no limit.
  double sm_bytes_per_s = 0;
  // Where this stack's memory kernels are bound by the instructions each SM issues per byte
  // (llama.cpp's mat-vec kernels unpack and scale every quantized weight) rather than by the
  // memory latency, the per-SM figure is stated at this SM clock and scales with the device's;
  // 0 = it does not scale.
  double sm_clock_ghz = 0;
  // Reduction depth at which a GEMM tile's main loop reaches half its rate: the pipeline fill
  // and the epilogue cost a fixed time per tile, so a product over K runs at K / (K + k_half)
  // of the rate a very deep one reaches. 0 = no such loss.
  double gemm_k_half = 0;
  double kernel_gap_s = 3e-6;  // device idle between kernels
  double dispatch_s = 10e-6;   // host time to launch one operator
  // Whether the pass is timed as the launch queue it is: the device starts each kernel when the
  // one before has finished and the host has launched it, so a kernel shorter than the launch
  // interval leaves the device waiting even where the host was ahead before. Otherwise the pass
  // takes the longer of the host's and the device's sums.
  bool launch_queue = false;
  // The data rows behind the figures, for --explain ("gemm_fraction: fitted to ...").
  std::vector<const EfficiencyFactor*> rows;
};
StackProfile LoadStackProfile(const EfficiencyTable& efficiency, const std::string& stack,
                              const DeviceModel& device);
// The same, kept in `cache`: a profile depends on the stack and the device's unit class alone,
// so the estimates of one workload on many instance types read the table once per class.
const StackProfile& CachedStackProfile(const EfficiencyTable& efficiency, const std::string& stack,
                                       const DeviceModel& device, std::vector<StackProfile>* cache);

// kForward and kRecompute are the training forward pass (batch statistics, loss); kInference is
// a forward pass that keeps neither.
enum class Pass { kForward, kBackward, kRecompute, kInference };

struct GroupTime {
  double compute_s = 0;   // kernels bound by arithmetic
  double memory_s = 0;    // kernels bound by memory traffic
  double overhead_s = 0;  // launch gaps
  double flops = 0;
  double bytes = 0;
  double kernels = 0;
  double seconds() const { return compute_s + memory_s + overhead_s; }
};

// Group times by operator-group name (OpGroupName), kept in name order in place: a pass has at
// most one entry per group, and a training estimate adds thousands of passes, where a
// std::map of strings allocated and compared strings for every operator. Iteration yields
// (name, time) pairs in name order, as the map did, so sums over it run in the same order.
class GroupTimes {
 public:
  using Entry = std::pair<std::string_view, GroupTime>;
  GroupTimes() { slot_of_kind_.fill(-1); }
  // `name` must outlive the pass (OpGroupName's names are static).
  GroupTime& operator[](std::string_view name);
  // The group of operators of `kind` (OpGroupName), found in constant time after its first use:
  // a training estimate times tens of thousands of operators.
  GroupTime& For(OpKind kind);
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + size_; }
  size_t size() const { return size_; }
  GroupTime& at(size_t i) { return entries_[i].second; }

 private:
  // The entry of group `name`, whose place in name order is `rank`, inserted if new.
  size_t IndexOf(int8_t rank, std::string_view name);

  // One entry per group of OpGroupName (matmul, conv, attention, ...): at most one per kind.
  std::array<Entry, kOpKindCount> entries_{};
  std::array<int8_t, kOpKindCount> rank_{};  // each entry's group's place in name order
  size_t size_ = 0;
  // Where each kind's group is in `entries_`, or -1 before its first use; shifted with the
  // entries when a group is inserted before them.
  std::array<int8_t, kOpKindCount> slot_of_kind_;
};

struct PassTime {
  GroupTimes groups;    // by OpGroupName
  double device_s = 0;  // the device's busy and idle time
  double host_s = 0;    // the host's dispatch time
  double kernels = 0;
  double seconds() const { return device_s > host_s ? device_s : host_s; }
  void Add(const PassTime& other);
};

// `ops` are per sample; `batch` samples run together; `spatial_scale` multiplies the feature-map
// sizes of spatial operators (resolution / the model's resolution, squared).
PassTime TimePass(const std::vector<Operator>& ops, double batch, Pass pass,
                  const DeviceModel& device, const StackProfile& stack, double spatial_scale = 1);

// One operator of a pass, added to `out`: TimePass is these in the operators' order.
void AddOperatorTime(const Operator& op, double batch, Pass pass, const DeviceModel& device,
                     const StackProfile& stack, double spatial_scale, PassTime* out);

// The device and host time of a pass without its breakdown by operator group, for callers that
// time many steps (a serving estimate times hundreds of decode steps per hardware choice).
// Operators added in the same order give bit for bit PassTime::seconds() of TimePass.
struct PassClock {
  double device_s = 0;
  double host_s = 0;
  double seconds() const { return device_s > host_s ? device_s : host_s; }
};
void AddOperatorSeconds(const Operator& op, double batch, Pass pass, const DeviceModel& device,
                        const StackProfile& stack, double spatial_scale, PassClock* out);

// The memory bandwidth a stack's kernels reach on a device: the achievable bandwidth times the
// fraction, but no more than the SMs can keep in flight.
double StackBandwidth(const DeviceModel& device, const StackProfile& stack, double fraction);

// One matrix multiply of count x (M x K) x (K x N), for callers outside a model's operator list
// (the optimizer, the LM head of a decode step): compute and memory seconds, the larger wins.
struct MatmulTime {
  double compute_s = 0;
  double memory_s = 0;
  double seconds() const { return compute_s > memory_s ? compute_s : memory_s; }
};
// `element_bytes` for the m x k input and the output, `b_element_bytes` for the k x n operand.
MatmulTime TimeMatmul(double m, double n, double k, double count, double fraction,
                      double rate_flops, double element_bytes, double b_element_bytes,
                      const DeviceModel& device, const StackProfile& stack);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_OP_TIMING_H_
