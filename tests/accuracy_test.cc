// Every row of shared/calibration becomes a case; the errors per metric family and GPU are
// printed and must not regress beyond bounds set a little above what was measured when the
// efficiency factors were last fitted (see the closing notes of the estimates issue).
// Skips when ../shared is absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <set>

#include "cloudfit/calibration.h"
#include "cloudfit/calibration_transfer.h"
#include "cloudfit/estimate.h"
#include "cloudfit/hardware.h"
#include "test_support.h"
#include "util/csv.h"
#include "util/file.h"

namespace cloudfit {
namespace {

// Regression bounds on the median absolute percentage error of the shipped table. Its rows are
// cited starting values that no row was fitted to, except llama.cpp's four decode rows (three
// until its decode was timed as a launch queue, 2026-11-29, with the host's time per launch),
// fitted to these decode rows once the fit carried to left-out GPUs better than the starting
// values, and its GEMM fraction, fitted to the prompt rows once prompts ran ggml's graph (why:
// CalibrationFitTest and docs/estimation.md; the generalisation figures are asserted there, in
// CrossValidatedLlmErrorsStayWithinTheirBounds and CrossValidatedTrainingErrorsStayWithin-
// TheirBounds). Measured 2026-11-24 on shared/calibration: training 18.6% (16.5% once the
// softmax cross-entropy over a vocabulary moved what PyTorch's kernels move, 2026-11-29: 48
// bytes per logit under autocast and 36 in FP32, where 32 and 20 were counted; 15.8% once 1-D
// convolutions on tensor cores paid their layout copies; 19.9% before the recurrent weight
// gradients and Transformer-XL's memory projection, 22.0% before the data-parallel
// layout of DLE rows, FP32 Winograd and GNMT's padding), decode 6.6% (in sample; 6.0% with the
// launch queue, 4.7% over the kernels of ggml's graph), prefill 16.5% (8.3% over ggml's graph,
// with llama.cpp's GEMM fraction fitted), memory 9.3% (5.4% before the loss's peak counted 12 bytes
// per logit instead of 6 and allocator-view rows left out the CUDA context: the PEFT rows, whose
// length at their p99 is not stated, rose while the fixed-length held-out rows fell), fits
// agreement 77% (68% before unfused attention kept eager PyTorch's FP32 softmax and its 16-bit
// copy); held out in tests/calibration: large-model training at scale 11.0% (11.1% since the loss),
// DeepLearningExamples training 23.5% (25.0% since the loss: its Transformer-XL rows run DLE's own
// scripts, whose adaptive softmax and apex O2 make the loss a fraction of the full FP32 one the
// model counts for them, base from -26% to -40%, large from -8% to -16%; GNMT from +22% to
// +17%; 21.5% before the recurrent weight gradients and Transformer-XL's memory projection:
// NVIDIA's own README figures run Transformer-XL some 40% faster than Lambda's harness runs the
// same scripts, and cuDNN's one-shot weight gradient moves their GNMT rows from +9% to +22%; both
// changes carry to left-out GPUs and models better, which is what the cited table is judged by),
// other training benchmarks 14.3%, fine-tuning memory 6.1% (11.4% before the same two changes) with
// 96% fits agreement. Bounds sit a little above.
constexpr double kTrainingMedian = 0.165;
constexpr double kDecodeMedian = 0.06;
constexpr double kPrefillMedian = 0.10;
constexpr double kMemoryMedian = 0.10;
constexpr double kFitsAgreement = 0.7;
constexpr double kAnyGpuMedian = 0.35;  // worst besides the exceptions: RTX 3090 prefill, 30%
// The known exception, named in docs/estimation.md: Lambda's H100 rows run older models on
// CUDA 11.8 / NGC 24.03 kernels that reach far less of Hopper's tensor rate than the large GEMMs
// the device model is built from (38.5% median over-prediction with the shipped table). The PEFT
// benchmark's L40S rows, an exception at 29.7% while methods no workload kind expresses (DoRA,
// LoHa, BOFT, ...) were scored as LoRA, are 7.4% on the methods the model expresses.
constexpr double kLambdaH100Median = 0.75;
constexpr double kLargeModelMedian = 0.13;
constexpr double kHeldOutDleMedian = 0.26;
constexpr double kHeldOutOtherMedian = 0.17;
constexpr double kHeldOutMemoryMedian = 0.08;
constexpr double kHeldOutFitsAgreement = 0.9;
// Plain PyTorch training measured on a lent H200 (tests/calibration/lent_h200_training.csv,
// 2026-11-28): throughput 44% median (42% since the loss over a vocabulary moved what PyTorch's
// kernels move; ResNet-50 in TF32 -2%, every 16-bit run over-predicted, by 33-134% then and
// 33-110% since, GPT-2 most), peak memory 12.6% (36% before the loss's peak, in-place
// operators, score products and backward's working set were counted, 22% before outputs no
// reader saves were freed: ResNet-50 from +45-49% to -8-9%, ViT-B/16 from +33% to -3%, the
// language models from -26-50% to -13-32%). Large, and stated as measured: the bounds guard
// against worse.
constexpr double kLentH200TrainingMedian = 0.50;
constexpr double kLentH200MemoryMedian = 0.15;

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
    double bound = key == "training_throughput/H100-SXM5-80GB" ? kLambdaH100Median : kAnyGpuMedian;
    EXPECT_LE(s.median_ape, bound) << key;
  }
}

// The cases of ../shared/calibration, with the built-in catalog; false when ../shared is absent.
bool SharedCases(std::vector<CalibrationCase>* cases) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) return false;
  std::vector<SkippedRow> skipped;
  Status s =
      LoadCalibrationCases(testing::BuiltInCatalog(), shared + "/calibration", cases, &skipped);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return true;
}

// One measurement of a workload on one GPU model (--measured), used to predict the same
// workload on the other GPU models it was measured on: the error must fall.
TEST(AccuracyTest, OneMeasurementImprovesPredictionsOnOtherGpus) {
  std::vector<CalibrationCase> cases;
  if (!SharedCases(&cases)) GTEST_SKIP() << "../shared is absent";
  const Catalog& catalog = testing::BuiltInCatalog();
  std::map<std::string, TransferStats> stats = ScoreCalibrationTransfer(catalog, cases);
  std::printf("%-20s %6s %6s %8s %8s %8s %8s %5s %8s %8s\n", "family", "groups", "pairs", "med",
              "med cal", "p90", "p90 cal", "far", "far med", "far cal");
  for (const auto& [family, t] : stats) {
    std::printf("%-20s %6d %6d %7.1f%% %7.1f%% %7.1f%% %7.1f%% %5d %7.1f%% %7.1f%%\n",
                family.c_str(), t.groups, t.pairs, 100 * t.median_ape_before,
                100 * t.median_ape_after, 100 * t.p90_ape_before, 100 * t.p90_ape_after,
                t.far_pairs, 100 * t.far_median_ape_before, 100 * t.far_median_ape_after);
  }
  const TransferStats& training = stats["training_throughput"];
  ASSERT_GE(training.pairs, 20) << "the public data measure many workloads on several GPUs";
  ASSERT_GE(training.far_pairs, 5);
  // Where the model misjudges the job, one measurement fixes about half of it or more on the
  // other GPUs too (2026-11-24: 52.6% -> 26.4% over 120 pairs; the pairs off by more than 25%
  // were 134 before the recurrent weight gradients and Transformer-XL's memory projection, and
  // the ones those fixed were the ones a device scale fixes best: 62.1% -> 27.9%).
  EXPECT_LT(training.far_median_ape_after, 0.55 * training.far_median_ape_before);
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

// Public figures on GPUs, models and software the shipped table was not set from
// (tests/calibration/README.md): NVIDIA DeepLearningExamples tables, timm's and others'
// training benchmarks, fine-tuning memory of public recipes. Scored, never fitted.
std::map<std::string, ErrorStats> HeldOut(const std::string& table, size_t* count) {
  const Catalog& catalog = testing::BuiltInCatalog();
  std::vector<CalibrationCase> cases;
  std::vector<SkippedRow> skipped;
  Status s =
      LoadExtraCases(catalog, testing::SourcePath("tests/calibration/" + table), &cases, &skipped);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const CalibrationCase& c : cases) EXPECT_TRUE(c.held_out) << c.id;
  *count = cases.size();
  std::map<std::string, ErrorStats> stats = ScoreCases(catalog, cases);
  for (const auto& [key, e] : stats) {
    std::printf("%-52s %6d %7.1f%% %7.1f%% %8.0f%%\n", key.c_str(), e.cases, 100 * e.median_ape,
                100 * e.p90_ape, 100 * e.agreement);
  }
  return stats;
}

// Lambda's benchmark ran each single-GPU row at the batch its per-board config picked, in one
// forward pass per step (no accumulation in those configs): the estimate must say that batch
// fits in one micro-batch. Known exceptions, named in docs/estimation.md ("WaveGlow"):
// Transformer-XL, whose adaptive softmax is modelled as a full 267,735-word head; BERT (5-31%
// over), whose unfused attention is taken to keep eager PyTorch's FP32 softmax and its 16-bit
// copy, while NVIDIA's run_squad.py trains under apex AMP (amp.scale_loss; what apex keeps of
// the softmax is not checked yet); and Tacotron 2 (by 1-22%, not examined yet). Measured
// 2026-11-29: every other run fits (ResNet-50, SSD300, GNMT, NCF and WaveGlow; the last two
// after their freed outputs).
TEST(AccuracyTest, EveryBatchLambdaRanFitsInOneMicroBatch) {
  std::vector<CalibrationCase> cases;
  if (!SharedCases(&cases)) GTEST_SKIP() << "../shared is absent";
  const Catalog& catalog = testing::BuiltInCatalog();
  const std::set<std::string> exceptions = {"Transformer-XL base (16L d512)",
                                            "Transformer-XL large (18L d1024)", "Tacotron 2",
                                            "BERT-base-uncased", "BERT-large-uncased"};
  int checked = 0;
  for (const CalibrationCase& c : cases) {
    if (c.family != MetricFamily::kTrainingThroughput || c.num_gpus != 1 ||
        c.id.rfind("train_throughput.csv:", 0) != 0 || exceptions.count(c.workload.model.name)) {
      continue;
    }
    // The loader passes the row's batch as the micro-batch, as the harness ran it.
    const Workload& w = c.workload;
    ASSERT_GT(w.micro_batch, 0) << c.id;
    Hardware hw;
    ASSERT_TRUE(ResolveHardware(catalog, c.hardware, &hw).ok()) << c.id;
    Estimate e;
    Status s = EstimateWorkload(catalog, w, hw, &e);
    ASSERT_TRUE(s.ok()) << c.id << ": " << s.ToString();
    EXPECT_TRUE(e.fits) << c.id << ": " << c.workload.model.name << " at " << w.micro_batch
                        << " on " << c.gpu << " needs " << e.memory.total_bytes() / 1e9 << " GB of "
                        << e.memory.capacity_bytes / 1e9;
    ++checked;
  }
  EXPECT_GE(checked, 40) << "single-GPU Lambda rows of the modelled workloads";
}

TEST(AccuracyTest, HeldOutTrainingThroughput) {
  size_t dle = 0, other = 0;
  auto a = HeldOut("dle_train_throughput.csv", &dle);
  auto b = HeldOut("other_train_throughput.csv", &other);
  EXPECT_GE(dle, 200u);
  EXPECT_GE(other, 15u);
  EXPECT_LE(a["training_throughput (held out)"].median_ape, kHeldOutDleMedian);
  EXPECT_LE(b["training_throughput (held out)"].median_ape, kHeldOutOtherMedian);
}

TEST(AccuracyTest, HeldOutTrainingOnALentH200) {
  size_t n = 0;
  auto stats = HeldOut("lent_h200_training.csv", &n);
  EXPECT_EQ(n, 14u);
  EXPECT_LE(stats["training_throughput (held out)"].median_ape, kLentH200TrainingMedian);
  EXPECT_LE(stats["memory (held out)"].median_ape, kLentH200MemoryMedian);
}

TEST(AccuracyTest, HeldOutFineTuningMemory) {
  size_t n = 0;
  auto stats = HeldOut("finetune_memory.csv", &n);
  EXPECT_GE(n, 50u);
  EXPECT_LE(stats["memory (held out)"].median_ape, kHeldOutMemoryMedian);
  EXPECT_GE(stats["fits (held out)"].agreement, kHeldOutFitsAgreement);
}

// llama-bench on an RTX 4090 (ggml-org/llama.cpp PR #4766, January 2024): an Ada board no
// llama.cpp row was fitted on, CodeLlama-7B at F16, Q8_0 and Q4_0. Measured 2026-11-29: decode
// F16 +1.6%, Q8_0 +4.4%; prompts of 512 tokens -19.8% (F16), +10.1% (Q8_0), -15.7% (Q4_0)
// (before the launch queue and ggml's graph: -6.5%, -4.0%; -24.1%, +20.2%, -20.0%).
TEST(AccuracyTest, HeldOutLlamaCppOnAnRtx4090) {
  size_t n = 0;
  auto stats = HeldOut("llm_finetune_and_inference.csv", &n);
  // The table's other rows name a method, not workload fields; finetune_memory.csv restates them.
  EXPECT_EQ(n, 5u);
  EXPECT_EQ(stats["llm_decode (held out)"].cases, 2);
  EXPECT_EQ(stats["llm_prefill (held out)"].cases, 3);
  EXPECT_LE(stats["llm_decode (held out)"].median_ape, 0.06);
  EXPECT_LE(stats["llm_prefill (held out)"].median_ape, 0.20);
}

}  // namespace
}  // namespace cloudfit
