// How much one measurement helps: for public measurements of the same workload on several
// GPUs, calibrate on one GPU's figure (as `--measured` does) and predict the others, and
// compare the error with the uncalibrated prediction. The evidence behind `--measured`.
#ifndef CLOUDFIT_CALIBRATION_TRANSFER_H_
#define CLOUDFIT_CALIBRATION_TRANSFER_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/calibration.h"

namespace cloudfit {

struct TransferStats {
  int groups = 0;  // workloads measured on two or more GPU models
  int pairs = 0;   // (calibrated on, predicted) ordered pairs of different GPU models
  double median_ape_before = 0;
  double median_ape_after = 0;
  double p90_ape_before = 0;
  double p90_ape_after = 0;
  // The same over the pairs whose calibrating measurement was far (over 25%) from the model:
  // a job the model misjudges, which is when a user measures and calibrates.
  int far_pairs = 0;
  double far_median_ape_before = 0;
  double far_median_ape_after = 0;
};

// Per speed family (training_throughput, llm_decode, llm_prefill, large_model_training). Cases
// belong to one workload when the source file, model, kind, precision, batch, sequence length
// and GPU count agree; memory and fit cases are not speeds and are left out.
std::map<std::string, TransferStats> ScoreCalibrationTransfer(
    const Catalog& catalog, const std::vector<CalibrationCase>& cases);

}  // namespace cloudfit

#endif  // CLOUDFIT_CALIBRATION_TRANSFER_H_
