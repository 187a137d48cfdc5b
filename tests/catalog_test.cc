// The built-in catalog: it loads, covers what users rent, and every row carries its evidence.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "cloudfit/catalog.h"
#include "cloudfit/catalog_info.h"
#include "util/date.h"
#include "util/strings.h"
#include "test_support.h"

namespace cloudfit {
namespace {

const Catalog& BuiltIn() { return testing::BuiltInCatalog(); }

TEST(BuiltInCatalogTest, HasEveryAcceleratorTheIssueNames) {
  const char* names[] = {
      "K80", "P4", "P100", "V100-PCIE-16GB", "V100-PCIE-32GB", "V100-SXM2-16GB",
      "V100-SXM2-32GB", "T4", "A10", "A10G", "A16", "A30", "A40", "A100-PCIE-40GB",
      "A100-PCIE-80GB", "A100-SXM4-40GB", "A100-SXM4-80GB", "A800", "H100 PCIe", "H100-SXM5-80GB",
      "H100 NVL", "H800", "H20", "H200", "GH200", "B200", "L4", "L20", "L40", "L40S", "RTX A4000",
      "RTX A4500", "RTX A5000", "RTX A5500", "RTX A6000", "RTX 4000 Ada", "RTX 5000 Ada",
      "RTX 6000 Ada", "RTX PRO 6000", "Quadro RTX 5000", "Quadro RTX 6000", "Quadro RTX 8000",
      "TITAN RTX", "GTX 1080 Ti", "RTX 2080 Ti", "RTX 3070", "RTX 3080", "RTX 3080 Ti",
      "RTX 3090", "RTX 4070 Ti", "RTX 4080", "RTX 4090", "MI250X", "MI300X"};
  for (const char* name : names) {
    const Accelerator* a = nullptr;
    Status s = BuiltIn().FindAccelerator(name, &a);
    EXPECT_TRUE(s.ok()) << name << ": " << s.ToString();
  }
}

TEST(BuiltInCatalogTest, AliasesResolveToTheRightVariant) {
  struct Case {
    const char* alias;
    double memory_gib;
    const char* form_factor_contains;
  } cases[] = {{"A100-80GB", 80, "SXM"},     {"A100-SXM4-80GB", 80, "SXM"},
               {"a100 80g", 80, "SXM"},      {"H100-SXM", 80, "SXM"},
               {"H100-SXM5-80GB", 80, "SXM"}, {"RTX 3090 24GB", 24, ""},
               {"A100", 40, "SXM"},          {"V100", 16, "SXM"},
               {"Quadro RTX 8000 48GB", 48, ""}, {"L40S 48GB", 48, ""},
               {"T4 16GB", 16, ""}};
  for (const Case& c : cases) {
    const Accelerator* a = nullptr;
    Status s = BuiltIn().FindAccelerator(c.alias, &a);
    ASSERT_TRUE(s.ok()) << c.alias << ": " << s.ToString();
    EXPECT_NEAR(a->memory_bytes / (1024.0 * 1024 * 1024), c.memory_gib, 0.5) << c.alias;
    EXPECT_NE(a->form_factor.find(c.form_factor_contains), std::string::npos)
        << c.alias << " -> " << a->name << " (" << a->form_factor << ")";
  }
}

TEST(BuiltInCatalogTest, UnknownGpuSuggestsNearNames) {
  const Accelerator* a = nullptr;
  Status s = BuiltIn().FindAccelerator("H1000", &a);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("unknown GPU 'H1000'"), std::string::npos);
  EXPECT_NE(s.message().find("did you mean"), std::string::npos) << s.message();
}

TEST(BuiltInCatalogTest, DatasheetFiguresAreDenseNotSparse) {
  // NVIDIA's H100 SXM5 datasheet headlines 1,979 TFLOPS BF16 "with sparsity"; dense is half.
  const Accelerator* h100 = nullptr;
  ASSERT_TRUE(BuiltIn().FindAccelerator("H100-SXM5-80GB", &h100).ok());
  ASSERT_TRUE(h100->peak(Precision::kBf16).has_value());
  EXPECT_NEAR(*h100->peak(Precision::kBf16) / 1e12, 989.4, 1);
  const Accelerator* a100 = nullptr;
  ASSERT_TRUE(BuiltIn().FindAccelerator("A100-SXM4-80GB", &a100).ok());
  EXPECT_NEAR(*a100->peak(Precision::kFp16) / 1e12, 312, 1);
  EXPECT_FALSE(a100->peak(Precision::kFp8).has_value()) << "Ampere has no FP8";
  // The seeds claim AV1 encode on the A10; NVIDIA's NVENC matrix says Ampere has none.
  const Accelerator* a10 = nullptr;
  ASSERT_TRUE(BuiltIn().FindAccelerator("A10", &a10).ok());
  EXPECT_FALSE(a10->av1_encode);
  const Accelerator* l4 = nullptr;
  ASSERT_TRUE(BuiltIn().FindAccelerator("L4", &l4).ok());
  EXPECT_TRUE(l4->av1_encode);
}

TEST(BuiltInCatalogTest, EveryAcceleratorAndCpuHasASourceAndDate) {
  for (const Accelerator& a : BuiltIn().accelerators()) {
    EXPECT_FALSE(a.source.empty()) << a.name;
    EXPECT_FALSE(a.as_of.empty()) << a.name;
  }
  for (const CpuGeneration& c : BuiltIn().cpus()) {
    EXPECT_FALSE(c.source.empty()) << c.name;
    EXPECT_GT(c.fp32_flops_per_vcpu, 0) << c.name;
  }
  EXPECT_GE(BuiltIn().cpus().size(), 10u);
}

TEST(BuiltInCatalogTest, CoversSixProvidersWithTwoHundredTypes) {
  std::map<std::string, int> types;
  for (const InstanceType& t : BuiltIn().instances()) ++types[t.provider];
  for (const char* provider : {"alibaba", "aws", "azure", "gcp", "tencent", "lambda"}) {
    EXPECT_GT(types[provider], 0) << provider;
  }
  EXPECT_GE(BuiltIn().instances().size(), 200u);
}

TEST(BuiltInCatalogTest, PricedProvidersHaveTwoRegionsWithDifferentPrices) {
  // For each provider with prices, some type is sold in two regions at different prices.
  std::map<std::string, bool> differs;
  for (const InstanceType& t : BuiltIn().instances()) {
    std::set<double> prices;
    for (const RegionPrice& r : t.regions) {
      if (auto p = r.price(PricingMode::kOnDemand)) prices.insert(*p);
    }
    differs[t.provider] = differs[t.provider] || prices.size() >= 2;
  }
  for (const char* provider : {"aws", "azure", "gcp", "tencent"}) {
    EXPECT_TRUE(differs[provider]) << provider;
  }
}

TEST(BuiltInCatalogTest, NoPriceIsZeroAndEveryPriceIsDatedOrSaysItsDateIsUnknown) {
  for (const InstanceType& t : BuiltIn().instances()) {
    for (const RegionPrice& r : t.regions) {
      if (r.any_price() && !r.as_of_known()) {
        EXPECT_NE(r.notes.find("price date unknown"), std::string::npos) << t.name << " " << r.region;
      }
      EXPECT_FALSE(r.source.empty()) << t.name;
      for (const auto& p : r.per_hour) {
        if (p) {
          EXPECT_GT(*p, 0) << t.name << " " << r.region;
        }
      }
    }
  }
}

TEST(BuiltInCatalogTest, FamiliesCarryTheGpusTheProvidersDocument) {
  // Several seed guides name the wrong GPU for these families; the catalog follows the providers.
  struct Case {
    const char* instance;
    const char* gpu;
  } cases[] = {{"p3.2xlarge", "V100-SXM2-16GB"}, {"p4d.24xlarge", "A100-SXM4-40GB"},
               {"p4de.24xlarge", "A100-SXM4-80GB"}, {"g5.xlarge", "A10G"},
               {"g4dn.xlarge", "T4"},            {"g6.xlarge", "L4"},
               {"g6e.xlarge", "L40S"},           {"ecs.gn7i-c8g1.2xlarge", "A10"},
               {"ecs.gn6i-c4g1.xlarge", "T4"},   {"ecs.gn6v-c8g1.2xlarge", "V100-SXM2-16GB"}};
  for (const Case& c : cases) {
    const InstanceType* t = nullptr;
    Status s = BuiltIn().FindInstance(c.instance, &t);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(t->has_gpu()) << c.instance;
    const Accelerator* expected = nullptr;
    ASSERT_TRUE(BuiltIn().FindAccelerator(c.gpu, &expected).ok()) << c.gpu;
    EXPECT_EQ(t->gpu, expected) << c.instance << " has " << t->gpu->name;
  }
}

TEST(BuiltInCatalogTest, SummaryWarnsAboutOldPrices) {
  int far_future = 0;
  ASSERT_TRUE(ParseIsoDate("2030-01-01", &far_future));
  CatalogSummary s = Summarize(BuiltIn(), far_future);
  bool stale = false;
  for (const std::string& w : s.warnings) stale |= w.find("days, over 90") != std::string::npos;
  EXPECT_TRUE(stale);
  EXPECT_GT(s.newest_as_of_days, 0);
  EXPECT_LE(s.oldest_as_of_days, s.newest_as_of_days);
}

}  // namespace
}  // namespace cloudfit
