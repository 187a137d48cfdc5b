// Fits the software-stack fractions of data/efficiency.csv to calibration cases, by coordinate
// descent on a log grid that minimises a robust (Cauchy) loss of the log errors, averaged per
// GPU. Used by `cloudfit calibrate fit`; the result is reviewed and committed as data. Also
// cross-validates: refits without one GPU (or one model) and predicts the rows left out, which
// is how well the estimates carry to hardware and models they were not fitted on.
#ifndef CLOUDFIT_CALIBRATION_FIT_H_
#define CLOUDFIT_CALIBRATION_FIT_H_

#include <map>
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

struct FitOptions {
  // Coordinate-descent passes: the first scan each parameter's whole range, later ones a
  // shrinking window around its value. Fewer passes fit faster and a little less tightly.
  int passes = 9;
};

// Rewrites the fitted rows of `catalog`'s efficiency table in place (adding rows it needs).
// Only cases in `which` (indices into `cases`) inform the fit; empty = all.
Status FitEfficiency(Catalog* catalog, const std::vector<CalibrationCase>& cases,
                     const FitOptions& options, FitReport* report,
                     const std::vector<size_t>& which = {});

enum class Holdout { kGpu, kModel };
std::string_view HoldoutName(Holdout holdout);  // "gpu", "model"

// Per held-out group ("A100-SXM4-80GB", "BERT-large-uncased"), per metric family, the errors
// of predictions made with parameters fitted without that group.
struct CrossValidation {
  Holdout holdout = Holdout::kGpu;
  // "family" and "family/group" keys, as ScoreCases gives them.
  std::map<std::string, ErrorStats> stats;
  // Every row left out, with its prediction by the fit that did not see it (0 when the
  // estimate failed), in the cases' order within each group: which rows make the figures.
  struct Row {
    const CalibrationCase* c = nullptr;
    double predicted = 0;
  };
  std::vector<Row> rows;
  // What each group's fit set the fitted rows of data/efficiency.csv to ("dispatch_us/pytorch/gpu
  // = 40, ..."), so a reader sees which parameter a left-out group would have needed.
  std::map<std::string, std::string> fitted;
};

// Leaves out each GPU (or model) in turn, refits on the rest, predicts the rows left out. The
// catalog's efficiency table is restored afterwards.
Status CrossValidate(Catalog* catalog, const std::vector<CalibrationCase>& cases, Holdout holdout,
                     const FitOptions& options, CrossValidation* out);

// Renders an efficiency table as data/efficiency.csv.
std::string FormatEfficiencyCsv(const EfficiencyTable& table);

}  // namespace cloudfit

#endif  // CLOUDFIT_CALIBRATION_FIT_H_
