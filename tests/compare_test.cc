// cloudfit compare: two to five choices side by side, every pricing mode, and the differences in
// words.
#include "cloudfit/compare.h"

#include <gtest/gtest.h>

#include "cloudfit/compare_report.h"
#include "cloudfit/table.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

using testing::BuiltWorkload;

RecommendOptions AllModes() {
  RecommendOptions o;
  o.pricing = {PricingMode::kOnDemand, PricingMode::kSpot, PricingMode::kReserved1y,
               PricingMode::kReserved3y};
  return o;
}

bool Mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(CompareTest, TwoInstanceTypesSideBySide) {
  Workload w = BuiltWorkload({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "1e8"}});
  Comparison c;
  ASSERT_TRUE(Compare(BuiltIn(), w, AllModes(), {"g5.2xlarge", "p4d.24xlarge"}, &c).ok());
  ASSERT_EQ(c.entries.size(), 2u);
  for (const CompareEntry& e : c.entries) {
    ASSERT_NE(e.estimate, nullptr) << e.choice.label;
    EXPECT_TRUE(e.rejection.empty()) << e.rejection;
    ASSERT_EQ(e.offers.size(), 4u);
    bool on_demand = false;
    for (const ModeOffer& o : e.offers) on_demand |= o.mode == PricingMode::kOnDemand && o.best;
    EXPECT_TRUE(on_demand) << e.choice.label;
  }
  const Estimate& small = *c.entries[0].estimate;
  const Estimate& big = *c.entries[1].estimate;
  EXPECT_LT(big.total_s, small.total_s) << "eight A100s beat one A10G";
  EXPECT_TRUE(Mentions(c.differences, "p4d.24xlarge is")) << c.differences.front();
  EXPECT_TRUE(Mentions(c.differences, "faster than g5.2xlarge"));
  // The sentence gives the hours the table shows: the cheapest offer's, start-up included.
  const Candidate* slow = c.entries[0].cheapest();
  ASSERT_NE(slow, nullptr);
  EXPECT_GT(slow->hours, small.total_s / 3600);
  EXPECT_TRUE(Mentions(c.differences, FormatNumber(slow->hours, slow->hours < 10 ? 2 : 1) + " h)"))
      << c.differences.front();
  EXPECT_TRUE(Mentions(c.differences, "ondemand: p4d.24xlarge costs"));
  EXPECT_TRUE(Mentions(c.differences, "cheapest: "));
  nlohmann::json j = ComparisonToJson(w, AllModes(), c);
  EXPECT_EQ(j["schema"], "cloudfit.compare/v1");
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][1]["instance_type"], "p4d.24xlarge");
  EXPECT_EQ(j["choices"][1]["offers"].size(), 4u);
  EXPECT_FALSE(j["assumptions"].empty());
  Table t = ComparisonTable(c, AllModes());
  EXPECT_EQ(t.size(), 2u);
}

TEST(CompareTest, GpuCountsBecomeTheCheapestInstanceWithThatMany) {
  Workload w = BuiltWorkload({{"kind", "train"}, {"model", "Llama-2-7B"}, {"tokens", "1e9"}});
  Comparison c;
  ASSERT_TRUE(Compare(BuiltIn(), w, AllModes(), {"1xA10G", "8xH100", "p4d.24xlarge:2"}, &c).ok());
  ASSERT_EQ(c.entries.size(), 3u);
  const CompareEntry& a10 = c.entries[0];
  ASSERT_NE(a10.choice.instance, nullptr);
  EXPECT_EQ(a10.choice.instance->gpu->name, "A10G");
  EXPECT_DOUBLE_EQ(a10.choice.instance->gpu_count, 1);
  EXPECT_NE(a10.choice.resolution.find("the cheapest on demand"), std::string::npos);
  EXPECT_FALSE(a10.rejection.empty()) << "7B full fine-tuning does not fit one A10G";
  EXPECT_TRUE(Mentions(c.differences, "1xA10G cannot run it"));
  const CompareEntry& h100 = c.entries[1];
  ASSERT_NE(h100.choice.instance, nullptr);
  EXPECT_DOUBLE_EQ(h100.choice.instance->gpu_count, 8);
  EXPECT_EQ(c.entries[2].choice.nodes, 2);
  EXPECT_TRUE(c.entries[2].rejection.empty()) << c.entries[2].rejection;
}

TEST(CompareTest, BadChoicesNameWhatIsWrong) {
  Workload w = BuiltWorkload({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "1e8"}});
  Comparison c;
  Status s = Compare(BuiltIn(), w, AllModes(), {"g5.2xlarge"}, &c);
  EXPECT_NE(s.message().find("compare takes 2 to 5 choices, not 1"), std::string::npos);
  s = Compare(BuiltIn(), w, AllModes(), {"a", "b", "c", "d", "e", "f"}, &c);
  EXPECT_NE(s.message().find("not 6"), std::string::npos);
  s = Compare(BuiltIn(), w, AllModes(), {"g5.2xlarge", "quantum-9000"}, &c);
  EXPECT_NE(s.message().find("'quantum-9000' is neither an instance type nor a GPU"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace cloudfit
