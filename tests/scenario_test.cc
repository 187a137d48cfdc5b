// Every scenario of the seed guides (../shared/seeds) and of DESIGN.md's "Who uses it", end to
// end on the built-in catalog, each asserting what an experienced engineer would expect: which
// family wins, what must never win, and the order of magnitude of time and cost. Prices will be
// refreshed, so the assertions are relations and orders of magnitude, not figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cloudfit/recommend.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

using testing::BuiltWorkload;

Recommendation Recommended(const Fields& fields, const RecommendOptions& o = RecommendOptions()) {
  Workload w = BuiltWorkload(fields);
  Recommendation r;
  Status s = Recommend(BuiltIn(), w, o, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r;
}

double GpuMemoryGib(const Candidate& c) {
  return c.instance->gpu_count > 0 ? c.instance->gpu_memory_gib() / c.instance->gpu_count : 0;
}

bool Within(double value, double low, double high) { return value >= low && value <= high; }

// DESIGN.md, the ML engineer: "Can I fine-tune an 8B model with LoRA on a 24 GB A10? If not,
// what is the cheapest instance that finishes 2 epochs over 50M tokens by Friday?"
TEST(ScenarioTest, LoraOfAnEightBillionModelOnAnA10AndByFriday) {
  Workload w = BuiltWorkload({{"kind", "lora"},
                              {"model", "Llama-3.1-8B"},
                              {"seq_len", "2048"},
                              {"recompute", "full"},
                              {"epochs", "2"},
                              {"tokens", "50e6"}});
  HardwareSpec spec;
  spec.gpu = "A10";
  Hardware a10;
  ASSERT_TRUE(ResolveHardware(BuiltIn(), spec, &a10).ok());
  Estimate e;
  ASSERT_TRUE(EstimateWorkload(BuiltIn(), w, a10, &e).ok());
  EXPECT_TRUE(e.fits) << "16 GB of bf16 weights, adapters and checkpointed activations fit 24 GB";
  EXPECT_GT(e.memory.total_bytes() / e.memory.capacity_bytes, 0.6) << "but not with much room";
  RecommendOptions o;
  o.deadline_hours = 72;  // "by Friday", asked on a Tuesday
  Recommendation r = Recommended({{"kind", "lora"},
                                  {"model", "Llama-3.1-8B"},
                                  {"seq_len", "2048"},
                                  {"recompute", "full"},
                                  {"epochs", "2"},
                                  {"tokens", "50e6"}},
                                 o);
  ASSERT_FALSE(r.ranked.empty());
  const Candidate& best = r.ranked.front();
  EXPECT_TRUE(best.instance->has_gpu());
  EXPECT_GE(GpuMemoryGib(best), 22);
  EXPECT_LE(best.hours, 72);
  EXPECT_EQ(best.unit, "epoch");
  // 100M tokens of LoRA: minutes on an 8-GPU node at a low spot price (p6-b200 spot in
  // us-east-2), hours on one modern GPU; tens of dollars at most.
  EXPECT_TRUE(Within(best.hours, 0.1, 72)) << best.hours;
  EXPECT_TRUE(Within(*best.total_cost, 0.5, 200)) << *best.total_cost;
}

// DESIGN.md, the serving engineer: "Serve a 13B model at 30 requests/s with p95 time-to-first-
// token under 1 s: how many replicas of which instance, what does a million tokens cost, when
// should it scale in?" (The queueing model is the serving helper's; this holds the shape.)
TEST(ScenarioTest, ServingAThirteenBillionModelAtThirtyRequestsPerSecond) {
  Recommendation r = Recommended({{"kind", "serve"},
                                  {"model", "Llama-2-13B"},
                                  {"precision", "fp16"},
                                  {"request_rate", "30"},
                                  {"ttft_target_ms", "1000"}},
                                 [] {
                                   RecommendOptions o;
                                   o.pricing = {PricingMode::kOnDemand};
                                   return o;
                                 }());
  ASSERT_FALSE(r.ranked.empty());
  for (size_t i = 0; i < std::min<size_t>(5, r.ranked.size()); ++i) {
    const Candidate& c = r.ranked[i];
    EXPECT_TRUE(c.instance->has_gpu());
    EXPECT_GE(c.replicas * c.estimate->serving->requests_per_s, 30 - 1e-9);
    ASSERT_TRUE(c.autoscaling.has_value());
    EXPECT_LT(c.autoscaling->scale_in_utilisation, c.autoscaling->scale_out_utilisation);
    EXPECT_EQ(c.unit, "1M tokens");
    EXPECT_TRUE(Within(*c.cost_per_unit, 0.01, 100)) << *c.cost_per_unit;
  }
}

// Seed 001 ("light inference / development: one T4-class GPU") and issue 10: a development
// endpoint at 0.2 requests/s forms a batch of one or two sequences, not the engine's maximum, so
// a token takes tens of milliseconds (not the 1-1.8 s of a plan that always ran the full batch),
// and one small instance carries it: never a multi-GPU training node.
TEST(ScenarioTest, DevelopmentEndpointIsOneSmallInstanceAtItsOwnLoad) {
  Recommendation r =
      Recommended({{"kind", "serve"}, {"model", "Llama-3.1-8B"}, {"request_rate", "0.2"}});
  ASSERT_FALSE(r.ranked.empty());
  for (size_t i = 0; i < std::min<size_t>(5, r.ranked.size()); ++i) {
    const Candidate& c = r.ranked[i];
    SCOPED_TRACE(c.instance->name);
    EXPECT_EQ(c.replicas, 1);
    EXPECT_LE(c.instance->gpu_count, 2);
    ASSERT_TRUE(c.estimate->serving.has_value());
    const ServingFigures& s = *c.estimate->serving;
    EXPECT_LT(s.batch_at_load, 4) << "0.2 requests/s keeps one or two sequences in flight";
    EXPECT_LT(s.tpot_s, 0.2) << "a token at 0.2 requests/s costs about one sequence's step";
    EXPECT_LT(s.utilisation, 0.7);
    // A month of one small instance: hundreds of dollars, not thousands.
    EXPECT_TRUE(Within(*c.total_cost, 50, 1500)) << *c.total_cost;
  }
}

// DESIGN.md, the render artist: "2,400 frames of a 20 GB Cycles scene within 48 h: which GPUs,
// spot or not?" Frames are independent: spot's interruptions lose one frame, so spot wins.
TEST(ScenarioTest, RenderFarmPrefersSpotAndGpusThatHoldTheScene) {
  RecommendOptions o;
  o.deadline_hours = 48;
  o.max_nodes = 16;
  Recommendation r = Recommended({{"kind", "render"},
                                  {"frames", "2400"},
                                  {"seconds_per_frame", "120"},
                                  {"reference_gpu", "RTX 4090"},
                                  {"scene_memory_gib", "20"}},
                                 o);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.ranked.front().mode, PricingMode::kSpot);
  for (const Candidate& c : r.ranked) {
    EXPECT_GE(GpuMemoryGib(c), 20.5) << c.instance->name;
    EXPECT_LE(c.hours, 48);
    if (c.spot) {
      EXPECT_EQ(c.spot->checkpoint_interval_hours, 0) << "frames need no checkpoint";
    }
  }
  // 80 GPU-hours of RTX 4090 work: tens to hundreds of dollars.
  EXPECT_TRUE(Within(*r.ranked.front().total_cost, 5, 1000)) << *r.ranked.front().total_cost;
}

// DESIGN.md, the data engineer: "Preprocess 800 GB of images: which CPU or memory-optimised
// instance?" Seed 000: data preparation on compute (c) or memory (r) families, not GPUs.
TEST(ScenarioTest, PreprocessingRunsOnCpus) {
  Recommendation r =
      Recommended({{"kind", "preprocess"}, {"data_gb", "800"}, {"per_core_mb_s", "40"}});
  ASSERT_FALSE(r.ranked.empty());
  for (size_t i = 0; i < std::min<size_t>(10, r.ranked.size()); ++i) {
    EXPECT_FALSE(r.ranked[i].instance->has_gpu()) << r.ranked[i].instance->name;
  }
  // 800 GB at 40 MB/s per vCPU: about 5.6 vCPU-hours of work, a few dollars.
  EXPECT_TRUE(Within(*r.ranked.front().total_cost, 0.01, 20)) << *r.ranked.front().total_cost;
}

// DESIGN.md, whoever pays: "On-demand, 1-year reserved or spot for a 3-month run? Where is the
// break-even?" Seed 004: reserved pays for a year, used or not.
TEST(ScenarioTest, ReservedPaysOnlyWhenTheMachineStaysBusy) {
  RecommendOptions o;
  o.instances = {"p3.2xlarge"};
  o.regions = {"us-east-1"};
  o.pricing = {PricingMode::kOnDemand, PricingMode::kReserved1y};
  auto cost = [&](double hours, PricingMode mode) {
    o.fixed_hours = hours;
    Recommendation r = Recommended({{"kind", "train"}, {"model", "ResNet-50"}}, o);
    for (const Candidate& c : r.ranked) {
      if (c.mode == mode) return *c.total_cost;
    }
    ADD_FAILURE() << "no " << PricingModeName(mode);
    return 0.0;
  };
  double quarter = 3 * 730;
  EXPECT_LT(cost(quarter, PricingMode::kOnDemand), cost(quarter, PricingMode::kReserved1y))
      << "three months do not use a year's commitment";
  EXPECT_GT(cost(8760, PricingMode::kOnDemand), cost(8760, PricingMode::kReserved1y))
      << "a busy year does";
  o.fixed_hours = 8760;
  Recommendation r = Recommended({{"kind", "train"}, {"model", "ResNet-50"}}, o);
  for (const Candidate& c : r.ranked) {
    if (c.mode != PricingMode::kReserved1y) continue;
    ASSERT_TRUE(c.break_even_utilisation.has_value());
    double be = *c.break_even_utilisation;
    EXPECT_TRUE(Within(be, 0.3, 0.95)) << be;
    // At the break-even share of the year, on demand costs what the reservation does.
    EXPECT_NEAR(cost(be * 8760, PricingMode::kOnDemand) / cost(8760, PricingMode::kReserved1y), 1,
                0.02);
  }
}

// Seed 000/002: BERT fine-tuning is a small GPU job: the recipe's batch keeps it compute-bound,
// a single mid-range GPU wins, and it costs cents to dollars.
TEST(ScenarioTest, BertFineTuningIsASmallGpuJob) {
  Recommendation r = Recommended({{"kind", "train"},
                                  {"model", "BERT-base-uncased"},
                                  {"seq_len", "384"},
                                  {"epochs", "3"},
                                  {"dataset_samples", "88641"}});
  ASSERT_FALSE(r.ranked.empty());
  const Candidate& best = r.ranked.front();
  EXPECT_TRUE(best.instance->has_gpu());
  EXPECT_LE(best.total_gpus(), 1);
  EXPECT_NE(best.estimate->bottleneck, "optimizer step");
  EXPECT_TRUE(Within(best.hours, 0.05, 10)) << best.hours;
  EXPECT_TRUE(Within(*best.total_cost, 0.01, 20)) << *best.total_cost;
  // Seed 002's rule of thumb, BERT-base takes about 6-8 GB: the estimate is in that range.
  EXPECT_TRUE(Within(best.estimate->memory.total_bytes() / 1e9, 2, 12))
      << best.estimate->memory.total_bytes() / 1e9;
}

// Seed 000/001: ResNet-50 on ImageNet (90 epochs) is a multi-GPU job; a CPU instance never wins
// ("20-50x slower than an A10").
TEST(ScenarioTest, ImageNetTrainingNeedsGpusAndFastLoaders) {
  RecommendOptions o;
  o.deadline_hours = 72;
  o.max_nodes = 2;
  Recommendation r = Recommended({{"kind", "train"},
                                  {"model", "ResNet-50"},
                                  {"precision", "fp16"},
                                  {"epochs", "90"},
                                  {"dataset_samples", "1281167"}},
                                 o);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_TRUE(r.ranked.front().instance->has_gpu());
  for (const Candidate& c : r.ranked) {
    EXPECT_LE(c.hours, 72);
    // A CPU meets three days only with bf16 matrix units (AMX): never an fp32-only CPU.
    if (!c.instance->has_gpu()) {
      ASSERT_NE(c.instance->cpu, nullptr) << c.instance->name;
      EXPECT_TRUE(c.instance->cpu->bf16_flops_per_vcpu.has_value()) << c.instance->name;
    }
  }
  // 115M images: a GPU-day on a current GPU or three on a cheap spot T4; dollars to hundreds.
  EXPECT_TRUE(Within(*r.ranked.front().total_cost, 1, 1000)) << *r.ranked.front().total_cost;
  // Four vCPUs per GPU cannot feed a fast GPU: small GPU instances are input-bound.
  const InstanceType* g5 = nullptr;  // one L40S and four vCPUs
  ASSERT_TRUE(BuiltIn().FindInstance("g6e.xlarge", &g5).ok());
  Workload w = BuiltWorkload({{"kind", "train"},
                              {"model", "ResNet-50"},
                              {"precision", "fp16"},
                              {"epochs", "90"},
                              {"dataset_samples", "1281167"}});
  Estimate e;
  ASSERT_TRUE(EstimateWorkload(BuiltIn(), w, HardwareForInstance(*g5, 1), &e).ok());
  EXPECT_EQ(e.bottleneck, "input pipeline");
}

// Seed 001: "avoid a single A10 for 7B+ LLM training". Seed 002: "LLaMA-7B and above: several
// A100/H100". Never one 24 GB GPU for full fine-tuning of 7B.
TEST(ScenarioTest, FullFineTuningOfSevenBillionNeedsBigGpus) {
  Recommendation r = Recommended({{"kind", "train"}, {"model", "Llama-2-7B"}, {"tokens", "2e8"}});
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_TRUE(r.ranked.front().instance->has_gpu());
  for (const Candidate& c : r.ranked) {
    if (!c.instance->has_gpu()) continue;  // CPUs with the RAM are slow, not impossible
    double total_gpu_gib = GpuMemoryGib(c) * c.total_gpus();
    EXPECT_GE(total_gpu_gib, 80) << c.instance->name << ": 16 bytes/param of 6.7B params";
  }
}

// DESIGN.md / issue 10: a 175B model's training never ranks a large spot cluster first, and a
// multi-node job on spot is never above the tightly coupled limit.
TEST(ScenarioTest, Gpt3TrainingIsNotALargeSpotCluster) {
  RecommendOptions o;
  o.max_nodes = 128;
  Recommendation r =
      Recommended({{"kind", "train"}, {"model", "GPT-3 175B"}, {"tokens", "3e11"}}, o);
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    if (c.mode == PricingMode::kSpot) {
      EXPECT_LE(c.nodes, o.max_spot_nodes) << c.instance->name;
    }
  }
  bool said = false;
  for (const Candidate& c : r.rejected) {
    said |= c.rejection.rfind("spot for a tightly coupled job", 0) == 0;
  }
  EXPECT_TRUE(said);
  // With a deadline the answer is a large on-demand or reserved cluster of 80 GB-class GPUs.
  o.deadline_hours = 24 * 60;
  Recommendation fast =
      Recommended({{"kind", "train"}, {"model", "GPT-3 175B"}, {"tokens", "3e11"}}, o);
  ASSERT_FALSE(fast.ranked.empty());
  EXPECT_NE(fast.ranked.front().mode, PricingMode::kSpot);
  EXPECT_GE(fast.ranked.front().total_gpus(), 64);
}

// Seed 001/003: cloud gaming and 3D streaming are sized by what each session needs, not by the
// encoder alone: never 20 game sessions on a 4-vCPU, one-GPU instance.
TEST(ScenarioTest, CloudGamingIsSizedByEverySessionsNeeds) {
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r = Recommended({{"kind", "realtime"}, {"streams", "20"}}, o);
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    double sessions = c.estimate->throughput;
    EXPECT_LE(sessions * 8, c.instance->vcpus + 1e-9) << c.instance->name << ": 8 vCPUs each";
    EXPECT_LE(sessions * 16, c.instance->memory_gib()) << c.instance->name << ": 16 GiB each";
    EXPECT_GE(sessions * c.replicas, 20);
    EXPECT_FALSE(c.estimate->bottleneck.empty());
  }
  const InstanceType* g4dn = nullptr;
  ASSERT_TRUE(BuiltIn().FindInstance("g4dn.xlarge", &g4dn).ok());
  Workload w = BuiltWorkload({{"kind", "realtime"}, {"streams", "20"}});
  Estimate e;
  ASSERT_TRUE(EstimateWorkload(BuiltIn(), w, HardwareForInstance(*g4dn, 1), &e).ok());
  EXPECT_EQ(e.throughput, 0);
  EXPECT_EQ(e.bottleneck, "vCPUs");
  // A lighter title on a bigger instance: the binding limit is named.
  Workload esports =
      BuiltWorkload({{"kind", "realtime"}, {"streams", "20"}, {"session_profile", "esports"}});
  const InstanceType* g5 = nullptr;
  ASSERT_TRUE(BuiltIn().FindInstance("g5.12xlarge", &g5).ok());
  ASSERT_TRUE(EstimateWorkload(BuiltIn(), esports, HardwareForInstance(*g5, 1), &e).ok());
  EXPECT_GE(e.throughput, 4);
  EXPECT_NE(e.bottleneck, "");
}

// Seed 001: CAD seats need the professional driver (vGPU / RTX vWS) and enough RAM per seat:
// never 4 seats on one T4 instance with 16 GB of RAM.
TEST(ScenarioTest, CadSeatsAreSizedByRamVcpusAndFrameBuffer) {
  const InstanceType* g4dn = nullptr;
  ASSERT_TRUE(BuiltIn().FindInstance("g4dn.xlarge", &g4dn).ok());
  for (const char* profile : {"light", "medium", "heavy"}) {
    Workload w = BuiltWorkload({{"kind", "cad"}, {"streams", "4"}, {"session_profile", profile}});
    Estimate e;
    ASSERT_TRUE(EstimateWorkload(BuiltIn(), w, HardwareForInstance(*g4dn, 1), &e).ok());
    EXPECT_LE(e.throughput, 1) << profile;
  }
  Recommendation r = Recommended({{"kind", "cad"}, {"streams", "4"}});
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    EXPECT_TRUE(c.instance->gpu->vgpu || c.estimate->throughput <= c.instance->gpu_count)
        << c.instance->name << ": without vGPU one seat per GPU";
    EXPECT_LE(c.estimate->throughput * 16, c.instance->memory_gib()) << c.instance->name;
  }
}

// Seed 002: small-scale machine learning (< 10 GB, scikit-learn, random forests) runs on CPUs;
// a GPU only pays for large gradient-boosting jobs.
TEST(ScenarioTest, ClassicMlRanksCpuInstancesFirstWhenTheyWin) {
  Recommendation small = Recommended({{"kind", "classic-ml"}, {"rows", "2e6"}, {"features", "50"}});
  ASSERT_FALSE(small.ranked.empty());
  EXPECT_FALSE(small.ranked.front().instance->has_gpu()) << small.ranked.front().instance->name;
  for (const Candidate& c : small.ranked) {
    // A cheap GPU instance may rank (its vCPUs do the work), never ahead of the best CPU one.
    if (c.instance->has_gpu()) {
      EXPECT_GT(*c.total_cost, *small.ranked.front().total_cost);
      break;
    }
  }
  EXPECT_TRUE(Within(small.ranked.front().hours, 0.01, 2)) << small.ranked.front().hours;
  EXPECT_LT(*small.ranked.front().total_cost, 1);
  Recommendation linear = Recommended(
      {{"kind", "classic-ml"}, {"rows", "1e7"}, {"features", "100"}, {"algorithm", "linear"}});
  ASSERT_FALSE(linear.ranked.empty());
  EXPECT_FALSE(linear.ranked.front().instance->has_gpu());
  // Thirty million rows, a thousand deep trees: XGBoost on a GPU is the cheaper way.
  Recommendation big = Recommended({{"kind", "classic-ml"},
                                    {"rows", "3e7"},
                                    {"features", "100"},
                                    {"trees", "1000"},
                                    {"tree_depth", "8"}});
  ASSERT_FALSE(big.ranked.empty());
  EXPECT_TRUE(big.ranked.front().instance->has_gpu());
  EXPECT_TRUE(big.ranked.front().estimate->runs_on_gpu);
}

}  // namespace
}  // namespace cloudfit
