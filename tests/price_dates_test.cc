// Honest price dates: a row's as_of is its price's own date or empty when the source gives
// none; `catalog info` shows the age per provider and counts undated prices; a recommendation
// warns once, not once per row, when a ranked price is stale or undated.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cloudfit/catalog_import.h"
#include "cloudfit/catalog_info.h"
#include "cloudfit/recommend.h"
#include "test_support.h"
#include "util/date.h"

namespace cloudfit {
namespace {

// The fixture catalog with aws's eu-west-1 row of p4d.24xlarge undated.
CatalogFiles FilesWithAnUndatedRow(const std::string& as_of = "") {
  CatalogFiles files = testing::FixtureFiles();
  std::string& aws = files["instances/aws.csv"];
  std::string dated = "23.5,,,,USD,https://aws.amazon.com/ec2/instance-types/p4/,2026-07-22,";
  size_t at = aws.find(dated);
  EXPECT_NE(at, std::string::npos);
  aws.replace(at, dated.size(),
              "23.5,,,,USD,https://aws.amazon.com/ec2/instance-types/p4/," + as_of +
                  ",price date unknown: test");
  return files;
}

int Days(const char* iso) {
  int days = 0;
  EXPECT_TRUE(ParseIsoDate(iso, &days));
  return days;
}

TEST(PriceDatesTest, AnEmptyOrUnknownDateLoadsAsUnknownAndIsWrittenBackEmpty) {
  for (const char* as_of : {"", "unknown"}) {
    Catalog catalog;
    Status s = Catalog::FromFiles(FilesWithAnUndatedRow(as_of), "test", &catalog);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const InstanceType* p4d = nullptr;
    ASSERT_TRUE(catalog.FindInstance("p4d.24xlarge", &p4d).ok());
    EXPECT_FALSE(p4d->FindRegion("eu-west-1")->as_of_known());
    EXPECT_TRUE(p4d->FindRegion("us-east-1")->as_of_known());
    std::vector<InstanceType> aws;
    for (const InstanceType& t : catalog.instances()) {
      if (t.provider == "aws") aws.push_back(t);
    }
    std::string written = FormatInstancesCsv(aws);
    EXPECT_NE(written.find("eu-west-1,23.5,,,,USD,https://aws.amazon.com/ec2/instance-types/p4/,,"),
              std::string::npos)
        << "an unknown date stays unknown, never 1970-01-01";
  }
  Catalog catalog;
  Status s = Catalog::FromFiles(FilesWithAnUndatedRow("2026-13-01"), "test", &catalog);
  EXPECT_NE(s.message().find("as_of"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("leave it empty when unknown"), std::string::npos);
}

TEST(PriceDatesTest, CatalogInfoShowsAgePerProviderAndCountsUndatedPrices) {
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithAnUndatedRow(), "test", &catalog).ok());
  CatalogSummary s = Summarize(catalog, Days("2026-08-01"));
  const ProviderSummary* aws = nullptr;
  const ProviderSummary* gcp = nullptr;
  for (const ProviderSummary& p : s.providers) {
    if (p.provider == "aws") aws = &p;
    if (p.provider == "gcp") gcp = &p;
  }
  ASSERT_TRUE(aws && gcp);
  EXPECT_EQ(aws->undated_offers, 1);
  EXPECT_EQ(aws->age_days, 10);  // 2026-07-22 to 2026-08-01: fresh by its dates...
  EXPECT_TRUE(aws->stale) << "...but an undated price counts as stale";
  EXPECT_EQ(gcp->undated_offers, 0);
  EXPECT_EQ(gcp->age_days, Days("2026-08-01") - Days("2025-03-06"));
  EXPECT_TRUE(gcp->stale);
  int undated_warnings = 0;
  for (const std::string& w : s.warnings) {
    undated_warnings += w.find("aws: 1 of 5 priced offers have no date") == 0;
    EXPECT_EQ(w.find("aws: prices as old as"), std::string::npos) << "aws's dated prices are fresh";
  }
  EXPECT_EQ(undated_warnings, 1);
}

TEST(PriceDatesTest, ARecommendationWarnsOnceForAllItsStalePrices) {
  setenv("CLOUDFIT_TODAY", "2026-11-22", 1);
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(FilesWithAnUndatedRow(), "test", &catalog).ok());
  Workload w;
  ASSERT_TRUE(SetWorkloadField(&w, "kind", "train").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "model", "ResNet-50").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "dataset_samples", "100000").ok());
  ASSERT_TRUE(FinalizeWorkload(catalog, &w).ok());
  RecommendOptions options;
  options.all_regions = true;
  Recommendation r;
  Status s = Recommend(catalog, w, options, &r);
  unsetenv("CLOUDFIT_TODAY");
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GT(r.ranked.size(), 2u);
  for (const Candidate& c : r.ranked) {
    for (const std::string& warning : c.warnings) {
      EXPECT_EQ(warning.find("days old"), std::string::npos) << "no per-row age warning";
    }
  }
  int stale_notes = 0;
  std::string note;
  for (const std::string& n : r.notes) {
    if (n.rfind("stale prices:", 0) == 0) {
      ++stale_notes;
      note = n;
    }
  }
  ASSERT_EQ(stale_notes, 1);
  EXPECT_NE(note.find("aws ("), std::string::npos) << note;
  EXPECT_NE(note.find("1 with no known date"), std::string::npos) << note;
  EXPECT_NE(note.find("as old as 2025-03-06"), std::string::npos) << note;  // gcp
}

TEST(PriceDatesTest, FreshPricesDrawNoNote) {
  setenv("CLOUDFIT_TODAY", "2026-07-30", 1);
  CatalogFiles files = testing::FixtureFiles();
  Catalog catalog;
  ASSERT_TRUE(Catalog::FromFiles(files, "test", &catalog).ok());
  Workload w;
  ASSERT_TRUE(SetWorkloadField(&w, "kind", "train").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "model", "ResNet-50").ok());
  ASSERT_TRUE(SetWorkloadField(&w, "dataset_samples", "100000").ok());
  ASSERT_TRUE(FinalizeWorkload(catalog, &w).ok());
  RecommendOptions options;
  options.providers = {"aws"};  // all dated 2026-07-22: 8 days old
  Recommendation r;
  Status s = Recommend(catalog, w, options, &r);
  unsetenv("CLOUDFIT_TODAY");
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(r.ranked.empty());
  for (const std::string& n : r.notes)
    EXPECT_EQ(n.rfind("stale prices:", 0), std::string::npos) << n;
}

TEST(PriceDatesTest, BuiltInGcpPricesCarryTheirEditionsDate) {
  // The GCP rows were re-read from Cyclenerd's pricing.yml generated 2026-09-21. The modelled
  // n1 host + attached T4/V100 rows add a per-GPU price from the SkyPilot snapshot of 2026-07-22
  // (that file has no attachable-GPU prices), so they carry the older of their two dates.
  int priced = 0, attached = 0;
  const std::string kCyclenerd = "google-cloud-pricing-cost-calculator/blob/1650fce4";
  const std::string kSkyPilotGcp =
      "skypilot-catalog/blob/2c3d7ea7d76bf84cf80d382e946c1609571485fd/"
      "catalogs/v9/gcp/vms.csv";
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider != "gcp") continue;
    for (const RegionPrice& r : t.regions) {
      if (!r.any_price()) continue;
      ++priced;
      ASSERT_TRUE(r.as_of_known()) << t.name << " " << r.region;
      EXPECT_GE(r.as_of_days, Days("2026-07-22")) << t.name << " " << r.region;
      bool gpu_part = t.name.find('+') != std::string::npos;
      if (gpu_part) {
        ++attached;
        EXPECT_NE(r.source.find(kCyclenerd), std::string::npos) << t.name << " " << r.region;
        EXPECT_NE(r.source.find(kSkyPilotGcp), std::string::npos) << t.name << " " << r.region;
        EXPECT_EQ(r.as_of_days, Days("2026-07-22")) << t.name << " " << r.region;
      } else if (r.source.find(kCyclenerd) != std::string::npos) {
        EXPECT_EQ(r.as_of_days, Days("2026-09-21")) << t.name << " " << r.region;
      }
    }
  }
  EXPECT_GE(priced, 170);
  EXPECT_EQ(attached, 60) << "the n1 + attached T4/V100 rows";
  // Host from the 2026-09-21 edition (n1-standard-8 = 8/16 of n1-standard-16: 0.379998 on
  // demand, 0.22791 spot in us-central1) + one V100 (2.48, spot 1.2338).
  const InstanceType* v100 = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindInstance("n1-standard-8+1xV100", &v100).ok());
  const RegionPrice* us = v100->FindRegion("us-central1");
  ASSERT_NE(us, nullptr);
  EXPECT_NEAR(*us->price(PricingMode::kOnDemand), 0.379998 + 2.48, 1e-9);
  EXPECT_NEAR(*us->price(PricingMode::kSpot), 0.22791 + 1.2338, 1e-9);
}

TEST(PriceDatesTest, BuiltInAwsPricesAreAllDated) {
  // Every AWS price comes from the SkyPilot snapshot of 2026-07-22 (g4ad too: on-demand and the
  // cheapest us-east-1 zone's spot price there; its reserved prices are ec2instances.info's,
  // whose on-demand figure is the snapshot's rounded to 3 decimals).
  int priced = 0;
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider != "aws") continue;
    for (const RegionPrice& r : t.regions) {
      if (!r.any_price()) continue;
      ++priced;
      EXPECT_TRUE(r.as_of_known()) << t.name << " " << r.region;
      EXPECT_NE(r.source.find("skypilot-catalog"), std::string::npos) << t.name << " " << r.region;
    }
  }
  EXPECT_GE(priced, 398);
  const InstanceType* g4ad = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindInstance("g4ad.xlarge", &g4ad).ok());
  const RegionPrice* use1 = g4ad->FindRegion("us-east-1");
  ASSERT_NE(use1, nullptr);
  EXPECT_EQ(use1->as_of_days, Days("2026-07-22"));
  EXPECT_DOUBLE_EQ(*use1->price(PricingMode::kOnDemand), 0.37853);
  EXPECT_DOUBLE_EQ(*use1->price(PricingMode::kSpot), 0.1122);
  EXPECT_DOUBLE_EQ(*use1->price(PricingMode::kReserved1y), 0.238);
}

TEST(PriceDatesTest, AzureRowsDateOnlyPricesOfThatDate) {
  // The SkyPilot v6 Azure snapshot states no date. A row priced from it stays undated; a row
  // that a dated source re-prices must not keep the snapshot's spot price behind its new date.
  // The only dated Azure spot prices are those of skypilot-catalog pull request 79, whose diff
  // quotes the fetcher's reading of the Retail Prices API on 2024-08-26, spot included.
  const std::string kPr79 = "github.com/skypilot-org/skypilot-catalog/pull/79";
  int dated = 0, from_pr79 = 0;
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider != "azure") continue;
    for (const RegionPrice& r : t.regions) {
      bool from_snapshot = r.source.find("skypilot-catalog/blob/098741e7") != std::string::npos;
      if (from_snapshot) {
        EXPECT_FALSE(r.as_of_known()) << t.name << " " << r.region;
      }
      if (!r.as_of_known()) continue;
      ++dated;
      EXPECT_FALSE(from_snapshot) << t.name << " " << r.region;
      if (r.source.find(kPr79) != std::string::npos) {
        ++from_pr79;
        EXPECT_EQ(r.as_of_days, Days("2024-08-26")) << t.name << " " << r.region;
        EXPECT_TRUE(r.price(PricingMode::kSpot).has_value()) << t.name << " " << r.region;
        EXPECT_EQ(r.lowest_over_regions_modes, 0u) << t.name << ": the region's own quote";
      } else {
        EXPECT_FALSE(r.price(PricingMode::kSpot).has_value())
            << t.name << " " << r.region << ": no other dated Azure spot price was read";
      }
    }
  }
  EXPECT_GE(dated, 13);
  EXPECT_EQ(from_pr79, 4) << "NC96ads_A100_v4 in southcentralus, westus2, westus3; NV12ads eastus";
  // The dated reading corrected the two- and four-GPU NC A100 v4 sizes (30% low before).
  const InstanceType* nc48 = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindInstance("Standard_NC48ads_A100_v4", &nc48).ok());
  EXPECT_DOUBLE_EQ(*nc48->FindRegion("eastus")->price(PricingMode::kOnDemand), 9.554);
  EXPECT_EQ(nc48->FindRegion("eastus")->as_of_days, Days("2026-11-09"));
  // Pull request 79's figures, row by row as its diff quotes them.
  const InstanceType* nc96 = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindInstance("Standard_NC96ads_A100_v4", &nc96).ok());
  const RegionPrice* scus = nc96->FindRegion("southcentralus");
  ASSERT_NE(scus, nullptr);
  EXPECT_DOUBLE_EQ(*scus->price(PricingMode::kOnDemand), 17.63);
  EXPECT_DOUBLE_EQ(*scus->price(PricingMode::kSpot), 2.2919);
  EXPECT_DOUBLE_EQ(*nc96->FindRegion("westus3")->price(PricingMode::kSpot), 1.61612);
  EXPECT_FALSE(nc96->FindRegion("eastus")->price(PricingMode::kSpot).has_value())
      << "eastus is data-receipts' 2026-11-09 reading, on demand only";
  const InstanceType* nv12 = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindInstance("Standard_NV12ads_A10_v5", &nv12).ok());
  const RegionPrice* nv12_eastus = nv12->FindRegion("eastus");
  ASSERT_NE(nv12_eastus, nullptr);
  EXPECT_DOUBLE_EQ(*nv12_eastus->price(PricingMode::kOnDemand), 0.908);
  EXPECT_DOUBLE_EQ(*nv12_eastus->price(PricingMode::kSpot), 0.227);
  EXPECT_FALSE(nv12_eastus->lowest_over_regions(PricingMode::kOnDemand))
      << "eastus's own price now, no longer Spare Cores' cross-region minimum";
}

}  // namespace
}  // namespace cloudfit
