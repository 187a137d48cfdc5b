// cloudfit probe: measures this machine's CPU, memory, a path's read speed and every NVIDIA GPU,
// and sets each figure beside the catalog's peak. --out saves the JSON for calibration.
#include <unistd.h>

#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cloudfit/cpu_probe.h"
#include "cloudfit/gpu_probe.h"
#include "cloudfit/probe_report.h"
#include "util/file.h"

namespace cloudfit::cli {

namespace {

struct ProbeFlags {
  bool quick = false;
  bool cpu_only = false;
  bool quiet = false;
  bool json = false;
  int threads = 0;
  std::string path;
  double read_mib = 1024;
  std::string out;
};

void RunProbe(const GlobalOptions& global, const ProbeFlags& f) {
  if (f.threads < 0 || f.threads > 4096) {
    throw CliError{fmt::format("--threads: {} is out of range; allowed 1 to 4096 (0 = all)",
                               f.threads)};
  }
  if (!(f.read_mib > 0) || f.read_mib > 1048576 || !std::isfinite(f.read_mib)) {
    throw CliError{"--read-mib: must be between 1 and 1048576 MiB"};
  }
  Catalog catalog = LoadCatalogOrThrow(global);

  CpuProbeOptions cpu_options;
  cpu_options.quick = f.quick;
  cpu_options.threads = f.threads;
  // Progress goes to stderr so --json output stays clean; a terminal sees it overwrite itself.
  auto progress = [&f](const std::string& line) {
    if (f.quiet) return;
    if (isatty(STDERR_FILENO)) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else {
      std::cerr << "probe: " << line << "\n";
    }
  };
  cpu_options.progress = progress;

  ProbeResult result;
  result.cpu = IdentifyCpu();
  if (f.threads > 0) result.cpu.usable_cpus = std::min(result.cpu.usable_cpus, f.threads);
  if (!f.path.empty()) {
    ReadThroughputResult read;
    Status s = MeasureReadThroughput(f.path, f.read_mib * 1048576, cpu_options, &read);
    if (!s.ok()) throw CliError{"--path: " + s.message()};
    result.read = read;
  }
  OtherLoadMeter others;
  CpuGemmResult gemm;
  ThrowIfError(MeasureCpuGemm(cpu_options, &gemm));
  result.cpu_gemm = gemm;
  CpuBandwidthResult bandwidth;
  ThrowIfError(MeasureMemoryBandwidth(cpu_options, &bandwidth));
  result.cpu_bandwidth = bandwidth;
  result.others_busy_fraction = others.OthersBusyFraction();
  if (!f.cpu_only) {
    GpuProbeOptions gpu_options;
    gpu_options.quick = f.quick;
    gpu_options.progress = progress;
    result.gpu = ProbeGpus(gpu_options);
  }
  if (!f.quiet && isatty(STDERR_FILENO)) std::cerr << "\r\033[K" << std::flush;

  nlohmann::json document = ProbeToJson(catalog, result);
  if (!f.out.empty()) {
    Status s = WriteFileAtomically(f.out, document.dump(2) + "\n");
    if (!s.ok()) throw CliError{"--out: " + s.message()};
  }
  if (f.json) {
    PrintJson(document);
  } else {
    std::cout << FormatProbeText(catalog, result);
    if (!f.out.empty()) {
      std::cout << fmt::format("\nwrote {}; pass it to estimate or recommend with --calibration\n",
                               f.out);
    }
  }
}

}  // namespace

void AddProbeCommand(CLI::App* app, const GlobalOptions* global) {
  auto flags = std::make_shared<ProbeFlags>();
  CLI::App* cmd = app->add_subcommand(
      "probe",
      "Measure this machine (CPU GEMM, memory bandwidth, a path's read speed, every NVIDIA GPU) "
      "and compare with the catalog's peaks");
  cmd->add_flag("--quick", flags->quick, "Smaller problems: seconds instead of a minute");
  cmd->add_flag("--cpu-only", flags->cpu_only, "Skip the GPUs");
  cmd->add_option("--threads", flags->threads, "CPU threads to use (default: every usable CPU)");
  cmd->add_option("--path", flags->path,
                  "Measure the read throughput of this file or directory (e.g. the data set)");
  cmd->add_option("--read-mib", flags->read_mib, "Read at most this many MiB of --path")
      ->check(FiniteNumber())
      ->capture_default_str();
  cmd->add_option("--out", flags->out, "Also write the JSON result to this file");
  cmd->add_flag("--json", flags->json, "Print JSON (cloudfit.probe/v1)");
  cmd->add_flag("--quiet", flags->quiet, "No progress lines on stderr");
  cmd->callback([flags, global] { RunProbe(*global, *flags); });
}

}  // namespace cloudfit::cli
