// The estimate of one workload on one hardware choice: memory per device by component, time
// per step by component, throughput, the bottleneck, scaling, and for serving and rendering
// their own figures. Every number can be explained by the terms that produced it.
#ifndef CLOUDFIT_ESTIMATE_H_
#define CLOUDFIT_ESTIMATE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/hardware.h"
#include "cloudfit/workload.h"

namespace cloudfit {

// The CUDA context a process creates on each GPU: 287 MB with lazy module loading, the default
// since CUDA 11.7 (PyTorch PR #86509). Part of MemoryBreakdown::runtime_bytes, and outside what
// PyTorch's caching allocator reports (torch.cuda.memory_reserved, memory_allocated).
inline constexpr double kCudaContextBytes = 287e6;

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double kv_cache_bytes = 0;
  double comm_buffers_bytes = 0;
  double runtime_bytes = 0;  // CUDA context and allocator slack
  double capacity_bytes = 0;
  // Host memory the recipe keeps per node (offloaded optimizer state and activations, paged
  // optimizer spill); not part of the device total.
  double host_bytes = 0;

  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + kv_cache_bytes +
           comm_buffers_bytes + runtime_bytes;
  }
  bool fits() const { return total_bytes() <= capacity_bytes; }
};

struct Layout {
  int data_parallel = 1;
  int zero_stage = 0;  // optimizer, gradient and weight sharding over the data-parallel ranks
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int micro_batch = 1;  // per device
  int global_batch = 1;
  int grad_accumulation = 1;
};

struct TimeBreakdown {
  // By phase (training): forward and backward passes (recomputation counted in backward).
  double forward_s = 0;
  double backward_s = 0;
  // By resource: what the phases spend their time on.
  double compute_s = 0;        // math at the efficiency-scaled peak
  double memory_s = 0;         // DRAM traffic at the efficiency-scaled bandwidth
  double launch_s = 0;         // kernel launch gaps and host dispatch the device waits for
  double communication_s = 0;  // collectives not hidden behind compute
  double bubble_s = 0;         // pipeline fill and drain
  double optimizer_s = 0;      // optimizer step (memory-bound)
  double input_s = 0;          // input pipeline, when it is slower than the GPU it caps the step
  double step_s = 0;           // one optimizer step, or one unit of work for inference
};

struct ServingFigures {
  std::string engine;  // the engine profile's name
  // How one hardware unit (a GPU set or an instance) is used: copies of the model, each over
  // tensor_parallel x pipeline_parallel GPUs.
  int copies = 1;
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  double percentile = 0.95;  // ttft_s and tpot_s hold at this percentile
  double prefill_s = 0;      // one prompt's prefill alone
  double ttft_s = 0;         // time to first token at the load, at the percentile
  double tpot_s = 0;         // time per output token at the load, at the percentile
  double ttft_median_s = 0;
  double tpot_median_s = 0;
  int max_batch = 0;              // sequences one copy admits at once (engine cap, KV cache)
  double batch_at_load = 0;       // mean sequences decoding per copy at the requested rate
  double kv_capacity_tokens = 0;  // per copy
  double tokens_per_s = 0;        // generated tokens/s per replica at the planned load
  double requests_per_s = 0;      // per replica: the planned load (target utilisation, targets)
  double saturation_requests_per_s = 0;  // per replica: where queues grow without bound
  double utilisation = 0;                // at the requested rate: rate / (replicas x saturation)
  int replicas = 0;                      // hardware units for the workload's request rate
  bool meets_targets = true;
  std::string sized_by;  // what bounds requests_per_s: "utilisation", "TTFT", "TPOT"
};

struct RenderFigures {
  double seconds_per_frame = 0;  // per GPU
  double frames_per_hour = 0;    // whole machine
  int streams_per_gpu = 0;       // real time: encoder-bound and render-bound minimum
  bool av1_available = false;
};

// One term of an explanation: a named figure and how it came about.
struct Term {
  std::string name;
  double value = 0;
  std::string unit;
  std::string formula;
};

struct Estimate {
  std::string hardware;
  bool runs_on_gpu = true;
  Layout layout;
  MemoryBreakdown memory;  // per device
  TimeBreakdown time;
  double throughput = 0;          // in `throughput_unit`
  std::string throughput_unit;    // samples/s, tokens/s, frames/h, GB/s
  double total_s = 0;             // the whole job
  double scaling_efficiency = 1;  // throughput on N devices / (N x one device)
  std::string bottleneck;         // compute, memory bandwidth, communication, input, ...
  bool fits = true;
  std::optional<ServingFigures> serving;
  std::optional<RenderFigures> render;
  std::vector<std::string> notes;  // warnings and assumptions a user should read
  std::vector<Term> terms;         // --explain
  // The workload's calibration (Workload::calibration) as applied to this hardware's rates.
  std::optional<RateScale> calibration_scale;
};

// Work shared between the estimates of one workload on many instance types: the operators of
// each parallel layout, and the time of each pass on each GPU model (the same on every instance
// type built around that GPU). Meant for one workload: used with another, it starts afresh.
// Not thread-safe; one per thread.
class EstimateScratch {
 public:
  EstimateScratch();
  ~EstimateScratch();
  EstimateScratch(const EstimateScratch&) = delete;
  EstimateScratch& operator=(const EstimateScratch&) = delete;

  struct Tables;  // estimate/estimate_scratch.h
  // The tables for `workload`, emptied first when the scratch last served another one.
  Tables& For(const Workload& workload);

 private:
  const Workload* workload_ = nullptr;
  std::unique_ptr<Tables> tables_;
};

struct EstimateOptions {
  // Write the terms behind each figure (Estimate::terms). Without them an estimate has the same
  // numbers and notes: the recommender makes hundreds and shows the terms of one.
  bool explain = true;
  EstimateScratch* scratch = nullptr;  // shared work, when estimating one workload many times
};

// Estimates `workload` (finalized) on `hardware`. Fails only on impossible requests (a layout
// that cannot divide the model, a GPU count the batch does not divide); a workload that does not
// fit in memory returns an estimate with fits == false and says what would fit.
Status EstimateWorkload(const Catalog& catalog, const Workload& workload, const Hardware& hardware,
                        Estimate* out, const EstimateOptions& options = EstimateOptions());

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_H_
