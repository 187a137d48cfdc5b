// Scores estimates against calibration cases: each case's prediction, and the error of a set
// of them per metric family and per GPU.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cloudfit/calibration.h"
#include "cloudfit/estimate.h"

namespace cloudfit {

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * (v.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

std::string_view MetricFamilyName(MetricFamily family) {
  switch (family) {
    case MetricFamily::kTrainingThroughput:
      return "training_throughput";
    case MetricFamily::kLlmDecode:
      return "llm_decode";
    case MetricFamily::kLlmPrefill:
      return "llm_prefill";
    case MetricFamily::kMemory:
      return "memory";
    case MetricFamily::kFits:
      return "fits";
    case MetricFamily::kLargeModelTraining:
      return "large_model_training";
  }
  return "";
}

Status PredictCase(const Catalog& catalog, const CalibrationCase& c, double* predicted) {
  Hardware hw;
  HardwareSpec spec = c.hardware;
  if (c.independent_replicas) spec.gpus = 1;
  Status s = ResolveHardware(catalog, spec, &hw);
  if (!s.ok()) return s;
  Estimate e;
  s = EstimateWorkload(catalog, c.workload, hw, &e);
  if (!s.ok()) return s;
  switch (c.family) {
    case MetricFamily::kTrainingThroughput:
    case MetricFamily::kLargeModelTraining:
      *predicted = e.throughput * c.throughput_scale * (c.independent_replicas ? c.num_gpus : 1);
      break;
    case MetricFamily::kLlmDecode:
      *predicted = e.serving ? 1.0 / e.serving->tpot_s : 0;
      break;
    case MetricFamily::kLlmPrefill:
      *predicted = e.serving ? c.workload.prompt_tokens / e.serving->prefill_s : 0;
      break;
    case MetricFamily::kMemory:
      *predicted = e.memory.total_bytes();
      // The estimate's runtime share includes the context; the allocator's figure does not.
      if (c.allocator_view && c.hardware.gpus > 0) *predicted -= kCudaContextBytes;
      break;
    case MetricFamily::kFits:
      *predicted = e.fits ? 1 : 0;
      break;
  }
  return Status::OK();
}

std::map<std::string, ErrorStats> ScoreCases(const Catalog& catalog,
                                             const std::vector<CalibrationCase>& cases) {
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, std::pair<int, int>> agreement;  // right, total
  for (const CalibrationCase& c : cases) {
    double predicted = 0;
    if (!PredictCase(catalog, c, &predicted).ok()) continue;
    std::string family(MetricFamilyName(c.family));
    if (c.held_out && c.family != MetricFamily::kLargeModelTraining) family += " (held out)";
    std::string gpu = family + "/" + c.gpu;
    if (c.family == MetricFamily::kFits) {
      bool right = (predicted > 0.5) == (c.measured > 0.5);
      for (const std::string& key : {family, gpu}) {
        agreement[key].first += right;
        agreement[key].second += 1;
      }
      continue;
    }
    if (c.measured <= 0) continue;
    double ape = std::abs(predicted - c.measured) / c.measured;
    errors[family].push_back(ape);
    errors[gpu].push_back(ape);
  }
  std::map<std::string, ErrorStats> out;
  for (const auto& [key, v] : errors) {
    out[key] = {static_cast<int>(v.size()), Percentile(v, 0.5), Percentile(v, 0.9), 0};
  }
  for (const auto& [key, a] : agreement) {
    ErrorStats& s = out[key];
    s.cases = a.second;
    s.agreement = static_cast<double>(a.first) / a.second;
  }
  return out;
}

}  // namespace cloudfit
