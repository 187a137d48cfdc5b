// Risk that grows with what can fail: spot rates per provider and GPU class, hazards that add
// over a synchronous job's nodes, Young/Daly checkpoints for the whole job in every pricing mode,
// and multi-node training held to the interconnect the instance really has.
#include "recommend/job_risk.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

// The fixture catalog with an interconnect per type: p4d with EFA, and an 8x A100 type of the
// same shape on 25 Gbit/s Ethernet (a test type, not a real offer).
Catalog FabricCatalog() {
  CatalogFiles files = testing::FixtureFiles();
  files["instances/aws.csv"] =
      "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,"
      "arch,network_gbps,interconnect,local_disk_gb,local_disk_type,region,ondemand,spot,"
      "reserved_1y,reserved_3y,currency,source,as_of,notes\n"
      "aws,p4d.24xlarge,p4d,A100,8,,96,1152,8275CL,x86_64,400,efa,8000,nvme,us-east-1,21.96,"
      "8.5,13.5,8.1,USD,https://aws.amazon.com/ec2/instance-types/p4/,2026-07-22,\n"
      "aws,test.tcp8,test,A100,8,,96,1152,8275CL,x86_64,25,ethernet,8000,nvme,us-east-1,19.0,"
      "7.0,,,USD,test,2026-07-22,a test type\n"
      "aws,c7i.large,c7i,,0,,2,4,8488C,x86_64,12.5,ethernet,0,,us-east-1,0.08925,0.03,,,USD,"
      "https://aws.amazon.com/ec2/instance-types/c7i/,2026-07-22,\n";
  files.erase("instances/gcp.csv");
  files.erase("instances/alibaba.csv");
  Catalog catalog;
  Status s = Catalog::FromFiles(files, "fixture", &catalog);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return catalog;
}

Workload Built(const Catalog& catalog, const Fields& fields) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  Status s = FinalizeWorkload(catalog, &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

// The best candidate of `type` at `nodes` in `mode`, or nullptr with the rejection in `why`.
const Candidate* On(const Recommendation& r, int nodes, PricingMode mode, std::string* why) {
  for (const Candidate& c : r.ranked) {
    if (c.nodes == nodes && c.mode == mode) return &c;
  }
  for (const Candidate& c : r.rejected) {
    if (c.nodes == nodes && (c.region == nullptr || c.mode == mode)) *why = c.rejection;
  }
  return nullptr;
}

TEST(JobRiskTest, DalysModel) {
  // No hazard, no overhead.
  JobRisk none = ExpectedJobRisk({0, 1e12, 1e9, 1e9, 100, 0.1, 0});
  EXPECT_EQ(none.overhead_fraction, 0);
  EXPECT_EQ(none.probability_interrupted, 0);
  // M = 100 h, C = 0.1 h, R = 0.2 h, W = 1,000 h: checkpoint at Daly's interval; the expected
  // wall time is M e^(R/M) (e^((tau+C)/M) - 1) W / tau.
  RiskInput in;
  in.hazard_per_hour = 0.01;
  in.state_bytes = 360e9;
  in.write_bytes_per_s = in.read_bytes_per_s = 1e9;  // C = 360 s = 0.1 h; loading also 0.1 h
  in.relaunch_hours = 0.1;                           // R = 0.1 + 0.1
  in.job_hours = 1000;
  JobRisk r = ExpectedJobRisk(in);
  double m = 100, c = 0.1, rr = 0.2, w = 1000;
  double x = c / (2 * m);
  double tau = std::sqrt(2 * c * m) * (1 + std::sqrt(x) / 3 + x / 9) - c;
  EXPECT_NEAR(r.checkpoint_interval_hours, tau, 1e-9);
  double wall = m * std::exp(rr / m) * std::expm1((tau + c) / m) * w / tau;
  EXPECT_NEAR(r.overhead_fraction, wall / w - 1, 1e-9);
  EXPECT_NEAR(r.restart_hours, 0.2, 1e-12);
  EXPECT_NEAR(r.probability_interrupted, 1 - std::exp(-10.0), 1e-12);
  // A job much shorter than its interval runs without checkpoints and restarts on a failure.
  in.job_hours = 1;
  JobRisk short_job = ExpectedJobRisk(in);
  EXPECT_EQ(short_job.checkpoint_interval_hours, 0);
  EXPECT_NEAR(short_job.overhead_fraction, m * std::exp(rr / m) * std::expm1(1 / m) / 1 - 1, 1e-9);
  // Nothing to save (frames): half a unit of work and a restart per interruption.
  JobRisk frames = ExpectedJobRisk({0.01, 0, 1e9, 1e9, 50, 0.1, 0.5});
  EXPECT_NEAR(frames.overhead_fraction, (0.25 + 0.1) / 100, 1e-12);
}

TEST(JobRiskTest, SpotRatesArePerProviderAndGpuClass) {
  const Catalog& catalog = testing::BuiltInCatalog();
  CostData costs;
  ASSERT_TRUE(CostData::Load(catalog, &costs).ok());
  auto rate = [&](const std::string& type) {
    const InstanceType* t = nullptr;
    EXPECT_TRUE(catalog.FindInstance(type, &t).ok()) << type;
    return SpotHazardFor(catalog, costs, *t);
  };
  SpotHazard h100 = rate("p5.48xlarge");
  SpotHazard a100 = rate("p4d.24xlarge");
  SpotHazard a10g = rate("g5.xlarge");
  SpotHazard cpu = rate("c7i.large");
  EXPECT_DOUBLE_EQ(h100.interruptions_per_month, 0.20);
  EXPECT_DOUBLE_EQ(a100.interruptions_per_month, 0.10);
  EXPECT_GT(h100.interruptions_per_month, a100.interruptions_per_month)
      << "scarce H100 capacity is reclaimed more often";
  EXPECT_NE(a100.basis.find("5-10%"), std::string::npos) << a100.basis;
  EXPECT_FALSE(a100.assumed);
  EXPECT_TRUE(a10g.assumed) << "no band was read for g5: flagged";
  EXPECT_DOUBLE_EQ(cpu.interruptions_per_month, 0.05);
  EXPECT_LT(cpu.interruptions_per_month, a10g.interruptions_per_month);
  SpotHazard gcp = rate("a2-highgpu-8g");
  EXPECT_NE(gcp.basis.find("data/spot.csv"), std::string::npos) << gcp.basis;
  SpotHazard azure = rate("Standard_NC24ads_A100_v4");
  EXPECT_TRUE(azure.assumed);
  EXPECT_DOUBLE_EQ(azure.interruptions_per_month, kAssumedInterruptionsPerMonth);
}

TEST(JobRiskTest, ComparingOnMoreNodesThanARecommendationPricesIsRefusedByName) {
  Catalog catalog = FabricCatalog();
  Workload w = Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "2e9"}});
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &p4d).ok());
  RecommendOptions o;
  Recommendation r;
  EXPECT_TRUE(RecommendOn(catalog, w, o, *p4d, 1024, &r).ok());
  Status s = RecommendOn(catalog, w, o, *p4d, 1025, &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nodes: 1025 is not allowed; at most 1024"), std::string::npos)
      << s.message();
}

TEST(JobRiskTest, RiskGrowsWithNodesAndDuration) {
  Catalog catalog = FabricCatalog();
  Workload w = Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "2e9"}});
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &p4d).ok());
  RecommendOptions o;
  o.pricing = {PricingMode::kSpot, PricingMode::kOnDemand};
  double mtbf_one = 0;
  for (int nodes : {1, 2, 4}) {
    Recommendation r;
    ASSERT_TRUE(RecommendOn(catalog, w, o, *p4d, nodes, &r).ok());
    std::string why;
    const Candidate* spot = On(r, nodes, PricingMode::kSpot, &why);
    ASSERT_NE(spot, nullptr) << why;
    ASSERT_TRUE(spot->spot.has_value());
    if (nodes == 1) mtbf_one = spot->spot->mtbf_hours;
    // A synchronous job stops when any node does: the rates add up.
    EXPECT_NEAR(mtbf_one / spot->spot->mtbf_hours, nodes, 1e-6 * nodes);
    const Candidate* od = On(r, nodes, PricingMode::kOnDemand, &why);
    ASSERT_NE(od, nullptr);
    ASSERT_TRUE(od->risk.has_value()) << "on demand, GPUs still fail";
    EXPECT_GT(od->risk->mtbf_hours, spot->spot->mtbf_hours);
    EXPECT_NEAR(od->risk->hardware_mtbf_hours, kGpuHoursPerFailure / (8.0 * nodes), 1e-6);
  }
  Workload longer =
      Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "2e10"}});
  Recommendation a, b;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *p4d, 2, &a).ok());
  ASSERT_TRUE(RecommendOn(catalog, longer, o, *p4d, 2, &b).ok());
  std::string why;
  EXPECT_GT(On(b, 2, PricingMode::kSpot, &why)->spot->probability_interrupted,
            On(a, 2, PricingMode::kSpot, &why)->spot->probability_interrupted);
}

TEST(JobRiskTest, AFortyHourMultiNodeJobCheckpointsEvenOnDemand) {
  // The issue: a 40 h multi-node job got "no checkpoint". GPU failures alone (1 per 50,700
  // GPU-hours) make checkpointing pay on 32 GPUs over 40 hours.
  Catalog catalog = FabricCatalog();
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &p4d).ok());
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  Workload probe =
      Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "1e9"}});
  Recommendation r;
  ASSERT_TRUE(RecommendOn(catalog, probe, o, *p4d, 4, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  double tokens_per_hour = r.ranked.front().estimate->throughput * 3600;
  Workload forty = Built(catalog, {{"kind", "train"},
                                   {"model", "Llama-3.1-8B"},
                                   {"tokens", std::to_string(40 * tokens_per_hour)}});
  ASSERT_TRUE(RecommendOn(catalog, forty, o, *p4d, 4, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  const Candidate& c = r.ranked.front();
  ASSERT_TRUE(c.risk.has_value());
  EXPECT_NEAR(c.estimate->total_s / 3600, 40, 0.5);
  EXPECT_GT(c.risk->checkpoint_interval_hours, 0);
  EXPECT_LT(c.risk->checkpoint_interval_hours, 40);
  EXPECT_GT(c.risk->probability_interrupted, 0.01);
  bool explained = false;
  for (const std::string& reason : c.reasons) {
    explained |= reason.find("checkpoint") != std::string::npos &&
                 reason.find("Young/Daly") != std::string::npos;
  }
  EXPECT_TRUE(explained);
}

TEST(JobRiskTest, SpotForLargeTightlyCoupledJobsIsRejected) {
  Catalog catalog = FabricCatalog();
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &p4d).ok());
  Workload w = Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "1e10"}});
  RecommendOptions o;
  o.pricing = {PricingMode::kSpot, PricingMode::kOnDemand};
  Recommendation r;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *p4d, 8, &r).ok());
  std::string why;
  EXPECT_EQ(On(r, 8, PricingMode::kSpot, &why), nullptr);
  EXPECT_NE(why.find("spot for a tightly coupled job on 8 nodes"), std::string::npos) << why;
  EXPECT_NE(On(r, 8, PricingMode::kOnDemand, &why), nullptr) << "on demand stays";
  o.max_spot_nodes = 8;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *p4d, 8, &r).ok());
  EXPECT_NE(On(r, 8, PricingMode::kSpot, &why), nullptr) << why;
  // Independent work (files to preprocess) is not tightly coupled: no such limit.
  Workload files = Built(catalog, {{"kind", "preprocess"}, {"data_gb", "5000"}});
  const InstanceType* cpu = nullptr;
  ASSERT_TRUE(catalog.FindInstance("c7i.large", &cpu).ok());
  o.max_spot_nodes = 4;
  ASSERT_TRUE(RecommendOn(catalog, files, o, *cpu, 16, &r).ok());
  EXPECT_NE(On(r, 16, PricingMode::kSpot, &why), nullptr) << why;
}

TEST(JobRiskTest, MultiNodeTrainingNeedsTheFabricTheInstanceHas) {
  Catalog catalog = FabricCatalog();
  Workload w = Built(catalog, {{"kind", "train"}, {"model", "Llama-3.1-8B"}, {"tokens", "1e10"}});
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand};
  const InstanceType* efa = nullptr;
  const InstanceType* tcp = nullptr;
  ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &efa).ok());
  ASSERT_TRUE(catalog.FindInstance("test.tcp8", &tcp).ok());
  Recommendation r;
  std::string why;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *efa, 4, &r).ok());
  EXPECT_NE(On(r, 4, PricingMode::kOnDemand, &why), nullptr) << why;
  // 8 GB of bf16 gradients over 25 Gbit/s TCP per step: the all-reduce dominates, rejected.
  ASSERT_TRUE(RecommendOn(catalog, w, o, *tcp, 4, &r).ok());
  why.clear();
  const Candidate* c = On(r, 4, PricingMode::kOnDemand, &why);
  if (c != nullptr) {
    // Kept only when the all-reduce takes less than half of each step, and then said.
    bool warned = false;
    for (const std::string& warning : c->warnings)
      warned |= warning.find("without RDMA") != std::string::npos;
    EXPECT_TRUE(warned);
    EXPECT_LT(c->estimate->time.communication_s, 0.5 * c->estimate->time.step_s);
  } else {
    EXPECT_NE(why.find("multi-node without RDMA (Ethernet, 25 Gbit/s)"), std::string::npos) << why;
  }
  // One node never needs the fabric; --require-rdma rejects every TCP cluster.
  ASSERT_TRUE(RecommendOn(catalog, w, o, *tcp, 1, &r).ok());
  EXPECT_NE(On(r, 1, PricingMode::kOnDemand, &why), nullptr) << why;
  o.require_rdma = true;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *tcp, 2, &r).ok());
  why.clear();
  EXPECT_EQ(On(r, 2, PricingMode::kOnDemand, &why), nullptr);
  EXPECT_NE(why.find("multi-node needs RDMA (--require-rdma)"), std::string::npos) << why;
  ASSERT_TRUE(RecommendOn(catalog, w, o, *efa, 2, &r).ok());
  EXPECT_NE(On(r, 2, PricingMode::kOnDemand, &why), nullptr) << why;
}

}  // namespace
}  // namespace cloudfit
