// Calibration from measurements: a measured throughput is reproduced on its hardware and other
// hardware is rescaled through the model; a probe corrects the probed device only.
#include "cloudfit/measured_calibration.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cloudfit/estimate.h"
#include "cloudfit/recommend.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

Workload Finalized(const std::vector<std::pair<std::string, std::string>>& fields) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  Status s = FinalizeWorkload(BuiltIn(), &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

Workload ResNetTraining() {
  return Finalized({{"kind", "train"},
                    {"model", "ResNet-50"},
                    {"precision", "bf16"},
                    {"batch", "128"},
                    {"epochs", "1"},
                    {"dataset_samples", "1281167"}});
}

Estimate EstimateOn(const Workload& w, const std::string& gpu, double gpus = 1) {
  HardwareSpec spec;
  spec.gpu = gpu;
  spec.gpus = gpus;
  Hardware hw;
  EXPECT_TRUE(ResolveHardware(BuiltIn(), spec, &hw).ok());
  Estimate e;
  Status s = EstimateWorkload(BuiltIn(), w, hw, &e);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return e;
}

ThroughputMeasurement Parsed(const std::string& text) {
  ThroughputMeasurement m;
  Status s = ParseThroughputMeasurement(BuiltIn(), text, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

TEST(MeasuredCalibrationTest, ParsesGpuAndInstanceMeasurements) {
  ThroughputMeasurement a = Parsed("1.9 it/s on 1x A10");
  EXPECT_DOUBLE_EQ(a.value, 1.9);
  EXPECT_EQ(a.unit, "it/s");
  EXPECT_EQ(a.hardware.gpu, "A10");
  EXPECT_DOUBLE_EQ(a.hardware.gpus, 1);
  ThroughputMeasurement b = Parsed("450 tokens/s on 2x a100 80g");
  EXPECT_EQ(b.hardware.gpu, "A100-SXM4-80GB");
  EXPECT_DOUBLE_EQ(b.hardware.gpus, 2);
  ThroughputMeasurement c = Parsed("0.8 s/it on p4d.24xlarge x2");
  EXPECT_EQ(c.hardware.instance, "p4d.24xlarge");
  EXPECT_EQ(c.hardware.nodes, 2);
  EXPECT_TRUE(c.hardware.gpu.empty());
}

TEST(MeasuredCalibrationTest, RejectsMalformedMeasurementsNamingThePart) {
  ThroughputMeasurement m;
  Status s = ParseThroughputMeasurement(BuiltIn(), "fast on A10", &m);
  EXPECT_NE(s.message().find("<number> <unit> on"), std::string::npos) << s.message();
  s = ParseThroughputMeasurement(BuiltIn(), "1.9 furlongs/s on 1x A10", &m);
  EXPECT_NE(s.message().find("unit 'furlongs/s'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("tokens/s"), std::string::npos);
  s = ParseThroughputMeasurement(BuiltIn(), "1.9 it/s on 1x A1000", &m);
  EXPECT_NE(s.message().find("neither an instance type nor a GPU"), std::string::npos);
  EXPECT_FALSE(ParseThroughputMeasurement(BuiltIn(), "-1 it/s on 1x A10", &m).ok());
  EXPECT_FALSE(ParseThroughputMeasurement(BuiltIn(), "0 it/s on 1x A10", &m).ok());
}

TEST(MeasuredCalibrationTest, MeasuredHardwareMatchesAndOtherHardwareIsRescaled) {
  Workload w = ResNetTraining();
  ThroughputMeasurement m = Parsed("1 it/s on 1x A10");
  double predicted = 0;
  ASSERT_TRUE(PredictInUnit(BuiltIn(), w, m, &predicted).ok());
  ASSERT_GT(predicted, 0);
  m.value = 0.7 * predicted;  // the job runs 30% slower than the model thinks
  double a100_before = EstimateOn(w, "A100-SXM4-80GB").throughput;
  double a100x8_before = EstimateOn(w, "A100-SXM4-80GB", 8).throughput;

  CalibrationOutcome outcome;
  Status s = CalibrateFromThroughput(BuiltIn(), m, &w, &outcome);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_NEAR(outcome.predicted_after / m.value, 1.0, 1e-3);
  EXPECT_NEAR(outcome.predicted_before, predicted, 1e-9 * predicted);
  double after = 0;
  ASSERT_TRUE(PredictInUnit(BuiltIn(), w, m, &after).ok());
  EXPECT_NEAR(after / m.value, 1.0, 1e-3);

  // One GPU of another model: the device time scales, so about the same 0.7.
  Estimate a100 = EstimateOn(w, "A100-SXM4-80GB");
  EXPECT_NEAR(a100.throughput / a100_before, 0.7, 0.05);
  // Eight GPUs: communication is not device speed, so the loss is smaller but still there.
  double ratio8 = EstimateOn(w, "A100-SXM4-80GB", 8).throughput / a100x8_before;
  EXPECT_LT(ratio8, 1.0);
  EXPECT_GE(ratio8, 0.69);
  ASSERT_TRUE(a100.calibration_scale.has_value()) << "the estimate must say it was calibrated";
  EXPECT_NEAR(a100.calibration_scale->compute, outcome.scale, 1e-12);
}

TEST(MeasuredCalibrationTest, SecondsPerStepAndTokensPerSecondWork) {
  Workload w = ResNetTraining();
  ThroughputMeasurement slow = Parsed("1 s/it on 1x L4");
  double predicted = 0;
  ASSERT_TRUE(PredictInUnit(BuiltIn(), w, slow, &predicted).ok());
  slow.value = 1.25 * predicted;
  ASSERT_TRUE(CalibrateFromThroughput(BuiltIn(), slow, &w, nullptr).ok());
  ASSERT_TRUE(PredictInUnit(BuiltIn(), w, slow, &predicted).ok());
  EXPECT_NEAR(predicted / slow.value, 1.0, 1e-3);

  Workload llm = Finalized({{"kind", "inference"}, {"model", "Llama-3.1-8B"}});
  ThroughputMeasurement tokens = Parsed("1 tokens/s on 1x L4");
  ASSERT_TRUE(PredictInUnit(BuiltIn(), llm, tokens, &predicted).ok());
  tokens.value = 1.2 * predicted;
  Status s = CalibrateFromThroughput(BuiltIn(), tokens, &llm, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(PredictInUnit(BuiltIn(), llm, tokens, &predicted).ok());
  EXPECT_NEAR(predicted / tokens.value, 1.0, 1e-3);
}

TEST(MeasuredCalibrationTest, ImpossibleMeasurementsAndUnitsAreErrors) {
  Workload w = ResNetTraining();
  ThroughputMeasurement m = Parsed("1 it/s on 1x A10");
  double predicted = 0;
  ASSERT_TRUE(PredictInUnit(BuiltIn(), w, m, &predicted).ok());
  m.value = predicted * 1e6;
  Status s = CalibrateFromThroughput(BuiltIn(), m, &w, nullptr);
  EXPECT_NE(s.message().find("cannot be reproduced"), std::string::npos) << s.message();
  EXPECT_FALSE(w.calibration.active());  // a failed calibration leaves the workload alone

  ThroughputMeasurement tokens = Parsed("100 tokens/s on 1x A10");
  s = CalibrateFromThroughput(BuiltIn(), tokens, &w, nullptr);
  EXPECT_NE(s.message().find("samples/s"), std::string::npos) << s.message();
}

nlohmann::json H100Probe(double bf16_fraction, double copy_fraction) {
  const Accelerator* h100 = nullptr;
  EXPECT_TRUE(BuiltIn().FindAccelerator("H100-SXM5-80GB", &h100).ok());
  return {
      {"schema", "cloudfit.probe/v1"},
      {"cpu", {{"catalog_generation", nullptr}}},
      {"gpu",
       {{"available", true},
        {"devices",
         {{{"index", 0},
           {"name", "NVIDIA H100 80GB HBM3"},
           {"catalog_name", "H100-SXM5-80GB"},
           {"gemm",
            {{{"precision", "bf16"},
              {"supported", true},
              {"flops_per_s", bf16_fraction * *h100->peak(Precision::kBf16)}}}},
           {"device_copy_bytes_per_s", copy_fraction * h100->memory_bandwidth_bytes_per_s}}}}}}};
}

TEST(MeasuredCalibrationTest, ProbeScalesTheProbedGpuOnly) {
  Workload plain = ResNetTraining();
  Workload w = ResNetTraining();
  // Typical is 80% of the BF16 peak and 90% of the bandwidth: 60% makes compute 0.75x.
  Status s = CalibrateFromProbe(BuiltIn(), H100Probe(0.6, 0.9), &w);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(w.calibration.by_device.count("H100-SXM5-80GB"), 1u);
  EXPECT_NEAR(w.calibration.by_device["H100-SXM5-80GB"].compute, 0.75, 1e-9);
  EXPECT_NEAR(w.calibration.by_device["H100-SXM5-80GB"].bandwidth, 1.0, 1e-9);
  EXPECT_NEAR(EstimateOn(w, "H100-SXM5-80GB").calibration_scale->compute, 0.75, 1e-9);
  EXPECT_NEAR(EstimateOn(w, "A100-SXM4-80GB").calibration_scale->compute, 1.0, 1e-12);
  EXPECT_LT(EstimateOn(w, "H100-SXM5-80GB").throughput,
            EstimateOn(plain, "H100-SXM5-80GB").throughput);
  EXPECT_DOUBLE_EQ(EstimateOn(w, "A100-SXM4-80GB").throughput,
                   EstimateOn(plain, "A100-SXM4-80GB").throughput);
}

TEST(MeasuredCalibrationTest, BadProbesAreErrorsNamingTheField) {
  Workload w = ResNetTraining();
  Status s = CalibrateFromProbe(BuiltIn(), nlohmann::json{{"schema", "other"}}, &w);
  EXPECT_NE(s.message().find("schema"), std::string::npos);
  nlohmann::json probe = H100Probe(0.6, 0.9);
  probe["gpu"]["devices"][0]["catalog_name"] = "H1000";
  s = CalibrateFromProbe(BuiltIn(), probe, &w);
  EXPECT_NE(s.message().find("gpu.devices[0].catalog_name"), std::string::npos) << s.message();
  s = CalibrateFromProbe(BuiltIn(), H100Probe(0.0001, 0.9), &w);
  EXPECT_NE(s.message().find("outside 0.02 to 5"), std::string::npos) << s.message();
  nlohmann::json empty = {{"schema", "cloudfit.probe/v1"}, {"cpu", nlohmann::json::object()}};
  s = CalibrateFromProbe(BuiltIn(), empty, &w);
  EXPECT_NE(s.message().find("no device"), std::string::npos) << s.message();
  EXPECT_FALSE(w.calibration.active());
}

// A probe written by `cloudfit probe --out` on a real H200 (a lent machine, 2026-11-28; the GPU's
// UUID zeroed): the calibration reads the file as the probe writes it, and a GPU that measures
// close to its typical rates is scaled by little.
TEST(MeasuredCalibrationTest, AProbeRecordedOnAnH200ScalesTheH200ByLittle) {
  nlohmann::json probe = nlohmann::json::parse(
      testing::ReadWholeFile(testing::SourcePath("tests/fixtures/probe/h200-2026-11-28.json")));
  Workload plain = ResNetTraining();
  Workload w = ResNetTraining();
  Status s = CalibrateFromProbe(BuiltIn(), probe, &w);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(w.calibration.by_device.count("H200-SXM5-141GB"), 1u);
  const RateScale& h200 = w.calibration.by_device["H200-SXM5-141GB"];
  // Measured: BF16 GEMM 806 TFLOP/s, device copy 4.27 TB/s.
  EXPECT_GT(h200.compute, 0.95);
  EXPECT_LT(h200.compute, 1.1);
  EXPECT_GT(h200.bandwidth, 0.9);
  EXPECT_LT(h200.bandwidth, 1.1);
  EXPECT_NE(h200.compute, 1.0);
  EXPECT_NEAR(EstimateOn(w, "H200").calibration_scale->compute, h200.compute, 1e-12);
  EXPECT_DOUBLE_EQ(EstimateOn(w, "A100-SXM4-80GB").throughput,
                   EstimateOn(plain, "A100-SXM4-80GB").throughput);
}

TEST(MeasuredCalibrationTest, RecommendSaysItWasCalibrated) {
  Workload w = ResNetTraining();
  ASSERT_TRUE(CalibrateFromThroughput(BuiltIn(), Parsed("0.5 it/s on 1x A10"), &w, nullptr).ok());
  RecommendOptions options;
  options.providers = {"aws"};
  Recommendation r;
  ASSERT_TRUE(Recommend(BuiltIn(), w, options, &r).ok());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes.front().rfind("calibrated from 0.5 it/s on 1x A10", 0), 0u) << r.notes.front();
}

// The command's stdout and stderr together, and its exit code.
int RunCli(const std::string& args, std::string* out) {
  testing::TempDir dir;
  testing::ProgramRun r = testing::RunCloudfit(dir, args);
  *out = r.out + r.err;
  return r.exit_code;
}

TEST(MeasuredCalibrationTest, EstimateCommandReproducesTheMeasurement) {
  std::string out;
  ASSERT_EQ(RunCli("estimate --kind train --model ResNet-50 --batch 128 --gpu A10 --json "
                   "--measured '2.5 it/s on 1x A10'",
                   &out),
            0)
      << out;
  nlohmann::json doc = nlohmann::json::parse(out);
  EXPECT_NEAR(doc["time"]["step_s"].get<double>(), 1 / 2.5, 1e-3);
  ASSERT_TRUE(doc.contains("calibrated_from"));
  EXPECT_NE(doc["calibrated_from"][0].get<std::string>().find("2.5 it/s"), std::string::npos);
  EXPECT_GT(doc["calibration_scale"]["compute"].get<double>(), 0);

  EXPECT_EQ(RunCli("estimate --kind train --model ResNet-50 --gpu A10 --measured 'quick'", &out),
            2);
  EXPECT_NE(out.find("--measured"), std::string::npos) << out;
  EXPECT_EQ(RunCli("recommend --kind train --model ResNet-50 --calibration /no/such.json", &out),
            2);
  EXPECT_NE(out.find("--calibration"), std::string::npos) << out;
}

}  // namespace
}  // namespace cloudfit
