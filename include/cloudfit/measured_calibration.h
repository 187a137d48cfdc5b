// Calibrating estimates from measurements, in the spirit of Habitat (Yu et al., USENIX ATC
// 2021): a throughput measured for this workload on one hardware choice fixes the model's speed
// there, and the other hardware is rescaled through the model's compute and bandwidth terms;
// a probe of this machine (cloudfit.probe/v1) corrects the probed device's own rates.
#ifndef CLOUDFIT_MEASURED_CALIBRATION_H_
#define CLOUDFIT_MEASURED_CALIBRATION_H_

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cloudfit/catalog.h"
#include "cloudfit/hardware.h"
#include "cloudfit/workload.h"

namespace cloudfit {

struct ThroughputMeasurement {
  double value = 0;
  std::string unit;  // it/s, s/it, samples/s (images/s, sequences/s), tokens/s, frames/h
  HardwareSpec hardware;
  std::string text;  // as the user wrote it
};

// Parses "1.9 it/s on 1x A10", "450 tokens/s on 2x A100-80GB", "0.8 s/it on g5.xlarge" or
// "12 samples/s on p4d.24xlarge x2". Errors say which part is wrong and what is allowed.
Status ParseThroughputMeasurement(const Catalog& catalog, std::string_view text,
                                  ThroughputMeasurement* out);

// The model's prediction for `workload` on the measured hardware, in the measurement's unit.
Status PredictInUnit(const Catalog& catalog, const Workload& workload,
                     const ThroughputMeasurement& measurement, double* predicted);

// The search for the speed scale that makes a prediction equal a measurement.
struct ScaleSearch {
  bool found = false;       // false: no scale in [1e-3, 1e3] reproduces the target
  double scale = 1;
  double at_one = 0;        // the prediction before calibration
  double lowest = 0;        // the range the prediction covers over all scales
  double highest = 0;
};

// Bisection on the logarithm of the scale. `predict(scale, &value)` must be monotone in the
// scale: increasing for rates, decreasing for times (`increasing` false). Fails only when
// `predict` does.
Status SolveSpeedScale(const std::function<Status(double scale, double* value)>& predict,
                       double target, bool increasing, ScaleSearch* out);

struct CalibrationOutcome {
  double scale = 1;             // applied to every device's compute and bandwidth
  double predicted_before = 0;  // in the measurement's unit
  double predicted_after = 0;
};

// Finds the speed scale that makes the prediction on the measured hardware equal the
// measurement and stores it in workload->calibration (the workload must be finalized). Fails
// when no scale reproduces it: a measurement faster than communication or the input pipeline
// allows, or a workload whose estimate does not depend on device speed (rendering from scores).
Status CalibrateFromThroughput(const Catalog& catalog, const ThroughputMeasurement& measurement,
                               Workload* workload, CalibrationOutcome* outcome);

// Applies a probe (cloudfit.probe/v1): each measured GPU's GEMM rate at the workload's
// precision and its copy bandwidth, and the CPU's GEMM and triad, set against what that kind
// of benchmark reaches on a typical machine (data/efficiency.csv, probe_* rows), scale that
// device's rates. Errors name the JSON field that is missing or wrong.
Status CalibrateFromProbe(const Catalog& catalog, const nlohmann::json& probe, Workload* workload);

}  // namespace cloudfit

#endif  // CLOUDFIT_MEASURED_CALIBRATION_H_
