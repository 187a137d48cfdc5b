#include "cloudfit/calibration_transfer.h"

#include <cmath>

#include <fmt/format.h>

#include "cloudfit/measured_calibration.h"

namespace cloudfit {

namespace {

bool IsSpeed(MetricFamily family) {
  return family == MetricFamily::kTrainingThroughput || family == MetricFamily::kLlmDecode ||
         family == MetricFamily::kLlmPrefill || family == MetricFamily::kLargeModelTraining;
}

// Cases that measure the same job, differing (at most) in the GPU model.
std::string WorkloadKey(const CalibrationCase& c) {
  const Workload& w = c.workload;
  std::string file = c.id.substr(0, c.id.rfind(':'));
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", MetricFamilyName(c.family), file,
                     w.model.name, WorkloadKindName(w.kind), NumericFormatName(w.precision),
                     w.global_batch, w.micro_batch, w.seq_len, w.prompt_tokens, w.output_tokens,
                     c.num_gpus, c.throughput_scale);
}

Status PredictScaled(const Catalog& catalog, CalibrationCase c, double scale, double* value) {
  c.workload.calibration.all = {scale, scale};
  return PredictCase(catalog, c, value);
}

}  // namespace

std::map<std::string, TransferStats> ScoreCalibrationTransfer(
    const Catalog& catalog, const std::vector<CalibrationCase>& cases) {
  std::map<std::string, std::vector<const CalibrationCase*>> groups;
  for (const CalibrationCase& c : cases) {
    if (IsSpeed(c.family) && c.measured > 0) groups[WorkloadKey(c)].push_back(&c);
  }
  struct Errors {
    int groups = 0;
    std::vector<double> before, after;
    std::vector<double> far_before, far_after;
  };
  // A measurement this far from its own prediction says the model misjudges the job.
  constexpr double kFar = 0.25;
  std::map<std::string, Errors> errors;
  for (const auto& [key, members] : groups) {
    bool counted = false;
    for (const CalibrationCase* from : members) {
      // The scale that reproduces this GPU's measurement, as --measured would find it.
      auto predict = [&](double scale, double* value) {
        return PredictScaled(catalog, *from, scale, value);
      };
      ScaleSearch search;
      if (!SolveSpeedScale(predict, from->measured, true, &search).ok() || !search.found) continue;
      for (const CalibrationCase* to : members) {
        if (to->gpu == from->gpu) continue;
        double before = 0, after = 0;
        if (!PredictScaled(catalog, *to, 1.0, &before).ok() ||
            !PredictScaled(catalog, *to, search.scale, &after).ok()) {
          continue;
        }
        Errors& e = errors[std::string(MetricFamilyName(to->family))];
        e.before.push_back(std::abs(before - to->measured) / to->measured);
        e.after.push_back(std::abs(after - to->measured) / to->measured);
        if (std::abs(search.at_one - from->measured) / from->measured > kFar) {
          e.far_before.push_back(e.before.back());
          e.far_after.push_back(e.after.back());
        }
        if (!counted) {
          ++e.groups;
          counted = true;
        }
      }
    }
  }
  std::map<std::string, TransferStats> out;
  for (const auto& [family, e] : errors) {
    out[family] = {e.groups,
                   static_cast<int>(e.before.size()),
                   Percentile(e.before, 0.5),
                   Percentile(e.after, 0.5),
                   Percentile(e.before, 0.9),
                   Percentile(e.after, 0.9),
                   static_cast<int>(e.far_before.size()),
                   Percentile(e.far_before, 0.5),
                   Percentile(e.far_after, 0.5)};
  }
  return out;
}

}  // namespace cloudfit
