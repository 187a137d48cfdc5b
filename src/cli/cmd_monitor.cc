// cloudfit monitor: sample a job's GPUs and process tree while it runs, write the series as CSV
// and SVG, and advise on the instance from what was seen.
//
// Exit status: the monitored command's own (128 + signal when a signal ended it), so monitor
// can wrap a command in scripts; 0 with --pid; 2 for bad flags or files that cannot be written.
// The command keeps stdin, stdout and stderr; the summary follows its output on stdout.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/gpu_sampler.h"
#include "cloudfit/monitor.h"
#include "measure/child_process.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

constexpr double kMinInterval = 0.05;
constexpr double kMaxInterval = 3600;

struct MonitorFlags {
  std::vector<std::string> command;
  int pid = 0;
  double interval = 1;
  double duration = 0;
  std::string csv;
  std::string svg;
  std::string instance;
  std::string pricing = "ondemand";
  FormatOptions format;
  bool no_gpu = false;
};

// Fails before the job runs, rather than after hours of sampling, when an output file's
// directory does not exist.
void CheckOutputPath(const std::string& flag, const std::string& path) {
  if (path.empty()) return;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    throw CliError{flag + ": directory '" + parent.string() + "' does not exist"};
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw CliError{flag + ": '" + path + "' is a directory; give a file name"};
  }
}

// Written whole to a temporary file and renamed, so a failure leaves no half-written file.
void WriteOutput(const std::string& flag, const std::string& path, const std::string& text) {
  Status s = WriteFileAtomically(path, text);
  if (!s.ok()) throw CliError{flag + ": " + s.message()};
}

void Run(const GlobalOptions& global, const MonitorFlags& f, bool pid_given) {
  if (!(f.interval >= kMinInterval && f.interval <= kMaxInterval)) {
    throw CliError{fmt::format("--interval: {} is not allowed; give seconds between {} and {}",
                               FormatNumberShort(f.interval), kMinInterval, kMaxInterval)};
  }
  if (!(f.duration >= 0)) {
    throw CliError{"--duration: " + FormatNumberShort(f.duration) +
                   " is not allowed; give seconds, or 0 to run until the command ends"};
  }
  if (pid_given && f.pid <= 0) {
    throw CliError{"--pid: " + std::to_string(f.pid) + " is not a process id"};
  }
  if (pid_given == !f.command.empty()) {
    throw CliError{pid_given ? "give either --pid or a command after '--', not both"
                             : "no command: give one after '--' (cloudfit monitor -- python "
                               "train.py) or watch a running process with --pid PID"};
  }
  PricingMode pricing;
  if (!ParsePricingMode(f.pricing, &pricing)) {
    throw CliError{"--pricing: '" + Shown(f.pricing) +
                   "' is not one of ondemand, spot, reserved-1y, reserved-3y"};
  }
  if (pid_given && !std::filesystem::exists("/proc/" + std::to_string(f.pid))) {
    throw CliError{"--pid: no process with pid " + std::to_string(f.pid)};
  }
  CheckOutputPath("--samples-csv", f.csv);
  CheckOutputPath("--plot", f.svg);
  Catalog catalog = LoadCatalogOrThrow(global);
  if (!f.instance.empty()) {
    const InstanceType* found = nullptr;
    Status s = catalog.FindInstance(f.instance, &found);
    if (!s.ok()) throw CliError{"--instance: " + s.message()};
  }

  MonitorOptions options;
  options.command = f.command;
  options.pid = pid_given ? f.pid : 0;
  options.interval_seconds = f.interval;
  options.duration_seconds = f.duration;
  std::unique_ptr<GpuSampler> gpu;
  if (f.no_gpu) {
    options.gpu_unavailable = "--no-gpu";
  } else {
    gpu = OpenGpuSampler(&options.gpu_unavailable);
    options.gpu = gpu.get();
  }
  // From here on a signal is forwarded to the command (or ends watching a pid), and the files
  // are still written. The line below tells scripts that this is so.
  auto catcher = std::make_unique<SignalCatcher>();
  std::cerr << fmt::format("cloudfit monitor: sampling every {} s; {}\n",
                           FormatNumberShort(f.interval),
                           gpu ? fmt::format("{} GPU(s) through NVML", gpu->device_count())
                               : "no GPU (" + options.gpu_unavailable + ")");

  MonitorRecording recording;
  Status s = RunMonitor(options, &recording);
  catcher.reset();
  if (!s.ok()) throw CliError{(pid_given ? "--pid: " : "") + s.message()};

  AdviceOptions advice_options;
  advice_options.catalog = &catalog;
  advice_options.current_instance = f.instance;
  advice_options.pricing = pricing;
  MonitorSummary summary = Summarize(recording);
  std::vector<Advice> advice = AdviseFromSamples(recording, advice_options);
  if (!f.csv.empty()) WriteOutput("--samples-csv", f.csv, MonitorCsv(recording));
  if (!f.svg.empty()) WriteOutput("--plot", f.svg, MonitorSvg(recording));
  std::cout.flush();
  if (f.format.json) {
    PrintJson(MonitorJson(recording, summary, advice));
  } else if (f.format.format() != OutputFormat::kTable) {
    PrintTable(DocumentTable(MonitorJson(recording, summary, advice)), f.format);
  } else {
    std::cout << MonitorText(recording, summary, advice);
  }
  std::cout.flush();
  if (recording.exit_code && *recording.exit_code != 0) {
    // The command's status is ours; nothing is left to clean up but the streams.
    std::fflush(nullptr);
    std::exit(*recording.exit_code);
  }
}

}  // namespace

void AddMonitorCommand(CLI::App* app, const GlobalOptions* global) {
  auto flags = std::make_shared<MonitorFlags>();
  CLI::App* c = app->add_subcommand(
      "monitor",
      "Run a command (after --) or watch --pid, sampling GPU and CPU use; CSV/SVG series, "
      "summary and advice on the instance. Exits with the command's exit code");
  CLI::Option* pid = c->add_option("--pid", flags->pid,
                                   "Watch this running process and its "
                                   "descendants instead of running a command")
                         ->check(WholeIn(1, 4194304));  // Linux's largest pid_max
  c->add_option("--interval", flags->interval, "Seconds between samples (0.05 to 3600)")
      ->check(FiniteNumber())
      ->capture_default_str();
  c->add_option("--duration", flags->duration,
                "Stop after this many seconds (the command gets SIGTERM); 0 = until it ends")
      ->check(FiniteNumber())
      ->capture_default_str();
  c->add_option("--samples-csv", flags->csv,
                "Write the samples to this CSV file: one row per sample, columns per GPU")
      ->group(kGroupOutput);
  c->add_option("--plot", flags->svg, "Write a plot of GPU, CPU and memory use over time (SVG)")
      ->group(kGroupOutput);
  c->add_option("--instance", flags->instance,
                "The instance type the job runs on, for the advice (default: from the GPUs seen)");
  c->add_option("--pricing", flags->pricing,
                "Prices compared in the advice: ondemand, spot, reserved-1y, reserved-3y")
      ->capture_default_str();
  c->add_flag("--no-gpu", flags->no_gpu, "Do not sample GPUs even when NVML is present");
  AddFormatFlags(c, &flags->format);
  c->add_option("command", flags->command, "The command to run and its arguments, after --");
  c->callback([global, flags, pid]() { Run(*global, *flags, pid->count() > 0); });
}

}  // namespace cloudfit::cli
