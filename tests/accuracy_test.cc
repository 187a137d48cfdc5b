// Every row of shared/calibration becomes a case; the errors per metric family and GPU are
// printed and must not regress beyond bounds set a little above what was measured when the
// efficiency factors were last fitted (see the closing notes of the estimates issue).
// Skips when ../shared is absent.
#include <cstdio>

#include <gtest/gtest.h>

#include "cloudfit/calibration.h"
#include "cloudfit/calibration_transfer.h"
#include "util/csv.h"
#include "util/file.h"
#include "test_support.h"

namespace cloudfit {
namespace {

// Regression bounds on the median absolute percentage error. Measured at the last fit:
// training 15.2%, decode 5.8%, prefill 17.9%, memory 5.4%, fits agreement 68%; large-model
// training at scale 9.8% (tests/calibration, mostly held out of the fit).
constexpr double kTrainingMedian = 0.17;
constexpr double kDecodeMedian = 0.08;
constexpr double kPrefillMedian = 0.22;
constexpr double kMemoryMedian = 0.08;
constexpr double kFitsAgreement = 0.6;
constexpr double kAnyGpuMedian = 0.3;  // worst measured: RTX A6000 training, 22%
// One known exception: the PEFT benchmark's L40S training rows run Hugging Face's trainer on
// variable-length samples padded per batch, at about half the speed the hardware allows; the
// estimate is hardware-based (Ada borrows Ampere's efficiencies), so it over-predicts them ~3x.
constexpr double kPeftL40sMedian = 2.5;
constexpr double kLargeModelMedian = 0.1;

int DataRows(const std::string& path) {
  std::string text;
  CsvTable table;
  if (!ReadFile(path, &text).ok() || !ParseCsv(text, path, CsvOptions(), &table).ok()) return -1;
  return static_cast<int>(table.rows.size());
}

TEST(AccuracyTest, EstimatesAgainstPublicMeasurements) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  std::string dir = shared + "/calibration";
  ASSERT_TRUE(LoadCalibrationCases(catalog, dir, &cases, &skipped).ok());
  int rows = DataRows(dir + "/train_throughput.csv") + DataRows(dir + "/llm_memory_and_speed.csv");
  EXPECT_EQ(static_cast<int>(cases.size() + skipped.size()), rows)
      << "every calibration row is a case or is listed as not modelled, with its reason";
  for (const SkippedRow& s : skipped) {
    EXPECT_TRUE(s.reason.find("not modelled") != std::string::npos ||
                s.reason.find("not estimated") != std::string::npos ||
                s.reason.find("different workload") != std::string::npos)
        << s.id << ": " << s.reason;
  }
  for (const CalibrationCase& c : cases) {
    double predicted = 0;
    Status s = PredictCase(catalog, c, &predicted);
    EXPECT_TRUE(s.ok()) << c.id << ": " << s.ToString();
  }
  std::map<std::string, ErrorStats> stats = ScoreCases(catalog, cases);
  std::printf("%-44s %6s %8s %8s %9s\n", "metric / GPU", "cases", "median", "p90", "agreement");
  for (const auto& [key, s] : stats) {
    std::printf("%-44s %6d %7.1f%% %7.1f%% %8.0f%%\n", key.c_str(), s.cases, 100 * s.median_ape,
                100 * s.p90_ape, 100 * s.agreement);
  }
  EXPECT_LE(stats["training_throughput"].median_ape, kTrainingMedian);
  EXPECT_LE(stats["llm_decode"].median_ape, kDecodeMedian);
  EXPECT_LE(stats["llm_prefill"].median_ape, kPrefillMedian);
  EXPECT_LE(stats["memory"].median_ape, kMemoryMedian);
  EXPECT_GE(stats["fits"].agreement, kFitsAgreement);
  for (const auto& [key, s] : stats) {
    if (key.find('/') == std::string::npos || key.rfind("fits", 0) == 0) continue;
    double bound = key == "training_throughput/L40S 48GB" ? kPeftL40sMedian : kAnyGpuMedian;
    EXPECT_LE(s.median_ape, bound) << key;
  }
}

// One measurement of a workload on one GPU model (--measured), used to predict the same
// workload on the other GPU models it was measured on: the error must fall.
TEST(AccuracyTest, OneMeasurementImprovesPredictionsOnOtherGpus) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  const Catalog& catalog = testing::BuiltInCatalog();
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadCalibrationCases(catalog, shared + "/calibration", &cases, &skipped).ok());
  std::map<std::string, TransferStats> stats = ScoreCalibrationTransfer(catalog, cases);
  std::printf("%-20s %6s %6s %8s %8s %8s %8s %5s %8s %8s\n", "family", "groups", "pairs",
              "med", "med cal", "p90", "p90 cal", "far", "far med", "far cal");
  for (const auto& [family, t] : stats) {
    std::printf("%-20s %6d %6d %7.1f%% %7.1f%% %7.1f%% %7.1f%% %5d %7.1f%% %7.1f%%\n",
                family.c_str(), t.groups, t.pairs, 100 * t.median_ape_before,
                100 * t.median_ape_after, 100 * t.p90_ape_before, 100 * t.p90_ape_after,
                t.far_pairs, 100 * t.far_median_ape_before, 100 * t.far_median_ape_after);
  }
  const TransferStats& training = stats["training_throughput"];
  ASSERT_GE(training.pairs, 20) << "the public data measure many workloads on several GPUs";
  ASSERT_GE(training.far_pairs, 5);
  // Where the model misjudges the job, one measurement fixes most of it on the other GPUs too.
  EXPECT_LT(training.far_median_ape_after, 0.5 * training.far_median_ape_before);
  // Where it does not, calibrating moves the error by GPU-to-GPU noise only: the efficiencies
  // were fitted to these very rows, so the median cannot improve, but it must not get much worse.
  EXPECT_LT(training.median_ape_after, training.median_ape_before + 0.03);
}

// Large-model training at scale (MosaicML, Megatron-LM, Korthikanti et al., Llama 3, NeMo): the
// rows live in this repository, so this check runs without ../shared.
TEST(AccuracyTest, LargeModelTrainingAtScale) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadLargeModelCases(catalog,
                                  testing::SourcePath("tests/calibration/large_model_training.csv"),
                                  &cases, &skipped)
                  .ok());
  EXPECT_GE(cases.size(), 30u);
  for (const SkippedRow& s : skipped) ADD_FAILURE() << s.id << ": " << s.reason;
  std::map<std::string, ErrorStats> stats = ScoreCases(catalog, cases);
  for (const auto& [key, s] : stats) {
    std::printf("%-44s %6d %7.1f%% %7.1f%%\n", key.c_str(), s.cases, 100 * s.median_ape,
                100 * s.p90_ape);
  }
  EXPECT_LE(stats["large_model_training"].median_ape, kLargeModelMedian);
}

}  // namespace
}  // namespace cloudfit
