// The seed guides' scenarios end to end: the shape of each answer, exact cost arithmetic, and
// ranking invariants.
#include "cloudfit/recommend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "cloudfit/estimate_json.h"
#include "cloudfit/hardware.h"
#include "cloudfit/recommend_report.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Recommendation Recommended(const Fields& fields, RecommendOptions options = RecommendOptions()) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  Status s = FinalizeWorkload(testing::BuiltInCatalog(), &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  Recommendation r;
  s = Recommend(testing::BuiltInCatalog(), w, options, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

// Llama-2-13B served at 30 requests/s with a 1 s time-to-first-token target.
Fields LlamaServiceAtThirtyRequestsPerSecond() {
  return {{"kind", "serve"},
          {"model", "Llama-2-13B"},
          {"precision", "fp16"},
          {"request_rate", "30"},
          {"ttft_target_ms", "1000"}};
}

bool Dominates(const Candidate& a, const Candidate& b) {
  return a.hours <= b.hours && *a.total_cost <= *b.total_cost &&
         (a.hours < b.hours || *a.total_cost < *b.total_cost);
}

void ExpectInvariants(const Recommendation& r) {
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    ASSERT_TRUE(c.price_per_hour.has_value()) << "an unknown price is never ranked";
    ASSERT_TRUE(c.total_cost.has_value());
    EXPECT_GT(*c.price_per_hour, 0) << c.instance->name;
    EXPECT_TRUE(c.estimate->fits) << c.instance->name;
  }
  // The Pareto front: nothing feasible dominates a point on it, and every point off it is
  // dominated by (or ties with) one on it.
  for (const Candidate& a : r.ranked) {
    if (!a.pareto) continue;
    for (const Candidate& b : r.ranked) EXPECT_FALSE(Dominates(b, a)) << a.instance->name;
  }
}

TEST(RecommendTest, BertFineTuningRanksGpusWithCostPerEpoch) {
  Recommendation r = Recommended({{"kind", "train"},
                                  {"model", "BERT-base-uncased"},
                                  {"seq_len", "384"},
                                  {"batch", "32"},
                                  {"epochs", "3"},
                                  {"dataset_samples", "88641"}});
  ExpectInvariants(r);
  EXPECT_TRUE(r.ranked.front().instance->has_gpu());
  EXPECT_EQ(r.ranked.front().unit, "epoch");
  const Candidate& c = r.ranked.front();
  EXPECT_NEAR(*c.cost_per_unit, *c.total_cost / 3, 1e-6 * *c.total_cost) << "3 epochs";
}

TEST(RecommendTest, ResNetImageNetMeetsTheDeadline) {
  RecommendOptions o;
  o.deadline_hours = 24;
  o.max_nodes = 4;
  Recommendation r = Recommended({{"kind", "train"},
                                  {"model", "ResNet-50"},
                                  {"precision", "fp16"},
                                  {"batch", "1024"},
                                  {"epochs", "90"},
                                  {"dataset_samples", "1281167"}},
                                 o);
  ExpectInvariants(r);
  for (const Candidate& c : r.ranked) EXPECT_LE(c.hours, 24) << c.instance->name;
  bool deadline_rejections = false;
  for (const Candidate& c : r.rejected) {
    deadline_rejections |= c.rejection.rfind("misses the deadline", 0) == 0;
  }
  EXPECT_TRUE(deadline_rejections);
}

TEST(RecommendTest, FullFineTuningOfSevenBillionNeverOnOneTwentyFourGigabyteGpu) {
  Recommendation r = Recommended(
      {{"kind", "train"}, {"model", "Llama-2-7B"}, {"seq_len", "1024"}, {"tokens", "1e8"}});
  ExpectInvariants(r);
  for (const Candidate& c : r.ranked) {
    bool one_small_gpu =
        c.instance->has_gpu() && c.total_gpus() <= 1 && c.instance->gpu_memory_gib() <= 24.5;
    EXPECT_FALSE(one_small_gpu) << c.instance->name;
  }
}

TEST(RecommendTest, NothingFitsSaysWhatWould) {
  RecommendOptions o;
  o.gpus = {"A10"};
  Recommendation r = Recommended(
      {{"kind", "train"}, {"model", "Llama-2-13B"}, {"seq_len", "1024"}, {"tokens", "1e8"}}, o);
  EXPECT_TRUE(r.ranked.empty());
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.front().find("LoRA"), std::string::npos) << r.notes.front();
}

TEST(RecommendTest, LlmInferenceAndStableDiffusionRunOnGpus) {
  Recommendation llm =
      Recommended({{"kind", "inference"}, {"model", "Llama-3.1-8B"}, {"samples", "10000"}});
  ExpectInvariants(llm);
  EXPECT_EQ(llm.ranked.front().unit, "1M tokens");
  Recommendation sd = Recommended(
      {{"kind", "inference"}, {"model", "Stable-Diffusion-v1.5"}, {"samples", "10000"}});
  ExpectInvariants(sd);
  EXPECT_TRUE(sd.ranked.front().instance->has_gpu());
}

TEST(RecommendTest, HighConcurrencyServingPlansReplicasAndAutoscaling) {
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r = Recommended(LlamaServiceAtThirtyRequestsPerSecond(), o);
  ExpectInvariants(r);
  const Candidate& c = r.ranked.front();
  ASSERT_TRUE(c.autoscaling.has_value());
  EXPECT_DOUBLE_EQ(c.autoscaling->scale_in_utilisation, 0.3);
  EXPECT_GE(c.autoscaling->max_replicas, c.replicas);
  ASSERT_TRUE(c.estimate->serving.has_value());
  EXPECT_GE(c.replicas * c.estimate->serving->requests_per_s, 30 - 1e-9);
  // Cost per million tokens at the requested rate: fleet price x hours / tokens served.
  double tokens_m = 30.0 * 256 * 3600 * c.hours / 1e6;
  EXPECT_NEAR(*c.cost_per_unit, *c.total_cost / tokens_m, 1e-9 * *c.cost_per_unit);
  for (const Candidate& x : r.ranked) EXPECT_LE(x.estimate->serving->ttft_s, 1.0);
}

TEST(RecommendTest, RealTimeTargetForASevenBillionModelWithALongPromptIsNeverMetOnCpus) {
  // 2 x 7e9 x 2048 = 29 TFLOP of prefill: more than any CPU's matrix units finish in 100 ms
  // (a two-socket Sapphire Rapids' AMX tile peak is ~630 TFLOP/s; sustained is a fraction).
  Recommendation r = Recommended({{"kind", "serve"},
                                  {"model", "Llama-2-7B"},
                                  {"request_rate", "1"},
                                  {"ttft_target_ms", "100"},
                                  {"prompt_tokens", "2048"}});
  for (const Candidate& c : r.ranked) EXPECT_TRUE(c.instance->has_gpu()) << c.instance->name;
}

TEST(RecommendTest, PreprocessingPicksCpuInstances) {
  Recommendation r =
      Recommended({{"kind", "preprocess"}, {"data_gb", "800"}, {"per_core_mb_s", "40"}});
  ExpectInvariants(r);
  EXPECT_FALSE(r.ranked.front().instance->has_gpu());
  EXPECT_EQ(r.ranked.front().unit, "GB");
}

TEST(RecommendTest, RenderFarmMeetsTheDeadlineWithSpotAllowed) {
  RecommendOptions o;
  o.deadline_hours = 48;
  o.max_nodes = 8;
  Recommendation r = Recommended({{"kind", "render"},
                                  {"frames", "2400"},
                                  {"seconds_per_frame", "120"},
                                  {"reference_gpu", "RTX 4090"},
                                  {"scene_memory_gib", "20"}},
                                 o);
  ExpectInvariants(r);
  for (const Candidate& c : r.ranked) {
    EXPECT_LE(c.hours, 48);
    EXPECT_GE(c.instance->gpu_memory_gib() / c.instance->gpu_count, 20) << c.instance->name;
  }
  EXPECT_EQ(r.ranked.front().unit, "frame");
}

TEST(RecommendTest, CloudGamingAv1OnlyOnEncodersThatHaveIt) {
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r = Recommended({{"kind", "realtime"},
                                  {"codec", "av1"},
                                  {"streams", "40"},
                                  {"width", "1920"},
                                  {"height", "1080"},
                                  {"fps", "60"}},
                                 o);
  ExpectInvariants(r);
  for (const Candidate& c : r.ranked) {
    EXPECT_TRUE(c.instance->gpu->av1_encode) << c.instance->name;
    EXPECT_GE(c.estimate->throughput * c.replicas, 40);
  }
}

// Instance types of one hardware shape share an estimate within a request (under their own
// name): every estimate a recommendation holds must be the one a fresh estimate of that type
// gives, words included, for every kind of workload.
TEST(RecommendTest, EstimatesSharedByHardwareShapeEqualFreshOnes) {
  const std::vector<Fields> workloads = {
      {{"kind", "train"}, {"model", "ResNet-50"}, {"samples", "1.28e7"}},
      {{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}},
      {{"kind", "inference"}, {"model", "Llama-3.1-8B"}, {"samples", "10000"}},
      LlamaServiceAtThirtyRequestsPerSecond(),
      {{"kind", "render"},
       {"frames", "240"},
       {"seconds_per_frame", "120"},
       {"reference_gpu", "RTX 4090"}},
      {{"kind", "realtime"}, {"codec", "h264"}, {"streams", "40"}},
      {{"kind", "preprocess"}, {"data_gb", "800"}, {"per_core_mb_s", "40"}}};
  RecommendOptions o;
  o.max_nodes = 2;
  for (const Fields& fields : workloads) {
    Workload w;
    for (const auto& [k, v] : fields) ASSERT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
    ASSERT_TRUE(FinalizeWorkload(testing::BuiltInCatalog(), &w).ok());
    Recommendation r;
    ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &r).ok());
    std::set<const Estimate*> checked;
    auto check = [&](const Candidate& c) {
      if (!c.estimate || !checked.insert(c.estimate.get()).second) return;
      Estimate fresh;
      EstimateOptions how;
      how.explain = !c.estimate->terms.empty();  // the first-ranked offer's carries its terms
      ASSERT_TRUE(EstimateWorkload(testing::BuiltInCatalog(), w,
                                   HardwareForInstance(*c.instance, c.nodes), &fresh, how)
                      .ok());
      EXPECT_EQ(EstimateJsonText(w, *c.estimate), EstimateJsonText(w, fresh))
          << fields.front().second << " on " << c.instance->name << " x" << c.nodes;
    };
    for (const Candidate& c : r.ranked) check(c);
    for (const Candidate& c : r.rejected) check(c);
    EXPECT_FALSE(checked.empty()) << fields.front().second;
  }
}

TEST(RecommendTest, SpotWinsOnlyWhereCheckpointingIsCheap) {
  // GCP spot VMs are reclaimed about every 230 hours: a 1,000-hour job must checkpoint.
  RecommendOptions o;
  o.instances = {"a2-highgpu-8g"};
  o.regions = {"us-central1"};
  o.pricing = {PricingMode::kOnDemand, PricingMode::kSpot};
  o.deadline_hours = 1200;
  Fields job = {
      {"kind", "train"}, {"model", "Llama-3.1-8B"}, {"seq_len", "2048"}, {"tokens", "1e11"}};
  Recommendation fast_storage = Recommended(job, o);
  ASSERT_EQ(fast_storage.ranked.size(), 2u);
  EXPECT_EQ(fast_storage.ranked.front().mode, PricingMode::kSpot);
  // Checkpointing ~110 GB of state at 1 MB/s takes 31 hours: interruptions now cost half the
  // run again, and spot misses the deadline that on-demand meets.
  job.push_back({"storage_gb_s", "0.001"});
  Recommendation slow_storage = Recommended(job, o);
  ASSERT_EQ(slow_storage.ranked.size(), 1u);
  EXPECT_EQ(slow_storage.ranked.front().mode, PricingMode::kOnDemand);
  const Candidate* spot = nullptr;
  for (const Candidate& c : slow_storage.rejected) {
    if (c.mode == PricingMode::kSpot && c.spot) spot = &c;
  }
  ASSERT_NE(spot, nullptr);
  EXPECT_NE(spot->rejection.find("misses the deadline"), std::string::npos) << spot->rejection;
  // Daly's interval (2006, eq. 37): sqrt(2CM) [1 + sqrt(C/2M)/3 + C/18M] - C, which is Young's
  // sqrt(2CM) when C << M; expected hours = base x (1 + overhead) + start-up; the compute line
  // is the price x those hours, and the total is the sum of the bill's lines, exactly.
  const SpotRisk& risk = *spot->spot;
  double c = risk.checkpoint_seconds / 3600, m = risk.mtbf_hours;
  double daly = std::sqrt(2 * c * m) * (1 + std::sqrt(c / (2 * m)) / 3 + c / (18 * m)) - c;
  EXPECT_NEAR(risk.checkpoint_interval_hours, daly, 1e-9 * daly);
  EXPECT_LT(risk.checkpoint_interval_hours, std::sqrt(2 * c * m)) << "C is not small beside M";
  // Offers not shown carry numbers only; asking about the type (--why-not) gives the bill.
  EXPECT_FALSE(spot->described);
  EXPECT_TRUE(spot->costs.empty());
  RecommendOptions why_not = o;
  why_not.describe_instances = {spot->instance->name};
  Recommendation described = Recommended(job, why_not);
  const Candidate* same = nullptr;
  for (const Candidate& c : described.rejected) {
    if (c.instance == spot->instance && c.region == spot->region && c.mode == spot->mode &&
        c.nodes == spot->nodes) {
      same = &c;
    }
  }
  ASSERT_NE(same, nullptr);
  EXPECT_TRUE(same->described);
  EXPECT_EQ(*same->total_cost, *spot->total_cost) << "words change no number";
  EXPECT_EQ(same->hours, spot->hours);
  EXPECT_EQ(same->rejection, spot->rejection);
  spot = same;
  double base = spot->estimate->total_s / 3600;
  double compute_hours = base * (1 + risk.overhead_fraction);
  ASSERT_FALSE(spot->costs.empty());
  EXPECT_EQ(spot->costs.front().name, "compute");
  EXPECT_NEAR(*spot->costs.front().amount, *spot->price_per_hour * compute_hours,
              1e-9 * *spot->total_cost);
  EXPECT_GT(spot->hours, compute_hours) << "start-up adds wall-clock time";
  EXPECT_LT(spot->hours, compute_hours + 1) << "start-up takes minutes, not hours";
  double sum = 0;
  for (const CostLine& line : spot->costs) sum += line.amount.value_or(0);
  EXPECT_NEAR(*spot->total_cost, sum, 1e-9 * sum);
  EXPECT_GT(risk.overhead_fraction, fast_storage.ranked.front().spot->overhead_fraction * 10);
}

TEST(RecommendTest, CostArithmeticOfTheSeedsReservedExample) {
  // The seed guide: 8,760 hours of p3.2xlarge on demand vs 1-year reserved.
  RecommendOptions o;
  o.instances = {"p3.2xlarge"};
  o.regions = {"us-east-1"};
  o.pricing = {PricingMode::kOnDemand, PricingMode::kReserved1y};
  o.fixed_hours = 8760;
  Recommendation r = Recommended({{"kind", "train"}, {"model", "ResNet-50"}}, o);
  ASSERT_EQ(r.ranked.size(), 2u);
  const Candidate* od = nullptr;
  const Candidate* ri = nullptr;
  for (const Candidate& c : r.ranked) (c.mode == PricingMode::kOnDemand ? od : ri) = &c;
  ASSERT_TRUE(od && ri);
  // The compute line is the seed's arithmetic; the bill adds start-up and storage around it.
  EXPECT_DOUBLE_EQ(*od->costs.front().amount, 3.06 * 8760);  // 26,805.60
  EXPECT_DOUBLE_EQ(*ri->costs.front().amount, *ri->price_per_hour * 8760);
  EXPECT_LT(*od->total_cost - *od->costs.front().amount, 0.01 * *od->total_cost);
  EXPECT_LT(*ri->total_cost, *od->total_cost);
  ASSERT_TRUE(ri->break_even_utilisation.has_value());
  EXPECT_DOUBLE_EQ(*ri->break_even_utilisation, *ri->price_per_hour / 3.06);
  // A short job still pays the whole term.
  o.fixed_hours = 100;
  Recommendation short_job = Recommended({{"kind", "train"}, {"model", "ResNet-50"}}, o);
  for (const Candidate& c : short_job.ranked) {
    if (c.mode == PricingMode::kReserved1y) {
      EXPECT_DOUBLE_EQ(*c.costs.front().amount, *c.price_per_hour * 8760);
    }
  }
}

TEST(RecommendTest, UnknownPricesAreRejectedNotFree) {
  RecommendOptions o;
  o.providers = {"alibaba"};
  // Alibaba types with a GPU that fits the model but no price in the built-in catalog (no
  // public source gives one): they must be rejected, never ranked as free.
  o.instances = {"ecs.gn8is.2xlarge", "ecs.gn8is.4xlarge", "ecs.gn7e-c16g1.4xlarge"};
  Recommendation r =
      Recommended({{"kind", "inference"}, {"model", "Llama-3.1-8B"}, {"samples", "1000"}}, o);
  EXPECT_TRUE(r.ranked.empty());
  bool unknown = false;
  for (const Candidate& c : r.rejected) unknown |= c.rejection.rfind("price unknown", 0) == 0;
  EXPECT_TRUE(unknown);
}

TEST(RecommendTest, ObjectivesOrderByCostOrTime) {
  Fields job = {{"kind", "train"},
                {"model", "ResNet-50"},
                {"precision", "fp16"},
                {"epochs", "10"},
                {"dataset_samples", "1281167"}};
  RecommendOptions cheapest;
  Recommendation a = Recommended(job, cheapest);
  for (size_t i = 1; i < a.ranked.size(); ++i) {
    EXPECT_LE(*a.ranked[i - 1].total_cost, *a.ranked[i].total_cost + 1e-9);
  }
  RecommendOptions fastest;
  fastest.objective = Objective::kFastest;
  Recommendation b = Recommended(job, fastest);
  for (size_t i = 1; i < b.ranked.size(); ++i) EXPECT_LE(b.ranked[i - 1].hours, b.ranked[i].hours);
  EXPECT_TRUE(a.ranked.front().pareto);
  EXPECT_TRUE(b.ranked.front().pareto);
}

// A service is priced for its whole period on any hardware, so "fastest" cannot mean fewest
// hours (every offer has the same): it is the time per output token a request sees. Among
// equally fast offers the cheaper comes first.
TEST(RecommendTest, FastestServiceRanksByTimePerOutputTokenThenCost) {
  RecommendOptions o;
  o.objective = Objective::kFastest;
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r = Recommended(LlamaServiceAtThirtyRequestsPerSecond(), o);
  ExpectInvariants(r);
  ASSERT_TRUE(r.ranked.front().instance->has_gpu()) << r.ranked.front().instance->name;
  for (size_t i = 1; i < r.ranked.size(); ++i) {
    const Candidate& a = r.ranked[i - 1];
    const Candidate& b = r.ranked[i];
    ASSERT_TRUE(a.estimate->serving && b.estimate->serving);
    EXPECT_LE(a.estimate->serving->tpot_s, b.estimate->serving->tpot_s) << b.instance->name;
    if (a.estimate->serving->tpot_s == b.estimate->serving->tpot_s) {
      EXPECT_LE(*a.total_cost, *b.total_cost) << b.instance->name;
    }
  }
}

TEST(RecommendTest, StarvedInputPipelineSuggestsACompanion) {
  RecommendOptions o;
  o.instances = {"p4d.24xlarge"};
  o.regions = {"us-east-1"};
  o.pricing = {PricingMode::kOnDemand};
  // 96 vCPUs decoding 50 images/s each cannot feed eight A100s training ResNet-50.
  Recommendation r = Recommended({{"kind", "train"},
                                  {"model", "ResNet-50"},
                                  {"precision", "fp16"},
                                  {"micro_batch", "256"},
                                  {"loader_samples_per_core_s", "50"},
                                  {"epochs", "1"},
                                  {"dataset_samples", "1281167"}},
                                 o);
  ASSERT_EQ(r.ranked.size(), 1u);
  const Candidate& c = r.ranked.front();
  EXPECT_EQ(c.estimate->bottleneck, "input pipeline");
  bool companion = false;
  for (const std::string& w : c.warnings) {
    companion |= w.find("input-bound") != std::string::npos &&
                 w.find("data-loading companion") != std::string::npos;
  }
  EXPECT_TRUE(companion) << (c.warnings.empty() ? "" : c.warnings.front());
}

// The library names its options by their names; the command line (WithFlagNames) and the API
// (WithRequestOptionPath) spell them their own way.
TEST(RecommendTest, BadOptionsNameTheOption) {
  Workload w;
  ASSERT_TRUE(SetWorkloadField(&w, "kind", "inference").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "model", "Llama-3.1-8B").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "samples", "1000").ok());
  ASSERT_TRUE(FinalizeWorkload(testing::BuiltInCatalog(), &w).ok());
  Recommendation r;
  RecommendOptions o;
  o.providers = {"awz"};
  Status s = Recommend(testing::BuiltInCatalog(), w, o, &r);
  EXPECT_NE(s.message().find("providers: unknown value 'awz'; did you mean 'aws'"),
            std::string::npos)
      << s.message();
  o = RecommendOptions();
  o.deadline_hours = -1;
  EXPECT_EQ(Recommend(testing::BuiltInCatalog(), w, o, &r).message(),
            "deadline_hours: must be above 0");
  o = RecommendOptions();
  o.gpus = {"H1000"};
  EXPECT_EQ(Recommend(testing::BuiltInCatalog(), w, o, &r).message().rfind("gpus: unknown GPU", 0),
            0u);
}

TEST(RecommendTest, WhyNotExplainsARejectedInstance) {
  Recommendation r = Recommended(
      {{"kind", "train"}, {"model", "Llama-2-7B"}, {"seq_len", "1024"}, {"tokens", "1e8"}});
  std::vector<std::string> lines = ExplainInstance(r, "g5.xlarge");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("does not fit in memory"), std::string::npos) << lines.front();
}

TEST(RecommendTest, ParetoPlotMarksTheChoice) {
  Recommendation r =
      Recommended({{"kind", "inference"}, {"model", "Llama-3.1-8B"}, {"samples", "10000"}});
  std::string svg = ParetoSvg(r, "USD");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("chosen: " + r.ranked.front().instance->name), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
}

// A hint is only worth giving when applying it makes something feasible: each is applied to the
// request and the recommendation run again.
Recommendation Applied(const Fields& fields, RecommendOptions o, const FitHint& hint) {
  Fields changed = fields;
  for (const auto& [k, v] : hint.workload) changed.emplace_back(k, v);
  for (const auto& [k, v] : hint.options) {
    if (k == "deadline_hours")
      o.deadline_hours = std::stod(v);
    else if (k == "budget")
      o.budget = std::stod(v);
    else if (k == "max_nodes")
      o.max_nodes = std::stoi(v);
    else
      ADD_FAILURE() << "a hint sets an option the test does not know: " << k;
  }
  return Recommended(changed, o);
}

TEST(RecommendTest, HintsOfWhatWouldFitMakeSomethingFeasibleWhenApplied) {
  const Fields resnet = {
      {"kind", "train"}, {"model", "ResNet-50"}, {"epochs", "90"}, {"dataset_samples", "1.28e6"}};
  RecommendOptions tight;
  tight.deadline_hours = 0.01;
  Recommendation r = Recommended(resnet, tight);
  ASSERT_TRUE(r.ranked.empty());
  ASSERT_EQ(r.hints.size(), 1u);
  ASSERT_EQ(r.hints[0].options.size(), 1u);
  EXPECT_EQ(r.hints[0].options[0].first, "deadline_hours");
  EXPECT_GT(std::stod(r.hints[0].options[0].second), 0.01);
  EXPECT_FALSE(Applied(resnet, tight, r.hints[0]).ranked.empty()) << r.hints[0].note;

  RecommendOptions poor;
  poor.budget = 0.01;
  r = Recommended(resnet, poor);
  ASSERT_TRUE(r.ranked.empty());
  ASSERT_EQ(r.hints.size(), 1u);
  EXPECT_EQ(r.hints[0].options[0].first, "budget");
  EXPECT_FALSE(Applied(resnet, poor, r.hints[0]).ranked.empty()) << r.hints[0].note;

  const Fields huge = {{"kind", "train"}, {"model", "Llama-3.1-405B"}, {"tokens", "1e8"}};
  r = Recommended(huge);
  ASSERT_TRUE(r.ranked.empty());
  ASSERT_FALSE(r.hints.empty());
  EXPECT_FALSE(r.hints[0].workload.empty()) << r.hints[0].note;
  EXPECT_FALSE(Applied(huge, RecommendOptions(), r.hints[0]).ranked.empty()) << r.hints[0].note;
  // Nothing feasible, hints in the JSON with what to set; a feasible answer has none.
  nlohmann::json j = RecommendationToJson(Workload(), RecommendOptions(), r, 10);
  ASSERT_TRUE(j.contains("hints"));
  EXPECT_EQ(j["hints"][0]["workload"]["recompute"], "full");
  EXPECT_TRUE(Recommended(resnet).hints.empty());
}

}  // namespace
}  // namespace cloudfit

namespace cloudfit {
namespace {

Workload Finalized(const Fields& fields) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  EXPECT_TRUE(FinalizeWorkload(testing::BuiltInCatalog(), &w).ok());
  return w;
}

TEST(EstimateCacheTest, AReusedEstimateGivesTheSameAnswer) {
  Workload w = Finalized({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}});
  RecommendOptions o;
  o.top = 3;
  Recommendation fresh, first, reused;
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &fresh).ok());
  EstimateCache cache;
  std::shared_ptr<WorkloadEstimates> estimates = cache.For("lora 8B");
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &first, estimates.get()).ok());
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &reused, estimates.get()).ok());
  // The second answer's estimates are the very objects the first made.
  ASSERT_FALSE(reused.ranked.empty());
  EXPECT_EQ(first.ranked.front().estimate.get(), reused.ranked.front().estimate.get());
  std::string expected = RecommendationToJson(w, o, fresh, o.top).dump();
  EXPECT_EQ(RecommendationToJson(w, o, first, o.top).dump(), expected);
  EXPECT_EQ(RecommendationToJson(w, o, reused, o.top).dump(), expected);
}

TEST(EstimateCacheTest, HoldsAtMostItsWorkloadsAndDropsTheLeastRecentlyUsed) {
  EstimateCache cache(2);
  std::shared_ptr<WorkloadEstimates> a = cache.For("a");
  std::shared_ptr<WorkloadEstimates> b = cache.For("b");
  EXPECT_EQ(cache.For("a"), a);                           // a is now the most recent
  std::shared_ptr<WorkloadEstimates> c = cache.For("c");  // drops b
  EXPECT_EQ(cache.For("a"), a);
  EXPECT_EQ(cache.For("c"), c);
  EXPECT_NE(cache.For("b"), b) << "b was dropped, so it comes back empty";
}

TEST(EstimateCacheTest, KeepsFailuresWithTheirReason) {
  WorkloadEstimates estimates;
  const InstanceType& t = testing::BuiltInCatalog().instances().front();
  WorkloadEstimates::Entry entry;
  EXPECT_FALSE(estimates.Find(&t, 1, &entry));
  estimates.Insert(&t, 1, {Status::InvalidArgument("cannot split"), nullptr, nullptr, ""});
  ASSERT_TRUE(estimates.Find(&t, 1, &entry));
  EXPECT_EQ(entry.status.message(), "cannot split");
  EXPECT_FALSE(estimates.Find(&t, 2, &entry)) << "node counts are estimated apart";
}

TEST(RecommendTest, OnlyTheOffersShownAreDescribed) {
  RecommendOptions o;
  o.top = 2;
  Recommendation r = Recommended(
      {{"kind", "train"}, {"model", "ResNet-50"}, {"epochs", "1"}, {"dataset_samples", "1281167"}},
      o);
  ASSERT_GT(r.ranked.size(), 10u);
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Candidate& c = r.ranked[i];
    bool shown = i < o.top || c.pareto;
    EXPECT_EQ(c.described, shown) << i << " " << c.instance->name;
    if (shown) {
      EXPECT_FALSE(c.reasons.empty()) << c.instance->name;
      ASSERT_FALSE(c.costs.empty()) << c.instance->name;
      EXPECT_FALSE(c.costs.front().detail.empty()) << c.instance->name;
      // The bill adds up to the total the ranking used.
      double sum = 0;
      for (const CostLine& line : c.costs) sum += line.amount.value_or(0);
      EXPECT_NEAR(sum, *c.total_cost, 1e-9 * sum) << c.instance->name;
    } else {
      EXPECT_TRUE(c.reasons.empty()) << c.instance->name;
      EXPECT_TRUE(c.costs.empty()) << c.instance->name;
    }
  }
  // Words or not, the numbers are the same: an offer not shown, described on request, keeps its
  // total, hours and price to the last bit.
  const Candidate& hidden = r.ranked.back();
  ASSERT_FALSE(hidden.described);
  RecommendOptions why_not = o;
  why_not.describe_instances = {hidden.instance->name};
  Recommendation described = Recommended(
      {{"kind", "train"}, {"model", "ResNet-50"}, {"epochs", "1"}, {"dataset_samples", "1281167"}},
      why_not);
  ASSERT_EQ(described.ranked.size(), r.ranked.size());
  const Candidate& same = described.ranked.back();
  ASSERT_EQ(same.instance, hidden.instance);
  EXPECT_TRUE(same.described);
  EXPECT_FALSE(same.costs.empty());
  EXPECT_EQ(*same.total_cost, *hidden.total_cost);
  EXPECT_EQ(same.hours, hidden.hours);
  EXPECT_EQ(*same.price_per_hour, *hidden.price_per_hour);
  EXPECT_EQ(same.cost_per_unit, hidden.cost_per_unit);
}

}  // namespace
}  // namespace cloudfit
