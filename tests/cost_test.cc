// The whole-job bill: each line's arithmetic from data/costs, unknown prices never free, lines
// that can be turned off, and the answers that change when the bill is whole.
#include "cloudfit/cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "cloudfit/recommend.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

using testing::BuiltWorkload;

const InstanceType& Instance(const std::string& name) {
  const InstanceType* t = nullptr;
  EXPECT_TRUE(BuiltIn().FindInstance(name, &t).ok()) << name;
  return *t;
}

const CostLine* Line(const std::vector<CostLine>& lines, const std::string& name) {
  for (const CostLine& l : lines) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

CostData Costs() {
  CostData costs;
  Status s = CostData::Load(BuiltIn(), &costs);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return costs;
}

TEST(CostTest, ReferenceDataIsDatedAndSourced) {
  CostData costs = Costs();
  const EgressPrice* aws = costs.FindEgress("aws", "internet");
  ASSERT_NE(aws, nullptr);
  EXPECT_DOUBLE_EQ(*aws->usd_per_gb, 0.09);
  EXPECT_FALSE(aws->source.empty());
  EXPECT_FALSE(aws->as_of.empty());
  ASSERT_NE(costs.FindEgress("lambda", "internet"), nullptr);
  EXPECT_DOUBLE_EQ(*costs.FindEgress("lambda", "internet")->usd_per_gb, 0);
  // Unknown is never free: the highest known rate stands in for it.
  EXPECT_FALSE(costs.FindEgress("tencent", "internet")->usd_per_gb.has_value());
  EXPECT_DOUBLE_EQ(*costs.HighestEgress("internet")->usd_per_gb, 0.12);
  ASSERT_NE(costs.FindBilling("azure"), nullptr);
  EXPECT_DOUBLE_EQ(costs.FindBilling("azure")->minimum_s, 300);
  ASSERT_NE(costs.FindLicence("windows-server", "aws"), nullptr);
  EXPECT_DOUBLE_EQ(*costs.FindLicence("windows-server", "aws")->usd, 0.046);
  EXPECT_FALSE(costs.FindLicence("windows-server", "lambda")->usd.has_value());
  EXPECT_EQ(costs.FindLicence("windows-server", "gcp")->provider, "*");
  EXPECT_NEAR(StreamMbps(costs, BuiltWorkload({{"kind", "realtime"}})), 25, 1e-9);
  EXPECT_NEAR(StreamMbps(costs, BuiltWorkload({{"kind", "realtime"},
                                               {"width", "3840"},
                                               {"height", "2160"},
                                               {"codec", "av1"}})),
              12.5 * 4, 1e-9);
}

TEST(CostTest, EachLineIsItsQuantitiesTimesItsRate) {
  CostData costs = Costs();
  Workload w = BuiltWorkload({{"kind", "lora"},
                              {"model", "Llama-3.1-8B"},
                              {"tokens", "1e8"},
                              {"egress_gb", "50"},
                              {"data_gb", "200"},
                              {"os", "windows"}});
  const InstanceType& t = Instance("g5.2xlarge");
  JobBillInput in;
  in.instance = &t;
  in.nodes = 2;
  in.node_price_per_hour = 1.5;
  in.hours = 10;
  in.checkpoint_bytes = 30e9;
  in.startup = EstimateStartup(w, t);
  std::vector<CostLine> lines = JobCostLines(BuiltIn(), costs, w, in, {});
  ASSERT_EQ(lines.size(), OptionalCostLines().size());
  EXPECT_NEAR(*Line(lines, "egress")->amount, 50 * 0.09, 1e-9);
  double stored_gb = 200 + 2 * 30;  // data set + two checkpoints
  EXPECT_NEAR(*Line(lines, "storage")->amount, stored_gb * 0.023 * 10 / 730, 1e-9);
  EXPECT_NEAR(*Line(lines, "startup")->amount, 2 * in.startup.total_s() / 3600 * 1.5, 1e-9);
  double windows_hours = 10 + in.startup.total_s() / 3600;
  EXPECT_NEAR(*Line(lines, "licences")->amount, t.vcpus * 2 * windows_hours * 0.046, 1e-9);
  // The start-up: 120 s of boot, a 10 GB image at 250 MB/s, 16 GB of bf16 weights.
  EXPECT_DOUBLE_EQ(in.startup.boot_s, 120);
  EXPECT_NEAR(in.startup.image_s, 10e9 / 250e6, 1e-9);
  EXPECT_NEAR(in.startup.model_bytes, 8.03e9 * 2, 1e6);
  EXPECT_FALSE(Line(lines, "egress")->source.empty());
  // Turned off, a line is gone.
  std::vector<CostLine> fewer = JobCostLines(BuiltIn(), costs, w, in, {"egress", "licences"});
  EXPECT_EQ(Line(fewer, "egress"), nullptr);
  EXPECT_EQ(Line(fewer, "licences"), nullptr);
  EXPECT_NE(Line(fewer, "storage"), nullptr);
}

TEST(CostTest, MinimumBillingRoundsShortRunsUp) {
  CostData costs = Costs();
  Workload w = BuiltWorkload({{"kind", "preprocess"}, {"data_gb", "1"}});
  JobBillInput in;
  in.node_price_per_hour = 3.6;  // 0.001 per second
  in.hours = 10.0 / 3600;        // a 10 s run
  in.startup = StartupTime();
  for (const char* name : {"Standard_D4s_v5", "c7i.large"}) {
    const InstanceType& t = Instance(name);
    in.instance = &t;
    std::vector<CostLine> lines = JobCostLines(BuiltIn(), costs, w, in, {});
    double minimum = t.provider == "azure" ? 300 : 60;
    EXPECT_NEAR(*Line(lines, "billing")->amount, (minimum - 10) * 0.001, 1e-9) << name;
  }
}

TEST(CostTest, TheBillIsTheSumOfItsLinesAndEachCanBeTurnedOff) {
  Workload w = BuiltWorkload({{"kind", "train"},
                              {"model", "ResNet-50"},
                              {"precision", "fp16"},
                              {"epochs", "10"},
                              {"dataset_samples", "1281167"},
                              {"egress_gb", "100"}});
  RecommendOptions o;
  o.instances = {"p4d.24xlarge"};
  o.regions = {"us-east-1"};
  o.pricing = {PricingMode::kOnDemand};
  Recommendation full, bare;
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &full).ok());
  o.excluded_costs = OptionalCostLines();
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &bare).ok());
  ASSERT_EQ(full.ranked.size(), 1u);
  ASSERT_EQ(bare.ranked.size(), 1u);
  const Candidate& c = full.ranked.front();
  double sum = 0;
  for (const CostLine& l : c.costs) sum += l.amount.value_or(0);
  EXPECT_NEAR(*c.total_cost, sum, 1e-9 * sum);
  ASSERT_EQ(bare.ranked.front().costs.size(), 1u);
  EXPECT_EQ(bare.ranked.front().costs.front().name, "compute");
  EXPECT_NEAR(*bare.ranked.front().total_cost, *bare.ranked.front().costs.front().amount, 1e-9);
  // The image's ImageNet copy (140 GB at 110 KB an image) is stored; 100 GB leave at 0.09.
  EXPECT_NEAR(*Line(c.costs, "egress")->amount, 100 * 0.09, 1e-9);
  EXPECT_GT(*Line(c.costs, "storage")->amount, 0);
  EXPECT_GT(*c.total_cost, *bare.ranked.front().total_cost);
  EXPECT_GT(c.hours, bare.ranked.front().hours) << "start-up is wall-clock time too";
  Recommendation bad;
  o.excluded_costs = {"taxes"};
  Status s = Recommend(BuiltIn(), w, o, &bad);
  EXPECT_NE(s.message().find("exclude_costs: 'taxes' is not one of egress"), std::string::npos)
      << s.message();
}

// The recommender prices one run in many regions from parts worked out once (JobCostParts):
// for any price, mode and set of lines left out, the total must be the worded bill's, bit for
// bit, or the order of two offers at one price could differ between the ranking and the answer.
TEST(CostTest, TheBillFromPartsIsTheWordedBillBitForBit) {
  CostData costs = Costs();
  struct Case {
    Fields fields;
    const char* instance;
  };
  const Case cases[] = {
      {{{"kind", "lora"},
        {"model", "Llama-3.1-8B"},
        {"tokens", "1e8"},
        {"egress_gb", "50"},
        {"os", "windows"}},
       "g5.2xlarge"},
      {{{"kind", "realtime"}, {"streams", "3"}}, "g5.2xlarge"},
      {{{"kind", "cad"}, {"streams", "2"}}, "Standard_NV36ads_A10_v5"},
      {{{"kind", "serving"}, {"model", "Llama-3.1-8B"}, {"request_rate", "3"}}, "c7i.large"},
      {{{"kind", "preprocess"}, {"data_gb", "7"}}, "Standard_D4s_v5"},
  };
  const std::vector<std::string>& names = OptionalCostLines();
  for (const Case& k : cases) {
    Workload w = BuiltWorkload(k.fields);
    const InstanceType& t = Instance(k.instance);
    for (PricingMode mode : {PricingMode::kOnDemand, PricingMode::kSpot, PricingMode::kReserved1y,
                             PricingMode::kReserved3y}) {
      JobBillInput in;
      in.instance = &t;
      in.mode = mode;
      in.nodes = 3;
      in.replicas = 2;
      in.hours = 0.37;
      in.starts = 1.25;
      in.checkpoint_bytes = 12e9;
      in.sessions = 3;
      in.startup = EstimateStartup(w, t);
      BillRows rows = FindBillRows(BuiltIn(), costs, w, t.provider, "EUR");
      in.rows = &rows;
      in.currency = "EUR";
      // Every subset of the five optional lines.
      for (unsigned excluded = 0; excluded < 32; ++excluded) {
        std::vector<std::string> excluded_names;
        for (size_t i = 0; i < names.size(); ++i) {
          if (excluded & (1u << i)) excluded_names.push_back(names[i]);
        }
        ASSERT_EQ(ExcludedCostLines(excluded_names), excluded);
        JobCostParts parts = JobCostPartsOf(costs, w, in, excluded);
        for (double price : {0.0137, 1.0 / 3, 7.5, 98.32}) {
          in.node_price_per_hour = price;
          double worded = 1.0 / 7;  // the compute line, then the others in bill order
          ForEachJobCostLine(BuiltIn(), costs, w, in, excluded_names,
                             [&](CostLine&& line) { worded += line.amount.value_or(0); });
          EXPECT_EQ(AddJobCostAmounts(parts, price, 1.0 / 7), worded)
              << k.instance << " mode " << static_cast<int>(mode) << " excluded " << excluded
              << " price " << price;
          EXPECT_EQ(AddJobCostAmounts(costs, w, in, excluded, 1.0 / 7), worded);
        }
      }
    }
  }
}

TEST(CostTest, CloudGamingEgressOutweighsTheInstances) {
  // 20 sessions of 1080p60 H.264 (25 Mbit/s each) for a month from AWS: 164 TB out.
  Workload w = BuiltWorkload({{"kind", "realtime"}, {"streams", "20"}, {"os", "linux"}});
  RecommendOptions o;
  o.providers = {"aws"};
  o.pricing = {PricingMode::kOnDemand};
  Recommendation r;
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  for (size_t i = 0; i < std::min<size_t>(5, r.ranked.size()); ++i) {
    const Candidate& c = r.ranked[i];
    const CostLine* egress = Line(c.costs, "egress");
    ASSERT_NE(egress, nullptr);
    EXPECT_NEAR(*egress->amount, 20 * 25e6 / 8 * 730 * 3600 / 1e9 * 0.09, 1);
    EXPECT_GT(*egress->amount, *Line(c.costs, "compute")->amount) << c.instance->name;
  }
}

TEST(CostTest, WindowsWhereItIsNotOfferedIsRejected) {
  Workload w = BuiltWorkload({{"kind", "cad"}, {"streams", "2"}});  // Windows assumed for CAD
  RecommendOptions o;
  o.providers = {"lambda"};
  Recommendation r;
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &r).ok());
  EXPECT_TRUE(r.ranked.empty());
  bool said = false;
  for (const Candidate& c : r.rejected)
    said |= c.rejection.rfind("lambda offers no Windows", 0) == 0;
  EXPECT_TRUE(said);
  // On Linux (a web-streamed viewer) Lambda is fine.
  Workload linux_cad = BuiltWorkload({{"kind", "cad"}, {"streams", "2"}, {"os", "linux"}});
  ASSERT_TRUE(Recommend(BuiltIn(), linux_cad, o, &r).ok());
  EXPECT_FALSE(r.ranked.empty());
}

TEST(CostTest, CadSeatsPayForTheirLicences) {
  Workload w = BuiltWorkload({{"kind", "cad"}, {"streams", "4"}});
  RecommendOptions o;
  o.providers = {"gcp", "aws"};
  o.top = 0;  // every ranked offer gets its bill's wording, not only the first ten
  Recommendation r;
  ASSERT_TRUE(Recommend(BuiltIn(), w, o, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  for (const Candidate& c : r.ranked) {
    ASSERT_TRUE(c.described) << c.instance->name;
    const CostLine* licences = Line(c.costs, "licences");
    ASSERT_NE(licences, nullptr);
    EXPECT_NE(licences->detail.find("Windows Server"), std::string::npos);
    EXPECT_NE(licences->detail.find("RTX Virtual Workstation 4 seats"), std::string::npos);
    double windows = c.instance->vcpus * c.nodes * c.replicas * 0.046;
    double vws = c.instance->provider == "aws" ? 0 : 4 * 450.0 / 8760;
    EXPECT_NEAR(*licences->amount, (windows + vws) * c.hours, 0.02 * *licences->amount)
        << c.instance->name;
  }
}

}  // namespace
}  // namespace cloudfit
