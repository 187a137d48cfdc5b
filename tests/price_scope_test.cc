// Prices that are a type's minimum over all regions rather than a quote for the row's region
// (Spare Cores' Alibaba figures): the `lowest_over_regions` column loads as a per-mode mark,
// survives a write, is cleared by a price for the region, and every offer shown at such a price
// warns that its cost is a lower bound and says so in its JSON (`price_scope`); `catalog info`
// counts such offers per provider.
#include <gtest/gtest.h>

#include "cloudfit/catalog_import.h"
#include "cloudfit/catalog_info.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
#include "test_support.h"

namespace cloudfit {
namespace {

constexpr const char* kWarning = "lower-bound price:";

// The fixture catalog, its aws file with a lowest_over_regions column: `mark` on g5.xlarge's
// ap-northeast-1 row, empty elsewhere.
CatalogFiles FilesWithMark(const std::string& mark) {
  CatalogFiles files = testing::FixtureFiles();
  std::string& aws = files["instances/aws.csv"];
  std::string out;
  size_t start = 0;
  bool header = true;
  while (start < aws.size()) {
    size_t end = aws.find('\n', start);
    std::string line = aws.substr(start, end - start);
    if (!line.empty()) {
      if (header) {
        out += line + ",lowest_over_regions\n";
        header = false;
      } else {
        bool marked = line.rfind("aws,g5.xlarge,", 0) == 0 &&
                      line.find(",ap-northeast-1,") != std::string::npos;
        out += line + "," + (marked ? mark : "") + "\n";
      }
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  aws = out;
  return files;
}

const InstanceType& Find(const Catalog& catalog, const char* name) {
  const InstanceType* t = nullptr;
  Status s = catalog.FindInstance(name, &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  static const InstanceType kNone;
  return t ? *t : kNone;
}

Workload ResNetTraining(const Catalog& catalog) {
  Workload w;
  EXPECT_TRUE(SetWorkloadField(&w, "kind", "train").ok());
  EXPECT_TRUE(SetWorkloadField(&w, "model", "ResNet-50").ok());
  EXPECT_TRUE(SetWorkloadField(&w, "dataset_samples", "100000").ok());
  EXPECT_TRUE(FinalizeWorkload(catalog, &w).ok());
  return w;
}

bool HasWarning(const Candidate& c) {
  for (const std::string& w : c.warnings) {
    if (w.rfind(kWarning, 0) == 0) return true;
  }
  return false;
}

TEST(PriceScopeTest, TheColumnLoadsPerModeAndIsWrittenBack) {
  Catalog catalog;
  Status s = Catalog::FromFiles(FilesWithMark("ondemand"), "test", &catalog);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const InstanceType& g5 = Find(catalog, "g5.xlarge");
  const RegionPrice* tokyo = g5.FindRegion("ap-northeast-1");
  const RegionPrice* virginia = g5.FindRegion("us-east-1");
  ASSERT_TRUE(tokyo && virginia);
  EXPECT_TRUE(tokyo->lowest_over_regions(PricingMode::kOnDemand));
  EXPECT_FALSE(tokyo->lowest_over_regions(PricingMode::kSpot));
  EXPECT_FALSE(virginia->lowest_over_regions(PricingMode::kOnDemand)) << "an empty cell: a quote";

  // Written and read again, the mark stays on its row and mode only.
  std::vector<InstanceType> aws;
  for (const InstanceType& t : catalog.instances()) {
    if (t.provider == "aws") aws.push_back(t);
  }
  CatalogFiles files = testing::FixtureFiles();
  files["instances/aws.csv"] = FormatInstancesCsv(aws);
  Catalog again;
  s = Catalog::FromFiles(files, "again", &again);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const InstanceType& g5_again = Find(again, "g5.xlarge");
  EXPECT_TRUE(g5_again.FindRegion("ap-northeast-1")->lowest_over_regions(PricingMode::kOnDemand));
  EXPECT_FALSE(g5_again.FindRegion("us-east-1")->lowest_over_regions(PricingMode::kOnDemand));
  EXPECT_FALSE(Find(again, "p4d.24xlarge").FindRegion("eu-west-1")->lowest_over_regions_modes);

  // A catalog without the column (every catalog written before it) loads unmarked.
  Catalog plain;
  ASSERT_TRUE(Catalog::FromFiles(testing::FixtureFiles(), "plain", &plain).ok());
  EXPECT_FALSE(Find(plain, "g5.xlarge").FindRegion("ap-northeast-1")->lowest_over_regions_modes);
}

TEST(PriceScopeTest, AMarkMustNameAPricedColumn) {
  Catalog catalog;
  Status s = Catalog::FromFiles(FilesWithMark("hourly"), "test", &catalog);
  EXPECT_NE(s.message().find("field 'lowest_over_regions'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'hourly' is not a price column"), std::string::npos) << s.message();
  // g5.xlarge in ap-northeast-1 has no spot price: a mark on it would warn about nothing.
  s = Catalog::FromFiles(FilesWithMark("ondemand|spot"), "test", &catalog);
  EXPECT_NE(s.message().find("names spot, which has no price on this row"), std::string::npos)
      << s.message();
}

TEST(PriceScopeTest, APriceForTheRegionClearsTheMark) {
  Catalog base;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithMark("ondemand"), "test", &base).ok());
  testing::TempDir dir;
  std::string path = dir.Write("prices.csv",
                               "instance_type,region,pricing_mode,price,currency,as_of\n"
                               "g5.xlarge,ap-northeast-1,ondemand,1.5,USD,2026-11-01\n");
  CatalogFiles files;
  ImportReport report;
  Status s = ImportPriceList(base, {path}, &files, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Catalog merged;
  ASSERT_TRUE(Catalog::FromFiles(files, "merged", &merged).ok());
  const RegionPrice* tokyo = Find(merged, "g5.xlarge").FindRegion("ap-northeast-1");
  EXPECT_DOUBLE_EQ(*tokyo->price(PricingMode::kOnDemand), 1.5);
  EXPECT_FALSE(tokyo->lowest_over_regions(PricingMode::kOnDemand));
}

TEST(PriceScopeTest, OnlyOffersAtALowerBoundPriceWarn) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithMark("ondemand"), "test", &catalog).ok());
  RecommendOptions options;
  options.providers = {"aws"};
  options.all_regions = true;
  options.top = 0;  // every offer shown, so both g5 regions are described
  Recommendation r;
  Status s = Recommend(catalog, ResNetTraining(catalog), options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int marked = 0;
  int quoted = 0;
  for (const Candidate& c : r.ranked) {
    ASSERT_TRUE(c.described);
    bool lower_bound = c.instance->name == "g5.xlarge" && c.region->region == "ap-northeast-1" &&
                       c.mode == PricingMode::kOnDemand;
    EXPECT_EQ(HasWarning(c), lower_bound)
        << c.instance->name << " " << c.region->region << " " << PricingModeName(c.mode);
    EXPECT_EQ(CandidateToJson(c, "USD")["price_scope"],
              lower_bound ? "lowest_over_regions" : "region")
        << c.instance->name << " " << c.region->region << " " << PricingModeName(c.mode);
    (lower_bound ? marked : quoted) += 1;
  }
  EXPECT_EQ(marked, 1);
  EXPECT_GT(quoted, 0);
}

TEST(PriceScopeTest, ShownAlibabaOffersWarnAndOthersDoNot) {
  // The built-in catalog: Alibaba's Spare Cores prices are marked, AWS's are regional quotes.
  const Catalog& catalog = testing::BuiltInCatalog();
  RecommendOptions options;
  options.providers = {"alibaba", "aws"};
  options.top = 0;
  Recommendation r;
  Status s = Recommend(catalog, ResNetTraining(catalog), options, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int alibaba = 0;
  int aws = 0;
  for (const Candidate& c : r.ranked) {
    if (!c.described) continue;
    if (c.instance->provider == "alibaba") {
      ++alibaba;
      EXPECT_TRUE(HasWarning(c)) << c.instance->name;
      EXPECT_EQ(CandidateToJson(c, "USD")["price_scope"], "lowest_over_regions")
          << c.instance->name;
      for (const std::string& w : c.warnings) {
        if (w.rfind(kWarning, 0) != 0) continue;
        EXPECT_NE(w.find(c.instance->name), std::string::npos) << w;
        EXPECT_NE(w.find("not a quote for " + c.region->region), std::string::npos) << w;
      }
    } else {
      ++aws;
      EXPECT_FALSE(HasWarning(c)) << c.instance->name << " " << c.region->region;
      EXPECT_EQ(CandidateToJson(c, "USD")["price_scope"], "region") << c.instance->name;
    }
  }
  EXPECT_GT(alibaba, 0) << "an Alibaba offer is shown";
  EXPECT_GT(aws, 0) << "an AWS offer is shown";
}

TEST(PriceScopeTest, AnUnknownPriceHasNoScope) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithMark("ondemand"), "test", &catalog).ok());
  RecommendOptions options;
  options.providers = {"aws"};
  options.all_regions = true;
  Recommendation r;
  ASSERT_TRUE(Recommend(catalog, ResNetTraining(catalog), options, &r).ok());
  ASSERT_FALSE(r.ranked.empty());
  Candidate unpriced = r.ranked[0];
  unpriced.region = nullptr;  // as for an offer whose price is unknown
  EXPECT_TRUE(CandidateToJson(unpriced, "USD")["price_scope"].is_null());
}

const ProviderSummary& ProviderIn(const CatalogSummary& s, const std::string& provider) {
  for (const ProviderSummary& p : s.providers) {
    if (p.provider == provider) return p;
  }
  ADD_FAILURE() << "no provider " << provider;
  static const ProviderSummary kNone;
  return kNone;
}

TEST(PriceScopeTest, CatalogInfoCountsLowerBoundOffersPerProvider) {
  Catalog marked;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithMark("ondemand"), "test", &marked).ok());
  CatalogSummary s = Summarize(marked, 20000);
  EXPECT_EQ(ProviderIn(s, "aws").lower_bound_offers, 1) << "g5.xlarge in ap-northeast-1";
  EXPECT_EQ(ProviderIn(s, "gcp").lower_bound_offers, 0);
  int warned = 0;
  for (const std::string& w : s.warnings) {
    if (w.find("lowest price over all") == std::string::npos) continue;
    ++warned;
    EXPECT_EQ(w.rfind("aws: 1 of ", 0), 0u) << w;
  }
  EXPECT_EQ(warned, 1);
  nlohmann::json json = CatalogSummaryToJson(s);
  for (const nlohmann::json& p : json["providers"]) {
    EXPECT_EQ(p["lower_bound_offers"], p["provider"] == "aws" ? 1 : 0) << p["provider"];
  }

  Catalog plain;
  ASSERT_TRUE(Catalog::FromFiles(testing::FixtureFiles(), "plain", &plain).ok());
  for (const ProviderSummary& p : Summarize(plain, 20000).providers) {
    EXPECT_EQ(p.lower_bound_offers, 0) << p.provider;
  }

  // The built-in catalog: every priced Alibaba offer is Spare Cores' cross-region minimum.
  CatalogSummary built_in = Summarize(testing::BuiltInCatalog(), 20000);
  const ProviderSummary& alibaba = ProviderIn(built_in, "alibaba");
  EXPECT_GT(alibaba.lower_bound_offers, 0);
  EXPECT_EQ(alibaba.lower_bound_offers, alibaba.priced_offers);
  EXPECT_EQ(ProviderIn(built_in, "aws").lower_bound_offers, 0);
}

}  // namespace
}  // namespace cloudfit
