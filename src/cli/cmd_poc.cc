// cloudfit poc: the proof of concept before committing to an instance: single-GPU throughput,
// scaling efficiency to N GPUs and the time to recover from a preemption, measured by running
// the user's own training command.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cloudfit/gpu_sampler.h"
#include "cloudfit/poc.h"
#include "measure/child_process.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct PocFlags {
  PocOptions options;
  bool json = false;
  bool quiet = false;
};

void Run(PocFlags& f, bool gpus_given) {
  PocOptions& o = f.options;
  if (gpus_given && o.gpus < 1) {
    throw CliError{"--gpus: " + std::to_string(o.gpus) + " is not allowed; give 1 or more"};
  }
  // Checked before looking for GPUs, so a typo is reported as such on any machine.
  ThrowIfError(CheckPocOptions(o));

  std::string why_not;
  std::unique_ptr<GpuSampler> sampler = OpenGpuSampler(&why_not);
  int visible = sampler ? sampler->device_count() : 0;
  sampler.reset();
  if (!gpus_given) {
    if (visible == 0) {
      throw CliError{"--gpus: no GPU is visible (" + why_not +
                     "); give --gpus N to run the command anyway"};
    }
    o.gpus = visible;
  } else if (visible == 0) {
    std::cerr << fmt::format("cloudfit poc: warning: no GPU is visible ({}); running with "
                             "--gpus {} as asked\n",
                             why_not, o.gpus);
  } else if (visible < o.gpus) {
    throw CliError{fmt::format("--gpus: {} asked, but NVML sees only {} GPU(s)", o.gpus, visible)};
  }

  if (!f.quiet) {
    o.on_output = [](int gpus, const std::string& line) {
      std::cerr << fmt::format("[{} GPU{}] {}\n", gpus, gpus == 1 ? "" : "s", line);
    };
  }
  o.on_progress = [](const std::string& line) { std::cerr << "cloudfit poc: " << line << "\n"; };

  PocResult result;
  {
    SignalCatcher catcher;
    ThrowIfError(RunPoc(o, &result));
  }
  if (f.json) {
    PrintJson(PocJson(result));
  } else {
    std::cout << PocText(result);
  }
}

}  // namespace

void AddPocCommand(CLI::App* app, const GlobalOptions* /*global*/) {
  auto flags = std::make_shared<PocFlags>();
  PocOptions& o = flags->options;
  CLI::App* c = app->add_subcommand(
      "poc",
      "Proof of concept: run a training command (after --) on 1 GPU and on N, report "
      "throughput, scaling efficiency and, with --checkpoint-dir and --kill-after, MTTR");
  CLI::Option* gpus = c->add_option(
      "--gpus", o.gpus, "GPUs of the multi-GPU run (default: all GPUs NVML sees); '{gpus}' in "
                        "the command becomes the count of each run");
  c->add_option("--duration", o.duration_seconds,
                "Seconds per run, unless the command ends first")
      ->check(FiniteNumber())
      ->capture_default_str();
  c->add_option("--throughput-regex", o.throughput_regex,
                "Regular expression (ECMAScript, case-insensitive) whose first group is the "
                "throughput; default matches '12.3 it/s', 'samples/s', 'tokens/s', ...");
  c->add_option("--warmup", o.warmup, "Throughput values dropped at the start of each run")
      ->capture_default_str();
  c->add_option("--checkpoint-dir", o.checkpoint_dir,
                "Where the command writes checkpoints (for lost work; with --kill-after)");
  c->add_option("--kill-after", o.kill_after_seconds,
                "Kill the N-GPU run's process group (SIGKILL) after this many seconds, restart "
                "it and time the recovery (MTTR)")
      ->check(FiniteNumber());
  c->add_option("--restart-timeout", o.restart_timeout_seconds,
                "Seconds the restarted run may take to print throughput")
      ->check(FiniteNumber())
      ->capture_default_str();
  c->add_option("--stop-grace", o.stop_grace_seconds,
                "Seconds between SIGTERM and SIGKILL when a run's time is up")
      ->check(FiniteNumber())
      ->capture_default_str();
  c->add_flag("--quiet", flags->quiet, "Do not echo the command's output (to stderr)");
  c->add_flag("--json", flags->json, "Print JSON (cloudfit.poc/v1)");
  c->add_option("command", o.command, "The training command and its arguments, after --");
  c->callback([flags, gpus]() { Run(*flags, gpus->count() > 0); });
}

}  // namespace cloudfit::cli
