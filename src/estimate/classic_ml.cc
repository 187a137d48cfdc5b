// Classic ML on tabular data: gradient-boosted trees (XGBoost, LightGBM) and linear models
// (scikit-learn). Tree training is scaled from a public benchmark (GBM-perf: 100 trees of depth
// 10 on the airline data set, 1M and 10M rows, on a 32-vCPU CPU instance and one V100); linear
// models are passes over the data at the instance's memory bandwidth. A GPU is optional: a GPU
// instance runs on whichever of its GPU and its vCPUs finishes first.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cloudfit/table.h"
#include "estimate/device_model.h"
#include "estimate/estimate_internal.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// GBM-perf (github.com/szilard/GBM-perf, results of 2019-04-29 for CPU and 2018-06-02 for GPU):
// airline data set, 100 trees, depth 10, learning rate 0.1.
//   LightGBM on r4.8xlarge (32 vCPUs, 16 physical cores used): 5 s at 1M rows, 42 s at 10M.
//   XGBoost gpu_hist on one V100 (p3.2xlarge): 8 s at 1M rows, 25 s at 10M.
// Linear in rows between the two sizes: seconds per row-tree and a fixed part.
constexpr double kRefTrees = 100;
constexpr double kRefDepth = 10;
constexpr double kRefFeatures = 8;  // the airline data set's columns (categoricals native)
constexpr double kRefCpuVcpus = 32;
constexpr double kCpuSecondsPerRowTree = (42.0 - 5.0) / (9e6 * kRefTrees);  // on 32 vCPUs
constexpr double kCpuFixedSeconds = 5.0 - 1e6 * kRefTrees * kCpuSecondsPerRowTree;
constexpr double kGpuSecondsPerRowTree = (25.0 - 8.0) / (9e6 * kRefTrees);  // one V100
constexpr double kGpuFixedSeconds = 8.0 - 1e6 * kRefTrees * kGpuSecondsPerRowTree;
constexpr double kRefGpuBandwidth = 900e9;  // V100 SXM2 HBM2
// Histogram building stops scaling with threads well before large instances run out of vCPUs
// (an assumption: LightGBM advises one thread per physical core; 64 vCPUs is taken as the knee).
constexpr double kMaxUsefulVcpus = 64;
// Memory: the raw float32 matrix, a copy while loading (pandas or NumPy) and the binned one.
constexpr double kHostBytesPerValue = 4 * 2 + 1;
// On the GPU: the float32 matrix while building the quantised ELLPACK page, and the page.
constexpr double kGpuBytesPerValue = 4 + 1;
// Scoring walks every tree from root to leaf: about 10 ns per node visited on one vCPU (an
// assumption: a pointer chase that misses the cache about half the time).
constexpr double kNodeVisitsPerVcpuSecond = 1e8;
// scikit-learn's LogisticRegression default: lbfgs with at most 100 iterations, each reading the
// float64 matrix about twice (gradient and loss).
constexpr int kLinearIterations = 100;
constexpr double kLinearPassesPerIteration = 2;

struct Run {
  double seconds = 0;
  double fixed_seconds = 0;
  std::string device;
  std::string bottleneck;
  std::string formula;
};

double TreeScale(const Workload& w) {
  return w.trees / kRefTrees * w.tree_depth / kRefDepth * w.features / kRefFeatures;
}

Run GbdtOnCpu(const Workload& w, int vcpus) {
  double useful = std::min<double>(vcpus, kMaxUsefulVcpus);
  Run r;
  r.fixed_seconds = kCpuFixedSeconds;
  r.seconds = kCpuFixedSeconds +
              w.rows * kRefTrees * TreeScale(w) * kCpuSecondsPerRowTree * kRefCpuVcpus / useful;
  r.device = fmt::format("{} vCPUs", vcpus);
  r.bottleneck = "CPU (histogram building)";
  r.formula = fmt::format(
      "LightGBM on 32 vCPUs: {:.2g} s per row-tree x {} rows x {} trees x (depth {}/10) x "
      "({} features/8) x 32/{} vCPUs + {:.1f} s (GBM-perf)",
      kCpuSecondsPerRowTree, FormatNumber(w.rows, 0), w.trees, w.tree_depth,
      FormatNumber(w.features, 0), FormatNumber(useful, 0), kCpuFixedSeconds);
  return r;
}

Run GbdtOnGpu(const Workload& w, const Accelerator& gpu) {
  double speed = gpu.memory_bandwidth_bytes_per_s / kRefGpuBandwidth;
  Run r;
  r.fixed_seconds = kGpuFixedSeconds;
  r.seconds = kGpuFixedSeconds + w.rows * kRefTrees * TreeScale(w) * kGpuSecondsPerRowTree / speed;
  r.device = gpu.name;
  r.bottleneck = "GPU memory bandwidth (histograms)";
  r.formula = fmt::format(
      "XGBoost gpu_hist on a V100: {:.2g} s per row-tree x {} rows x {} trees x (depth {}/10) x "
      "({} features/8) x 900 GB/s / {:.0f} GB/s + {:.1f} s (GBM-perf)",
      kGpuSecondsPerRowTree, FormatNumber(w.rows, 0), w.trees, w.tree_depth,
      FormatNumber(w.features, 0), gpu.memory_bandwidth_bytes_per_s / 1e9, kGpuFixedSeconds);
  return r;
}

Run PredictOnCpu(const Workload& w, int vcpus) {
  Run r;
  double visits = w.rows * w.trees * w.tree_depth;
  r.seconds = visits / (kNodeVisitsPerVcpuSecond * vcpus);
  r.device = fmt::format("{} vCPUs", vcpus);
  r.bottleneck = "CPU (tree traversal)";
  r.formula = fmt::format("{} rows x {} trees x depth {} node visits / (1e8 per vCPU-second x {})",
                          FormatNumber(w.rows, 0), w.trees, w.tree_depth, vcpus);
  return r;
}

Run LinearOnCpu(const Workload& w, const DeviceModel& cpu) {
  Run r;
  double bytes = w.rows * w.features * 8;
  int passes = w.predict ? 1 : static_cast<int>(kLinearIterations * kLinearPassesPerIteration);
  r.seconds = bytes * passes / cpu.bandwidth;
  r.device = "CPU";
  r.bottleneck = "memory bandwidth";
  r.formula = fmt::format("{} passes over {:.2f} GB (float64) at {:.0f} GB/s{}", passes,
                          bytes / 1e9, cpu.bandwidth / 1e9,
                          w.predict ? "" : " (lbfgs, 100 iterations: scikit-learn's default)");
  return r;
}

}  // namespace

Status EstimateClassicMl(const Catalog& catalog, const Workload& w, const Hardware& hw,
                         Estimate* e) {
  if (hw.vcpus_per_node <= 0 && !hw.has_gpu()) {
    return Status::InvalidArgument("--instance: classic-ml runs on an instance's vCPUs or GPU");
  }
  double values = w.rows * w.features;
  double host_bytes = values * kHostBytesPerValue;
  int vcpus = std::max(1, hw.vcpus_per_node);
  Run best;
  bool have = false;
  bool gpu_fits = false;
  if (w.algorithm == MlAlgorithm::kGbdt) {
    if (hw.vcpus_per_node > 0) {
      best = w.predict ? PredictOnCpu(w, vcpus) : GbdtOnCpu(w, vcpus);
      have = true;
    }
    double gpu_bytes = values * kGpuBytesPerValue + kCudaRuntimeBytes;
    gpu_fits = hw.has_gpu() && gpu_bytes <= hw.gpu_memory_bytes;
    if (gpu_fits && !w.predict) {
      Run gpu = GbdtOnGpu(w, *hw.gpu);
      if (!have || gpu.seconds < best.seconds) {
        best = gpu;
        have = true;
      }
    } else if (hw.has_gpu() && !w.predict && hw.vcpus_per_node <= 0) {
      e->notes.push_back(fmt::format("{:.1f} GiB of quantised data do not fit in {:.1f} GiB of "
                                     "GPU memory",
                                     gpu_bytes / kGiB, hw.gpu_memory_bytes / kGiB));
    }
  } else {
    if (hw.vcpus_per_node <= 0) {
      return Status::InvalidArgument(
          "--instance: scikit-learn's linear models run on CPUs; name an instance type");
    }
    // The host's vCPUs and DRAM, also on a GPU instance: scikit-learn does not use the GPU.
    Hardware host = hw;
    host.gpu = nullptr;
    host.gpus_per_node = 0;
    best = LinearOnCpu(w, BuildDeviceModel(catalog.efficiency(), host, NumericFormat::kFp32,
                                           RateScale()));
    have = true;
  }
  if (!have) {
    e->fits = false;
    e->bottleneck = "GPU memory";
    e->runs_on_gpu = true;
    return Status::OK();
  }
  bool on_gpu = hw.has_gpu() && best.device == hw.gpu->name;
  e->runs_on_gpu = on_gpu;
  e->memory.capacity_bytes = hw.host_memory_bytes_per_node > 0 ? hw.host_memory_bytes_per_node
                                                               : host_bytes;
  e->memory.activations_bytes = host_bytes;
  e->fits = e->memory.fits();
  if (!e->fits) {
    e->notes.push_back(fmt::format("{:.1f} GiB of data in memory (matrix, a loading copy and "
                                   "the binned matrix) is more than the {:.1f} GiB of RAM",
                                   host_bytes / kGiB, e->memory.capacity_bytes / kGiB));
  }
  e->total_s = best.seconds;
  e->time.step_s = best.seconds;
  e->time.compute_s = best.seconds - best.fixed_seconds;
  e->time.input_s = best.fixed_seconds;
  double work_s = std::max(1e-9, best.seconds - best.fixed_seconds);
  e->throughput = w.rows / (w.predict ? best.seconds : work_s);
  e->throughput_unit = "rows/s";
  e->bottleneck = best.bottleneck;
  AddTerm(e, w.predict ? "scoring time" : "training time", best.seconds, "s",
          best.device + ": " + best.formula);
  AddTerm(e, "data in memory", host_bytes / kGiB, "GiB",
          "rows x features x (2 x 4 bytes float32 + 1 byte binned)");
  if (hw.has_gpu() && !on_gpu) {
    e->notes.push_back(w.algorithm == MlAlgorithm::kLinear
                           ? "scikit-learn's linear models do not use the GPU: it idles"
                           : "the vCPUs finish first: the GPU idles");
  }
  return Status::OK();
}

}  // namespace cloudfit
