// `cloudfit poc`: the proof of concept to run before committing to an instance. Runs the
// user's training command on one GPU and then on N, reads the throughput it prints, and
// reports single-GPU throughput, the scaling efficiency to N GPUs and, when asked, the mean
// time to recover from a preemption (kill the N-GPU run as a reclaimed node dies, restart it,
// time until it trains again) with the work lost since the newest checkpoint.
#ifndef CLOUDFIT_POC_H_
#define CLOUDFIT_POC_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit {

// Matches "12.3 it/s", "12.3it/s" (tqdm), "850 samples/s", "5e3 tokens/s", "31 img/s", ...
// The first capture group is the number.
const std::string& DefaultThroughputRegex();

struct PocOptions {
  // Run as given (no shell); "{gpus}" in any argument becomes the GPU count of the run. The
  // child also gets CUDA_VISIBLE_DEVICES=0,...,n-1 and CLOUDFIT_POC_GPUS=n.
  std::vector<std::string> command;
  int gpus = 1;                  // N of the multi-GPU run; 1 runs the single-GPU run only
  double duration_seconds = 60;  // per run, unless the command ends first
  std::string throughput_regex;  // empty: DefaultThroughputRegex(); case-insensitive
  int warmup = 2;                // throughput values dropped at the start of each run
  // MTTR: both, or neither. The N-GPU run is killed (SIGKILL to its process group) after
  // kill_after_seconds, then restarted until its first throughput line.
  std::string checkpoint_dir;
  double kill_after_seconds = 0;
  double restart_timeout_seconds = 600;  // how long the restart may take to print throughput
  double stop_grace_seconds = 10;        // SIGTERM to SIGKILL when a run's time is up
  // Each line the command prints (stdout and stderr), with the GPU count of its run.
  std::function<void(int gpus, const std::string& line)> on_output;
  // A line for people before each run.
  std::function<void(const std::string& message)> on_progress;
};

// Checks the options; messages name the flag (--gpus, --duration, --throughput-regex, ...).
Status CheckPocOptions(const PocOptions& options);

// Lines longer than this are not searched for a throughput. std::regex (libstdc++) recurses once
// per character it matches and retries from every position: a line of 100,000 digits overflows
// the stack and one of 4,096 takes seconds. Progress bars and log records are far shorter.
inline constexpr size_t kMaxThroughputLineBytes = 1024;

// The number in the first capture group of the first match of `pattern` in `line`; false for a
// line longer than kMaxThroughputLineBytes.
bool ParseThroughput(const std::regex& pattern, const std::string& line, double* value);

// The median of `values` after dropping the first `warmup`; when no more than `warmup` values
// came, the median of them all (a short run still says something). nullopt when empty.
std::optional<double> MedianAfterWarmup(const std::vector<double>& values, int warmup);

struct PocRun {
  int gpus = 0;
  double seconds = 0;  // wall time of the run
  bool ended_by_itself = false;
  std::optional<int> exit_code;      // when it ended by itself (128 + signal when killed by one)
  bool killed = false;               // by --kill-after
  std::vector<double> values;        // every throughput value, in order
  std::optional<double> throughput;  // MedianAfterWarmup
};

struct PocMttr {
  double kill_after_seconds = 0;
  std::string newest_checkpoint;  // empty when the directory held no file at the kill
  // Kill time minus the newest checkpoint's mtime; the whole run when there was none.
  std::optional<double> lost_work_seconds;
  // The kill to the restarted run's first throughput line; nullopt when none came in time.
  std::optional<double> mttr_seconds;
};

struct PocResult {
  int gpus = 1;
  int warmup = 0;  // as in the options, for the report
  PocRun single;
  std::optional<PocRun> multi;               // the N-GPU run (the killed one with MTTR)
  std::optional<double> scaling_efficiency;  // thr(N) / (N x thr(1)), N > 1
  std::optional<PocMttr> mttr;
  std::vector<std::string> warnings;
};

// Runs the proof of concept. An error means nothing could be measured (bad options, a command
// that cannot start, a signal); a run that prints no throughput is a warning in the result.
Status RunPoc(const PocOptions& options, PocResult* out);

std::string PocText(const PocResult& result);
nlohmann::json PocJson(const PocResult& result);

}  // namespace cloudfit

#endif  // CLOUDFIT_POC_H_
