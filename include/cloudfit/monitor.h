// `cloudfit monitor`: samples a running job (a command we start, or a pid) at a fixed
// interval: its GPUs through NVML and its process tree through /proc. Then summarises the
// series and turns them into advice about the instance (fewer or smaller GPUs, no memory
// headroom, input-bound, CPU sizing), naming catalog instances to move to. Sampling is in
// RunMonitor; everything after it is pure functions over the samples, so tests can feed
// synthetic ones.
#ifndef CLOUDFIT_MONITOR_H_
#define CLOUDFIT_MONITOR_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cloudfit/catalog.h"
#include "cloudfit/gpu_sampler.h"
#include "cloudfit/instance.h"
#include "cloudfit/status.h"

namespace cloudfit {

struct MonitorSample {
  double time_seconds = 0;  // since monitoring began
  // The process tree (the pid and its descendants).
  int processes = 0;
  double cpu_percent = 0;        // percent of one core: 250 = two and a half cores busy
  double cpu_share_percent = 0;  // percent of all the cores we may use
  double rss_bytes = 0;
  std::optional<double> read_bytes_per_s;  // storage I/O; nullopt when /proc/PID/io is unreadable
  std::optional<double> write_bytes_per_s;
  // The machine.
  double system_memory_used_bytes = 0;
  double system_memory_total_bytes = 0;
  // One per GPU the sampler sees; empty without a GPU.
  std::vector<GpuSample> gpus;
};

struct MonitorRecording {
  std::vector<std::string> command;  // empty when a pid was watched
  int pid = 0;
  double interval_seconds = 1;
  int cpu_cores = 1;  // cores available to the job: 100% cpu_share_percent
  std::string gpu_unavailable;  // why there are no GPU samples; empty when there are
  std::vector<MonitorSample> samples;
  double duration_seconds = 0;
  // The command's exit code as a shell gives it (128 + signal when killed); nullopt for --pid.
  std::optional<int> exit_code;
  std::string stopped_by;  // "exit", "duration", "signal" or "pid-gone"
};

struct MonitorOptions {
  std::vector<std::string> command;  // started by the monitor; or
  int pid = 0;                       // a running process to watch
  double interval_seconds = 1;
  double duration_seconds = 0;  // 0: until the command exits or the pid is gone
  // Not owned; nullptr when there is no GPU (the recording then says why).
  GpuSampler* gpu = nullptr;
  std::string gpu_unavailable;
  // Called after each sample, e.g. to print a live line.
  std::function<void(const MonitorSample&)> on_sample;
};

// Samples until the command exits, the pid disappears, `duration_seconds` pass (the command
// is then stopped: SIGTERM to its process group, SIGKILL 10 s later) or SIGINT/SIGTERM/SIGHUP
// arrives while a SignalCatcher is alive (forwarded to the command's group; with --pid,
// monitoring just stops). The command keeps our stdin, stdout and stderr.
Status RunMonitor(const MonitorOptions& options, MonitorRecording* out);

// Mean, 95th percentile (nearest rank) and maximum of one series.
struct SeriesStats {
  std::string key;    // machine name: "gpu_util_percent", ...
  std::string title;  // for people
  std::string unit;   // "%", "GiB", "W", "MHz", "MB/s"
  int count = 0;
  double mean = 0;
  double p95 = 0;
  double max = 0;
};
SeriesStats ComputeStats(std::string key, std::string title, std::string unit,
                         std::vector<double> values);

struct MonitorSummary {
  double duration_seconds = 0;
  int samples = 0;
  int cpu_cores = 1;
  int gpu_count = 0;
  std::string gpu_name;  // the first GPU's name as the driver reports it
  double gpu_memory_total_bytes = 0;      // per GPU (the smallest one)
  double peak_gpu_memory_used_bytes = 0;  // per GPU, the largest over GPUs and samples
  // Only the series that have values: GPU ones need a GPU, I/O ones a readable io file.
  std::vector<SeriesStats> series;
  const SeriesStats* Find(const std::string& key) const;
};

// GPU series average over the GPUs in each sample; the memory peak is per GPU.
MonitorSummary Summarize(const MonitorRecording& recording);

struct AdviceOptions {
  const Catalog* catalog = nullptr;  // without one, the advice names no instance
  // The instance the job runs on (--instance); empty: inferred from the GPU name and count.
  std::string current_instance;
  PricingMode pricing = PricingMode::kOnDemand;
  double low_gpu_util_percent = 30;     // mean below: the GPUs are more than the job needs
  double memory_full_fraction = 0.90;   // peak above: no memory headroom
  double cpu_saturated_fraction = 0.90;  // tree's mean CPU share of the cores at or above
  double cpu_idle_fraction = 0.25;       // mean CPU share below, without a GPU: a smaller one
  double memory_headroom = 1.15;  // a suggested GPU holds the peak plus this much
  // A suggested instance's peak compute covers the work seen (current peak x count x mean
  // utilisation) times this.
  double compute_margin = 1.5;
};

struct Advice {
  // "low-gpu-utilization", "no-memory-headroom", "input-bound", "no-gpu", "cpu-saturated",
  // "cpu-idle", "system-memory-full", "fits", "no-samples".
  std::string code;
  std::string severity;  // "info" or "warning"
  std::string message;
  std::string suggested_instance;  // a catalog instance type to move to; empty when none
  std::string suggested_provider;
  std::optional<double> suggested_price_per_hour;  // USD, cheapest region
};

// Advice from the samples alone (and the catalog, to name instances). Deterministic.
std::vector<Advice> AdviseFromSamples(const MonitorRecording& recording,
                                      const AdviceOptions& options);

// One row per sample; the GPU columns repeat per GPU (gpu0_util_percent, gpu1_..., ...), as
// the GPU count does not change during a run. Unknown values are empty cells.
std::string MonitorCsv(const MonitorRecording& recording);
// A self-contained SVG of GPU utilisation, GPU memory, CPU share and system memory (all in
// percent, GPU series averaged over the GPUs) against time, with axes and a legend.
std::string MonitorSvg(const MonitorRecording& recording);
// The summary table and the advice, for people.
std::string MonitorText(const MonitorRecording& recording, const MonitorSummary& summary,
                        const std::vector<Advice>& advice);
nlohmann::json MonitorJson(const MonitorRecording& recording, const MonitorSummary& summary,
                           const std::vector<Advice>& advice);

}  // namespace cloudfit

#endif  // CLOUDFIT_MONITOR_H_
