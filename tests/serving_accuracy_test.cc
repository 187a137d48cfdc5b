// Predictions of optimised serving engines against their published figures
// (tests/calibration/serving_engines.csv: TensorRT-LLM's blogs, a vLLM concurrency sweep, the
// vLLM v0.6 post). Every row is predicted from the engine's profile and the step physics, the
// per-row table is printed, and the median and worst errors are asserted separately for the
// rows that set the profile's efficiencies ("fit") and the rows held out of that ("check").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cloudfit/hardware.h"
#include "estimate/llm_serving.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/strings.h"
#include "test_support.h"

namespace cloudfit {
namespace {

struct Row {
  std::string id, use, scenario, metric;
  double measured = 0, predicted = 0;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Predicts one row; fails the test with the row's id on a field the workload rejects.
bool Predict(const Catalog& catalog, const CsvTable& table, const CsvRow& row, Row* out) {
  CsvRowReader r(table, row);
  out->id = std::string(r.Text("id"));
  out->use = std::string(r.Text("use"));
  out->scenario = std::string(r.Text("scenario"));
  out->metric = std::string(r.Text("metric"));
  out->measured = r.Number("value", 1e-9, 1e12);
  double batch = r.Number("batch", 1, 1e6);
  double gpus = r.Number("gpus", 1, 64);
  Workload w;
  std::vector<std::pair<std::string, std::string>> fields = {
      {"kind", "inference"},
      {"engine", std::string(r.Text("engine"))},
      {"precision", std::string(r.Text("precision"))},
      {"kv_cache_dtype", std::string(r.Text("kv_cache_dtype"))},
      {"prompt_tokens", std::string(r.Text("prompt_tokens"))},
      {"output_tokens", std::string(r.Text("output_tokens"))},
      {"tp", std::string(r.Text("tp"))}};
  if (!r.Text("model").empty()) fields.push_back({"model", std::string(r.Text("model"))});
  for (const std::string& kv : SplitList(r.Text("fields"), ';')) {
    size_t eq = kv.find('=');
    if (eq != std::string::npos) fields.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
  }
  for (const auto& [k, v] : fields) {
    Status s = SetWorkloadField(&w, k, v);
    EXPECT_TRUE(s.ok()) << out->id << ": " << s.message();
    if (!s.ok()) return false;
  }
  Status s = FinalizeWorkload(catalog, &w);
  EXPECT_TRUE(s.ok()) << out->id << ": " << s.message();
  HardwareSpec spec;
  spec.gpu = std::string(r.Text("gpu"));
  spec.gpus = gpus;
  Hardware hw;
  if (s.ok()) s = ResolveHardware(catalog, spec, &hw);
  EXPECT_TRUE(s.ok() && r.status().ok()) << out->id << ": " << s.message() << r.status().message();
  if (!s.ok() || !r.status().ok()) return false;
  LlmStepModel im(catalog, w, hw, EngineStepInputsFor(w, hw));
  const double prompt = w.prompt_tokens, output = w.output_tokens;
  const double context = prompt + output / 2;
  if (out->scenario == "offline_batch") {
    // A batch prefilled together, then decoded until its sequences end.
    double total = im.PrefillSeconds(batch, prompt) + (output - 1) * im.DecodeStepSeconds(batch, context);
    double tokens_per_s = batch * output / total;
    out->predicted = out->metric == "output_tokens_per_s_per_gpu" ? tokens_per_s / gpus : tokens_per_s;
    double needed = batch * (prompt + output);
    if (needed > im.KvCapacityTokens()) {
      std::printf("  note: %s needs %.0f KV tokens, the model holds %.0f\n", out->id.c_str(),
                  needed, im.KvCapacityTokens());
    }
  } else if (out->scenario == "first_token") {
    out->predicted = im.PrefillSeconds(batch, prompt) * 1e3;
  } else if (out->scenario == "light_load") {
    double step = im.DecodeStepSeconds(batch, context);
    out->predicted = out->metric == "tpot_ms" ? step * 1e3 : batch / step;
  } else if (out->scenario == "closed_loop") {
    // `batch` clients always in flight: the copy runs at its saturation with that many
    // sequences admitted (the load model's saturation rate).
    ReplicaSteps steps = StepsForCopy(im, w, BatchingPolicy::kContinuous,
                                      static_cast<int>(batch),
                                      w.engine_profile.prefill_chunk_tokens, 1);
    if (out->metric == "ttft_median_ms") {
      // The clients' requests as a Poisson stream at the measured rate into the engine's
      // default sequence cap: the TTFT the load model gives there.
      ReplicaSteps open = StepsForCopy(im, w, BatchingPolicy::kContinuous,
                                       w.engine_profile.max_batch,
                                       w.engine_profile.prefill_chunk_tokens, 1);
      double rate = r.Number("rate_per_s", 1e-6, 1e6);
      out->predicted = EvaluateLoad(open, rate, 0.5).ttft_median_s * 1e3;
    } else {
      out->predicted = SaturationRate(steps);
    }
  } else {
    ADD_FAILURE() << out->id << ": unknown scenario " << out->scenario;
    return false;
  }
  return true;
}

TEST(ServingAccuracyTest, OptimisedEnginesAgainstPublishedFigures) {
  const Catalog& catalog = testing::BuiltInCatalog();
  std::string path = std::string(CLOUDFIT_SOURCE_DIR) + "/tests/calibration/serving_engines.csv";
  std::string text;
  ASSERT_TRUE(ReadFile(path, &text).ok());
  CsvTable table;
  ASSERT_TRUE(ParseCsv(text, path, CsvOptions(), &table).ok());
  std::map<std::string, std::vector<double>> errors;  // by use, and by use/engine
  std::printf("%-30s %-5s %-14s %12s %12s %8s\n", "row", "use", "scenario", "published",
              "predicted", "error");
  for (const CsvRow& row : table.rows) {
    Row r;
    if (!Predict(catalog, table, row, &r)) continue;
    double error = (r.predicted - r.measured) / r.measured;
    std::printf("%-30s %-5s %-14s %12.4g %12.4g %+7.1f%%\n", r.id.c_str(), r.use.c_str(),
                r.scenario.c_str(), r.measured, r.predicted, 100 * error);
    errors[r.use].push_back(std::abs(error));
    errors[r.use + "/" + r.scenario].push_back(std::abs(error));
  }
  for (const auto& [key, v] : errors) {
    std::printf("%-26s rows %2zu  median %5.1f%%  worst %6.1f%%\n", key.c_str(), v.size(),
                100 * Median(v), 100 * *std::max_element(v.begin(), v.end()));
  }
  ASSERT_EQ(errors["fit"].size() + errors["check"].size(), table.rows.size());
  // Bounds a little above what was measured when the profiles were set (docs/estimation.md,
  // "Serving engines"): fit rows median 8.1%, held-out rows median 21.4%, 16 of 22 held-out
  // rows within 40%. The six beyond are explained there: TensorRT-LLM v0.5's slow GQA kernels
  // at TP2 and long outputs (+108%), its FP8 batch-1 decode (+83%), the summed roofline's slow
  // 128-token prefill on A100 (+61%), vLLM before v0.6 with 62% CPU overhead (-53%), and the
  // vLLM sweep's TTFT near its knee (-73%, -90%). Issue 9's hardware-physics work moves these
  // numbers; the bounds say how far they may go. After it (operator-level step time on the
  // device's sustained rates): fit rows median 6.1%, held-out median 20.6%, 15 of 22 within
  // 40% (the vLLM sweep's TTFT at 16 concurrent requests, -51%, is the one that moved out).
  EXPECT_LT(Median(errors["fit"]), 0.12);
  EXPECT_LT(Median(errors["check"]), 0.25);
  const std::vector<double>& check = errors["check"];
  double within = std::count_if(check.begin(), check.end(), [](double e) { return e <= 0.4; });
  EXPECT_GE(within / check.size(), 0.65);
  EXPECT_LT(*std::max_element(check.begin(), check.end()), 1.2);
}

}  // namespace
}  // namespace cloudfit
