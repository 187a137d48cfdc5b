// What `cloudfit probe` found, set beside the catalog's datasheet peaks: as a table for people
// and as JSON (cloudfit.probe/v1) for programs and for calibrating estimates.
#ifndef CLOUDFIT_PROBE_REPORT_H_
#define CLOUDFIT_PROBE_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cloudfit/catalog.h"
#include "cloudfit/cpu_probe.h"
#include "cloudfit/gpu_probe.h"

namespace cloudfit {

struct ProbeResult {
  CpuIdentity cpu;
  std::optional<CpuGemmResult> cpu_gemm;
  std::optional<CpuBandwidthResult> cpu_bandwidth;
  std::optional<ReadThroughputResult> read;
  std::optional<GpuSystemProbe> gpu;  // absent with --cpu-only
  double others_busy_fraction = 0;     // CPU time other processes took during the CPU steps
};

// One measured figure beside its datasheet peak.
struct ProbeFigure {
  std::string subject;  // "CPU", "GPU 0"
  std::string measure;  // "FP32 GEMM", "memory triad", "BF16 GEMM", "host to device", ...
  double measured = 0;  // in SI units per second: FLOP/s or bytes/s
  std::string unit;     // "FLOP/s" or "B/s"
  std::optional<double> peak;  // the catalog's figure it is compared with
  std::string peak_basis;      // what the peak is: "2 vCPUs x 96 GFLOP/s", "PCIe gen 5 x16"
  std::string note;
};

std::vector<ProbeFigure> ProbeFigures(const Catalog& catalog, const ProbeResult& result);

nlohmann::json ProbeToJson(const Catalog& catalog, const ProbeResult& result);
std::string FormatProbeText(const Catalog& catalog, const ProbeResult& result);

}  // namespace cloudfit

#endif  // CLOUDFIT_PROBE_REPORT_H_
