// Dispatches a workload to the estimator of its kind, and holds what they share: device rates,
// compute classes, explanation terms, and data preprocessing (the simplest kind).
#include "cloudfit/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "estimate/estimate_internal.h"
#include "estimate/estimate_scratch.h"

namespace cloudfit {

std::string ComputeClass(const Model& m) {
  if (!m.compute_class.empty()) return m.compute_class;
  if (m.layers > 0 && m.hidden > 0) return "transformer";
  return "cnn";  // CNNs, U-Nets, and vision models given by per-sample FLOPs
}

void AddTerm(Estimate* e, std::string name, double value, std::string unit, std::string formula) {
  e->terms.push_back({std::move(name), value, std::move(unit), std::move(formula)});
}

Status EstimatePreprocess(const Catalog&, const Workload& w, const Hardware& hw, Estimate* e) {
  int vcpus = hw.vcpus_per_node;
  if (vcpus <= 0) {
    return Status::InvalidArgument(
        "--instance: preprocessing runs on an instance's vCPUs; name an instance type");
  }
  e->runs_on_gpu = false;
  double rate_bytes_per_s = w.per_core_mb_s * 1e6 * vcpus * hw.nodes;
  double bytes = w.data_gb * 1e9;
  e->throughput = rate_bytes_per_s / 1e9;
  e->throughput_unit = "GB/s";
  e->total_s = bytes / rate_bytes_per_s;
  e->time.step_s = e->total_s;
  e->bottleneck = "CPU";
  e->memory.capacity_bytes = hw.host_memory_bytes_per_node;
  // Data larger than RAM streams from storage; the working set is a few batches per core.
  e->memory.activations_bytes = std::min(bytes, 0.5 * hw.host_memory_bytes_per_node);
  if (bytes > hw.host_memory_bytes_per_node * hw.nodes) {
    e->notes.push_back(fmt::format(
        "{:.0f} GB of data is more than the {:.0f} GiB of RAM: stream it from object storage "
        "instead of loading it whole",
        w.data_gb, hw.host_memory_bytes_per_node * hw.nodes / (1024.0 * 1024 * 1024)));
  }
  if (w.storage_gb_s && *w.storage_gb_s * 1e9 < rate_bytes_per_s) {
    e->total_s = bytes / (*w.storage_gb_s * 1e9);
    e->bottleneck = "storage";
  }
  AddTerm(e, "cpu throughput", rate_bytes_per_s / 1e6, "MB/s",
          fmt::format("{} vCPUs x {} MB/s per vCPU x {} nodes", vcpus, w.per_core_mb_s, hw.nodes));
  AddTerm(e, "total time", e->total_s / 3600, "h", "data / throughput");
  return Status::OK();
}

EstimateScratch::EstimateScratch() = default;
EstimateScratch::~EstimateScratch() = default;

EstimateScratch::Tables& EstimateScratch::For(const Workload& workload) {
  if (workload_ != &workload || !tables_) {
    tables_ = std::make_unique<Tables>();
    workload_ = &workload;
  }
  return *tables_;
}

Status EstimateWorkload(const Catalog& catalog, const Workload& w, const Hardware& hw,
                        Estimate* out, const EstimateOptions& options) {
  *out = Estimate();
  out->hardware = hw.name;
  Status s = Status::InvalidArgument("kind: not supported");
  switch (w.kind) {
    case WorkloadKind::kTrain:
    case WorkloadKind::kLora:
    case WorkloadKind::kQlora:
      s = EstimateTraining(catalog, w, hw, options, out);
      break;
    case WorkloadKind::kInference:
    case WorkloadKind::kServing:
      s = EstimateInference(catalog, w, hw, out);
      break;
    case WorkloadKind::kRender:
    case WorkloadKind::kRealtimeRender:
    case WorkloadKind::kCad:
      s = EstimateVisual(catalog, w, hw, out);
      break;
    case WorkloadKind::kPreprocess:
      s = EstimatePreprocess(catalog, w, hw, out);
      break;
    case WorkloadKind::kClassicMl:
      s = EstimateClassicMl(catalog, w, hw, out);
      break;
  }
  // Estimators other than training write their few terms as they go; they are dropped here so
  // that an estimate without explanation has none, whatever its kind.
  if (!options.explain) out->terms.clear();
  if (s.ok() && w.calibration.active()) {
    std::string device = hw.has_gpu() ? hw.gpu->name : hw.cpu != nullptr ? hw.cpu->name : "";
    out->calibration_scale = w.calibration.For(device);
  }
  return s;
}

}  // namespace cloudfit
