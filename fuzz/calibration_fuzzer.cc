// A user's calibration table (`calibrate report --extra FILE`): any file loads or fails with a
// short message; every row becomes a held-out case, never fitted, or a skipped row with its
// reason; a case's measured figure is finite and not negative, and its estimate is computed or
// refused without a crash. Names resolve against the small fixture catalog.
#include <cmath>
#include <vector>

#include "cloudfit/calibration.h"
#include "fuzz_support.h"

using namespace cloudfit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = fuzz::ScratchFile("extra.csv", fuzz::AsText(data, size));
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  Status s = LoadExtraCases(fuzz::Fixture(), path, &cases, &skipped);
  if (!s.ok()) {
    fuzz::Require(s.message().size() < 4096, "an error message stays short");
    return 0;
  }
  for (const CalibrationCase& c : cases) {
    fuzz::Require(c.held_out && !c.fitted, "a row of an extra table is held out, never fitted");
    fuzz::Require(std::isfinite(c.measured) && c.measured >= 0, "a measured figure is a number");
  }
  for (const SkippedRow& row : skipped) {
    fuzz::Require(!row.reason.empty(), "a skipped row says why");
  }
  // The estimator on whatever workload the file describes: the first few rows keep it quick.
  for (size_t i = 0; i < cases.size() && i < 4; ++i) {
    double predicted = 0;
    if (PredictCase(fuzz::Fixture(), cases[i], &predicted).ok()) {
      fuzz::Require(std::isfinite(predicted), "a prediction is a number");
    }
  }
  return 0;
}
