// Fits the efficiency factors of data/efficiency.csv to calibration cases, by coordinate
// descent on a log grid that minimises a robust (Cauchy) loss of the log errors, averaged per
// GPU. Used by `cloudfit calibrate fit`; the result is reviewed and committed as data.
#ifndef CLOUDFIT_CALIBRATION_FIT_H_
#define CLOUDFIT_CALIBRATION_FIT_H_

#include <string>
#include <vector>

#include "cloudfit/calibration.h"

namespace cloudfit {

struct FitReport {
  int parameters = 0;
  int cases = 0;
  double objective_before = 0;  // see Objective in calibration_fit.cc
  double objective_after = 0;
};

// Rewrites the fitted rows of `catalog`'s efficiency table in place (adding rows it needs).
Status FitEfficiency(Catalog* catalog, const std::vector<CalibrationCase>& cases,
                     FitReport* report);

// Renders an efficiency table as data/efficiency.csv.
std::string FormatEfficiencyCsv(const EfficiencyTable& table);

}  // namespace cloudfit

#endif  // CLOUDFIT_CALIBRATION_FIT_H_
