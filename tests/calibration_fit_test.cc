// The efficiency fit and its cross-validation, on the LLM rows of shared/calibration (the
// cheapest to predict, so a whole leave-one-GPU-out run stays short), and the cross-validated
// figures of the training rows. Skips without ../shared.
#include "cloudfit/calibration_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "test_support.h"

namespace cloudfit {
namespace {

std::vector<CalibrationCase> LlmCases(const Catalog& catalog, const std::string& shared) {
  std::vector<CalibrationCase> all, llm;
  std::vector<SkippedRow> skipped;
  EXPECT_TRUE(LoadCalibrationCases(catalog, shared + "/calibration", &all, &skipped).ok());
  for (CalibrationCase& c : all) {
    if (c.family == MetricFamily::kLlmDecode || c.family == MetricFamily::kLlmPrefill) {
      llm.push_back(std::move(c));
    }
  }
  return llm;
}

TEST(CalibrationFitTest, FitLowersItsObjectiveAndRestartsFromTheSamePlace) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> cases = LlmCases(catalog, shared);
  ASSERT_GE(cases.size(), 100u);
  FitOptions options;
  options.passes = 1;
  FitReport first;
  ASSERT_TRUE(FitEfficiency(&catalog, cases, options, &first).ok());
  EXPECT_GT(first.parameters, 0);
  EXPECT_EQ(first.cases, static_cast<int>(cases.size()));
  EXPECT_LT(first.objective_after, first.objective_before);
  std::string fitted = FormatEfficiencyCsv(catalog.efficiency());
  // A second fit starts from fixed values, not from the first fit's: the same answer.
  FitReport second;
  ASSERT_TRUE(FitEfficiency(&catalog, cases, options, &second).ok());
  EXPECT_EQ(FormatEfficiencyCsv(catalog.efficiency()), fitted);
  EXPECT_DOUBLE_EQ(second.objective_after, first.objective_after);
}

// Why data/efficiency.csv ships its cited starting values and not fitted ones: fitted to the
// other GPUs, the fractions predict a left-out GPU's LLM rows worse than the unfitted table
// predicts them. If a change to the model makes the fit carry, this fails, and the fitted
// values should then be committed.
TEST(CalibrationFitTest, FittedValuesCarryToLeftOutGpusNoBetterThanTheShippedTable) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> cases = LlmCases(catalog, shared);
  std::map<std::string, ErrorStats> shipped = ScoreCases(catalog, cases);
  FitOptions options;
  options.passes = 1;
  CrossValidation cv;
  ASSERT_TRUE(CrossValidate(&catalog, cases, Holdout::kGpu, options, &cv).ok());
  EXPECT_EQ(FormatEfficiencyCsv(catalog.efficiency()),
            FormatEfficiencyCsv(testing::BuiltInCatalog().efficiency()))
      << "cross-validation restores the table";
  for (const char* family : {"llm_decode", "llm_prefill"}) {
    ASSERT_TRUE(cv.stats.count(family)) << family;
    std::printf(
        "%-12s shipped median %5.1f%% p90 %5.1f%% | leave-one-GPU-out fit median %5.1f%% "
        "p90 %5.1f%%\n",
        family, 100 * shipped[family].median_ape, 100 * shipped[family].p90_ape,
        100 * cv.stats[family].median_ape, 100 * cv.stats[family].p90_ape);
    EXPECT_EQ(cv.stats[family].cases, shipped[family].cases) << "every row predicted once";
  }
  double shipped_sum = shipped["llm_decode"].median_ape + shipped["llm_prefill"].median_ape;
  double cv_sum = cv.stats["llm_decode"].median_ape + cv.stats["llm_prefill"].median_ape;
  EXPECT_LE(shipped_sum, cv_sum);
}

// The generalisation figures of the LLM rows (docs/estimation.md, "Fitting and accuracy"): each
// GPU's, then each model's, rows predicted by a fit that never saw them, with the report's
// two passes. Measured 2026-11-29: leave one GPU out, decode 5.7% (p90 20.3%) and prefill
// 9.1% (p90 71.1%) median; leave one model out, 4.5% (16.8%) and 9.4% (71.5%) (before llama.cpp
// ran the kernels of ggml's graph: 8.8% (18.4%), 12.7% (70.9%), 7.8% (14.8%), 9.4% (67.9%);
// before its decode was timed as a launch queue with its host time per launch fitted: 10.2%
// (21.1%), 12.2% (67.2%), 8.0% (14.8%), 9.3% (67.8%); before prompts
// ran in llama.cpp's micro-batches with FP32 scores: prefill 13.7% (70.7%) and 10.4% (71.4%);
// before llama.cpp's per-SM decode throughput scaled with the SM clock: 11.9% (24.9%), 13.8%,
// 9.8% (17.2%), 11.2%; before
// the layer-split hand-off carried the hidden states over the link: 13.3%, 16.1%, 9.8% (19.9%),
// 11.4%; before GeForce's FP16-accumulate rate was held to its measured share: prefill 24.0%
// and 18.7%). Bounds sit a little above, below what reverting any of these changes gives.
TEST(CalibrationFitTest, CrossValidatedLlmErrorsStayWithinTheirBounds) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> cases = LlmCases(catalog, shared);
  FitOptions options;
  options.passes = 2;
  struct Bound {
    Holdout holdout;
    double decode, prefill, decode_p90, prefill_p90;
  };
  for (Bound b : {Bound{Holdout::kGpu, 0.07, 0.10, 0.22, 0.73},
                  Bound{Holdout::kModel, 0.06, 0.10, 0.18, 0.73}}) {
    CrossValidation cv;
    ASSERT_TRUE(CrossValidate(&catalog, cases, b.holdout, options, &cv).ok());
    std::printf(
        "leave one %s out: decode median %5.1f%% p90 %5.1f%%, prefill median %5.1f%% "
        "p90 %5.1f%%\n",
        std::string(HoldoutName(b.holdout)).c_str(), 100 * cv.stats["llm_decode"].median_ape,
        100 * cv.stats["llm_decode"].p90_ape, 100 * cv.stats["llm_prefill"].median_ape,
        100 * cv.stats["llm_prefill"].p90_ape);
    EXPECT_LE(cv.stats["llm_decode"].median_ape, b.decode) << HoldoutName(b.holdout);
    EXPECT_LE(cv.stats["llm_prefill"].median_ape, b.prefill) << HoldoutName(b.holdout);
    EXPECT_LE(cv.stats["llm_decode"].p90_ape, b.decode_p90) << HoldoutName(b.holdout);
    EXPECT_LE(cv.stats["llm_prefill"].p90_ape, b.prefill_p90) << HoldoutName(b.holdout);
  }
}

// The generalisation figures of the training rows (train_throughput.csv: ten models on six GPUs,
// 1-8 GPUs each), with the report's two passes. Measured 2026-11-29 on these 320 rows: leave one
// GPU out 12.0% median, 29.1% p90; leave one model out 11.4%, 39.1% (before 1-D convolutions on
// tensor cores paid their layout copies: 12.3%/29.9% and 11.7%/40.8%; before the softmax
// cross-entropy moved what PyTorch's kernels move, 2026-11-25: 13.2%/30.7% and 14.2%/41.5%; before
// PyTorch's per-SM throughput scaled with the SM clock: 13.8%/32.2% and 15.1%/42.4%; before
// Tacotron 2's calls that launch no kernel, its per-frame select and Hopper's CUDA 11.8 matrix
// rate: 14.4%/33.1% and 17.7%/52.5%; before Transformer-XL's QKV projection over the remembered
// segment: 15.8%/34.3% and 21.4%/52.8%; before the recurrent weight gradients of cuDNN and of host
// step loops: 16.2%/36.9% and 20.9%/67.5%; before the data-parallel layout, Tacotron's fitted rows,
// FP32 Winograd and GNMT's padding: 21.6%/54.0% and 28.3%/77.7%). Bounds sit a little above, below
// what any one of those changes reverted gives.
TEST(CalibrationFitTest, CrossValidatedTrainingErrorsStayWithinTheirBounds) {
#ifdef CLOUDFIT_SANITIZED
  // ~700 refits: about a minute in the release build, over ten under ASan + UBSan in Debug.
  GTEST_SKIP() << "arithmetic only; run by the release suite";
#endif
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::vector<CalibrationCase> all, cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadCalibrationCases(catalog, shared + "/calibration", &all, &skipped).ok());
  for (CalibrationCase& c : all) {
    if (c.id.rfind("train_throughput.csv:", 0) == 0) cases.push_back(std::move(c));
  }
  ASSERT_GE(cases.size(), 300u);
  FitOptions options;
  options.passes = 2;
  struct Bound {
    Holdout holdout;
    double median, p90;
  };
  for (Bound b : {Bound{Holdout::kGpu, 0.125, 0.30}, Bound{Holdout::kModel, 0.12, 0.40}}) {
    CrossValidation cv;
    ASSERT_TRUE(CrossValidate(&catalog, cases, b.holdout, options, &cv).ok());
    const ErrorStats& s = cv.stats["training_throughput"];
    std::printf("leave one %s out: training median %5.1f%% p90 %5.1f%% over %d rows\n",
                std::string(HoldoutName(b.holdout)).c_str(), 100 * s.median_ape, 100 * s.p90_ape,
                s.cases);
    EXPECT_EQ(s.cases, static_cast<int>(cases.size())) << "every row predicted once";
    EXPECT_LE(s.median_ape, b.median) << HoldoutName(b.holdout);
    EXPECT_LE(s.p90_ape, b.p90) << HoldoutName(b.holdout);
  }
}

// Not a check: every row of shared/calibration predicted by the fit that left out its GPU, then
// its model, as CSV on stdout, with each fold's fitted values; for finding the rows behind the
// cross-validated figures. Run with --gtest_also_run_disabled_tests
// --gtest_filter='*PrintCrossValidatedRows' (about two minutes in release).
TEST(CalibrationFitTest, DISABLED_PrintCrossValidatedRows) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  // CLOUDFIT_CATALOG=DIR scores a changed copy of data/ without a rebuild.
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadDefault("", &catalog).ok());
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  ASSERT_TRUE(LoadCalibrationCases(catalog, shared + "/calibration", &cases, &skipped).ok());
  // CLOUDFIT_CV_LLM_ONLY=1 keeps the LLM rows (seconds instead of minutes);
  // CLOUDFIT_CV_TRAINING_ONLY=1 the training rows.
  if (const char* llm = std::getenv("CLOUDFIT_CV_LLM_ONLY"); llm != nullptr && *llm == '1') {
    cases = LlmCases(catalog, shared);
  }
  if (const char* t = std::getenv("CLOUDFIT_CV_TRAINING_ONLY"); t != nullptr && *t == '1') {
    std::erase_if(cases, [](const CalibrationCase& c) {
      return c.family != MetricFamily::kTrainingThroughput;
    });
  }
  FitOptions options;
  options.passes = 2;
  // CLOUDFIT_CV_PASSES=N fits each fold with N passes (the report's default is 9).
  if (const char* p = std::getenv("CLOUDFIT_CV_PASSES"); p != nullptr && *p != '\0') {
    options.passes = std::clamp(std::atoi(p), 1, 9);
  }
  std::printf("holdout,id,family,gpus,gpu,model,precision,micro_batch,measured,predicted,error\n");
  for (Holdout holdout : {Holdout::kGpu, Holdout::kModel}) {
    CrossValidation cv;
    ASSERT_TRUE(CrossValidate(&catalog, cases, holdout, options, &cv).ok());
    for (const CrossValidation::Row& r : cv.rows) {
      const CalibrationCase& c = *r.c;
      std::printf(
          "%s,%s,%s,%d,%s,\"%s\",%s,%d,%g,%g,%.1f%%\n", std::string(HoldoutName(holdout)).c_str(),
          c.id.c_str(), std::string(MetricFamilyName(c.family)).c_str(), c.num_gpus, c.gpu.c_str(),
          c.workload.model.name.c_str(),
          std::string(NumericFormatName(c.workload.precision)).c_str(), c.workload.micro_batch,
          c.measured, r.predicted, 100 * (r.predicted - c.measured) / c.measured);
    }
    for (const auto& [group, values] : cv.fitted) {
      std::printf("# fit without %s: %s\n", group.c_str(), values.c_str());
    }
  }
}

}  // namespace
}  // namespace cloudfit
