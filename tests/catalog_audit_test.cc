// Facts of the built-in catalog that an audit against the providers' documentation fixed
// (issue 11), kept true by tests: fabrics and network figures, GPU variants, coverage of
// the instance types the providers rent.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "cloudfit/catalog.h"
#include "test_support.h"
#include "util/date.h"

namespace cloudfit {
namespace {

const InstanceType& Type(const std::string& name) {
  const InstanceType* t = nullptr;
  Status s = testing::BuiltInCatalog().FindInstance(name, &t);
  EXPECT_TRUE(s.ok()) << s.ToString();
  static const InstanceType kNone;
  return t ? *t : kNone;
}

TEST(CatalogAuditTest, EveryMultiGpuTypeNamesItsInterconnect) {
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.gpu_count > 1) {
      EXPECT_NE(t.interconnect, Interconnect::kUnknown) << t.provider << " " << t.name;
    }
  }
}

TEST(CatalogAuditTest, AzureGpuTypesCarryTheirNetworkAndInfiniBand) {
  const InstanceType& ndm = Type("Standard_ND96amsr_A100_v4");
  EXPECT_DOUBLE_EQ(ndm.memory_gib(), 1900) << "the NDm A100 v4 size page: 1,900 GiB";
  EXPECT_EQ(ndm.interconnect, Interconnect::kInfiniband);
  EXPECT_DOUBLE_EQ(ndm.network_bits_per_s, 1600e9) << "8 x 200 Gb/s HDR";
  EXPECT_EQ(Type("Standard_ND96asr_v4").interconnect, Interconnect::kInfiniband);
  EXPECT_DOUBLE_EQ(Type("Standard_ND96isr_H100_v5").network_bits_per_s, 3200e9);
  EXPECT_EQ(Type("Standard_NC24rs_v3").interconnect, Interconnect::kInfiniband);
  EXPECT_EQ(Type("Standard_NC96ads_A100_v4").interconnect, Interconnect::kEthernet);
  EXPECT_DOUBLE_EQ(Type("Standard_NC96ads_A100_v4").network_bits_per_s, 80e9);
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider == "azure" && t.has_gpu() && t.name != "Standard_NC6s_v3" &&
        t.name != "Standard_NC12s_v3" && t.name != "Standard_NC24s_v3" &&
        t.name != "Standard_NC24rs_v3") {
      EXPECT_GT(t.network_bits_per_s, 0) << t.name << " (NCv3 pages publish no bandwidth)";
    }
  }
}

TEST(CatalogAuditTest, GpuVariantsAreTheOnesTheProvidersDocument) {
  EXPECT_EQ(Type("gpu_2x_a100").gpu->name, "A100-PCIE-40GB");
  EXPECT_EQ(Type("gpu_4x_a100").gpu->name, "A100-PCIE-40GB");
  EXPECT_EQ(Type("gpu_8x_a100").gpu->name, "A100-SXM4-40GB");
  for (const char* name : {"ecs.gn8v.4xlarge", "ecs.gn8v-8x.48xlarge", "ecs.ebmgn8v.48xlarge"}) {
    const InstanceType& t = Type(name);
    ASSERT_NE(t.gpu, nullptr) << name << " can be estimated";
    EXPECT_EQ(t.gpu->name, "H20") << name;
    ASSERT_FALSE(t.regions.empty());
    EXPECT_NE(t.regions[0].notes.find("GPU model inferred"), std::string::npos) << name;
  }
  const Accelerator* a10g = nullptr;
  ASSERT_TRUE(testing::BuiltInCatalog().FindAccelerator("A10G", &a10g).ok());
  EXPECT_TRUE(a10g->vgpu) << "g5 runs NVIDIA's GRID/vGPU drivers";
}

TEST(CatalogAuditTest, NewInstanceTypesAreInTheCatalog) {
  for (const char* name :
       {"p6-b200.48xlarge", "g6f.large", "g6f.4xlarge", "g7e.2xlarge", "g7e.48xlarge",
        "Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5", "Standard_ND96isr_H200_v5",
        "Standard_ND96isr_MI300X_v5", "a4-highgpu-8g", "g4-standard-48", "g4-standard-384"}) {
    const InstanceType* t = nullptr;
    EXPECT_TRUE(testing::BuiltInCatalog().FindInstance(name, &t).ok()) << name;
  }
  EXPECT_DOUBLE_EQ(Type("g6f.large").gpu_count, 0.125) << "an eighth of an L4";
  EXPECT_EQ(Type("Standard_NC40ads_H100_v5").gpu->name, "H100-NVL-94GB");
  EXPECT_EQ(Type("a4-highgpu-8g").interconnect, Interconnect::kRoce);
}

TEST(CatalogAuditTest, RentedAcceleratorsHaveAnInstance) {
  // GPUs that a provider of the catalog rents (per the types above): each must be reachable.
  std::set<std::string> rented;
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.gpu) rented.insert(t.gpu->name);
  }
  for (const char* gpu : {"H100-NVL-94GB", "H200-SXM5-141GB", "MI300X", "B200", "B300", "H20",
                          "RTX-PRO-6000-BLACKWELL", "Radeon-Pro-V520", "L4", "L40S", "L20"}) {
    EXPECT_TRUE(rented.count(gpu)) << gpu;
  }
}

int Day(const char* iso) {
  int days = 0;
  EXPECT_TRUE(ParseIsoDate(iso, &days)) << iso;
  return days;
}

TEST(CatalogAuditTest, NewTypesArePricedWhereAPublicSourceDatesAPrice) {
  // GCP G4 from Cyclenerd's pricing.yml generated 2026-09-21 (Cloud Billing Catalog).
  for (const char* name :
       {"g4-standard-48", "g4-standard-96", "g4-standard-192", "g4-standard-384"}) {
    const InstanceType& g4 = Type(name);
    EXPECT_EQ(g4.regions.size(), 3u) << name;
    for (const RegionPrice& r : g4.regions) {
      ASSERT_TRUE(r.price(PricingMode::kOnDemand).has_value()) << name << " " << r.region;
      EXPECT_EQ(r.as_of_days, Day("2026-09-21")) << name << " " << r.region;
      EXPECT_LT(*r.price(PricingMode::kSpot), *r.price(PricingMode::kOnDemand)) << name;
      EXPECT_LT(*r.price(PricingMode::kReserved3y), *r.price(PricingMode::kReserved1y)) << name;
      EXPECT_LT(*r.price(PricingMode::kReserved1y), *r.price(PricingMode::kOnDemand)) << name;
    }
  }
  const RegionPrice* g4 = Type("g4-standard-48").FindRegion("us-central1");
  ASSERT_NE(g4, nullptr);
  EXPECT_DOUBLE_EQ(*g4->price(PricingMode::kOnDemand), 4.49993) << "one RTX PRO 6000";
  // Azure ND H200 v5: the Retail Prices API's eastus2 figures, as read on 2026-09-27.
  const RegionPrice* h200 = Type("Standard_ND96isr_H200_v5").FindRegion("eastus2");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(*h200->price(PricingMode::kOnDemand), 84.8);
  EXPECT_NEAR(*h200->price(PricingMode::kReserved1y), 407526.0 / 8760, 1e-4) << "term / hours";
  EXPECT_NEAR(*h200->price(PricingMode::kReserved3y), 1109592.0 / 26280, 1e-4);
  EXPECT_EQ(h200->as_of_days, Day("2026-09-27"));
  EXPECT_FALSE(h200->price(PricingMode::kSpot).has_value()) << "no dated spot price was found";
  // No public price at all: the row stays unpriced and says why.
  for (const RegionPrice& r : Type("a4-highgpu-8g").regions) {
    EXPECT_FALSE(r.any_price());
    EXPECT_NE(r.notes.find("shape only"), std::string::npos);
  }
  // ND MI300X v5: no dated price either, only Spare Cores' lowest over Azure's regions (48 USD/h,
  // 6 per GPU), which the row carries as an undated lower bound.
  const RegionPrice& mi300x = Type("Standard_ND96isr_MI300X_v5").regions.at(0);
  EXPECT_DOUBLE_EQ(*mi300x.price(PricingMode::kOnDemand), 48.0);
  EXPECT_TRUE(mi300x.lowest_over_regions(PricingMode::kOnDemand));
  EXPECT_FALSE(mi300x.as_of_known());
  EXPECT_NE(Type("a4-highgpu-8g").regions[0].notes.find("no on-demand list price"),
            std::string::npos);
  // AWS g6f has a local NVMe instance store (Spare Cores' dump of the EC2 API).
  EXPECT_DOUBLE_EQ(Type("g6f.large").local_disk_bytes, 100e9);
  EXPECT_DOUBLE_EQ(Type("g6f.4xlarge").local_disk_bytes, 450e9);
  EXPECT_EQ(Type("g6f.2xlarge").local_disk_type, "nvme");
}

// The clouds SkyPilot's accelerator list (shared/catalogs/skypilot/v9/common/accelerators.csv,
// a public snapshot) says rent each accelerator, as {accelerator name: providers of this
// catalog}. Its other clouds are not providers here.
std::map<std::string, std::set<std::string>> SkyPilotRenters(const std::string& path) {
  static const std::map<std::string, std::string> kProviders = {
      {"AWS", "aws"}, {"Azure", "azure"}, {"GCP", "gcp"}, {"Lambda", "lambda"}};
  std::map<std::string, std::set<std::string>> renters;
  std::istringstream in(testing::ReadWholeFile(path));
  std::string line;
  std::getline(in, line);  // AcceleratorName,Clouds
  while (std::getline(in, line)) {
    size_t comma = line.find(',');
    if (comma == std::string::npos) continue;
    std::string name = line.substr(0, comma);
    // Clouds is a Python list literal: "['AWS', 'GCP']" or ['AWS'].
    std::string clouds = line.substr(comma + 1);
    for (const auto& [cloud, provider] : kProviders) {
      if (clouds.find("'" + cloud + "'") != std::string::npos) renters[name].insert(provider);
    }
  }
  return renters;
}

TEST(CatalogAuditTest, EveryAcceleratorAProviderRentsHasAnInstance) {
  // An accelerator of this catalog that a provider of the catalog rents must be reachable
  // through at least one instance type. SkyPilot's names are generic ("V100" for the PCIe and
  // the SXM2 part), so the check is per accelerator, not per provider and variant.
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  const Catalog& catalog = testing::BuiltInCatalog();
  // Known gaps, each with its reason; an entry that stops being a gap must be removed.
  const std::map<std::string, std::string> kGaps = {
      {"K80", "Azure NC (K80) is retired: Spare Cores lists Standard_NC6/12/24 INACTIVE"},
      {"M60",
       "Azure NVv3 (M60, virtual desktops): no source read gives the network figure every Azure "
       "GPU type carries"},
      {"MI25",
       "Azure NVv4 (MI25 slices, virtual desktops): no source read gives the network figure"}};
  std::map<std::string, std::set<std::string>> renters =
      SkyPilotRenters(shared + "/catalogs/skypilot/v9/common/accelerators.csv");
  ASSERT_GE(renters.size(), 30u) << "the list was read";
  std::set<std::string> rented_here;
  for (const InstanceType& t : catalog.instances()) {
    if (t.gpu) rented_here.insert(t.gpu->name);
  }
  std::set<std::string> checked;
  for (const auto& [name, providers] : renters) {
    const Accelerator* gpu = nullptr;
    // TPUs, Trainium, Inferentia and Gaudi are not GPUs of this catalog.
    if (providers.empty() || !catalog.FindAccelerator(name, &gpu).ok()) continue;
    checked.insert(gpu->name);
    bool present = rented_here.count(gpu->name) > 0;
    if (kGaps.count(gpu->name)) {
      EXPECT_FALSE(present) << gpu->name << " has an instance now: remove it from the gaps";
      continue;
    }
    EXPECT_TRUE(present) << *providers.begin() << " rents " << name << " (" << gpu->name
                         << ") per SkyPilot, and the catalog has no instance with it";
  }
  EXPECT_GE(checked.size(), 20u) << "accelerators checked";
  for (const auto& [gpu, why] : kGaps) EXPECT_TRUE(checked.count(gpu)) << gpu << ": " << why;
}

TEST(CatalogAuditTest, AlibabaPricesNameTheirSourceAndSayTheirDateIsUnknown) {
  // Alibaba publishes no static price list; the built-in prices are Spare Cores' lowest
  // pay-as-you-go price of each type over all regions, undated. Each priced row must say so:
  // the file it was read from (pinned to a commit), no made-up date, and the region caveat.
  int priced = 0;
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider != "alibaba") continue;
    for (const RegionPrice& r : t.regions) {
      if (!r.any_price()) continue;
      ++priced;
      EXPECT_TRUE(r.price(PricingMode::kOnDemand).has_value()) << t.name;
      EXPECT_GT(*r.price(PricingMode::kOnDemand), 0) << t.name;
      EXPECT_EQ(r.currency, "USD") << t.name;
      EXPECT_NE(r.source.find("github.com/SpareCores/sc-navigator-descriptions/blob/"),
                std::string::npos)
          << t.name << ": " << r.source;
      EXPECT_NE(r.source.find("/data/alicloud/" + t.name + "/descriptions/input.json"),
                std::string::npos)
          << t.name << ": " << r.source;
      // Pinned to the commit it was read at (the files differ between commits: some hold no
      // price), never to a branch.
      std::string prefix = "sc-navigator-descriptions/blob/";
      size_t commit = r.source.find(prefix) + prefix.size();
      std::string hash(r.source.substr(commit, 41));
      EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), 40u) << t.name << ": " << r.source;
      EXPECT_FALSE(r.as_of_known()) << t.name << ": the source states no date";
      EXPECT_NE(r.notes.find("price date unknown"), std::string::npos) << t.name;
      EXPECT_NE(r.notes.find("does not say which region"), std::string::npos) << t.name;
      // ...and the data says it too, so that every answer showing the offer can warn.
      EXPECT_TRUE(r.lowest_over_regions(PricingMode::kOnDemand)) << t.name;
    }
  }
  EXPECT_GE(priced, 100) << "Alibaba offers with a price";
  for (const char* name : {"ecs.g7.4xlarge", "ecs.r7.large", "ecs.c8i.large", "ecs.g8i.24xlarge",
                           "ecs.r8i.12xlarge"}) {
    EXPECT_TRUE(Type(name).regions[0].price(PricingMode::kOnDemand).has_value())
        << name << ": read from Spare Cores";
  }
  // Only Spare Cores' cross-region minima are marked (Alibaba's, and the three Azure sizes no
  // other source prices): every other price is the region's own.
  int azure_marked = 0;
  for (const InstanceType& t : testing::BuiltInCatalog().instances()) {
    if (t.provider == "alibaba") continue;
    for (const RegionPrice& r : t.regions) {
      if (r.lowest_over_regions_modes == 0) continue;
      EXPECT_EQ(t.provider, "azure") << t.name << " " << r.region;
      azure_marked += t.provider == "azure";
      EXPECT_EQ(r.lowest_over_regions_modes, 1u << static_cast<int>(PricingMode::kOnDemand))
          << t.name;
      EXPECT_NE(r.source.find("sc-navigator-descriptions/blob/"), std::string::npos) << t.name;
      EXPECT_NE(r.source.find("/data/azure/" + t.name + "/descriptions/input.json"),
                std::string::npos)
          << t.name;
      EXPECT_FALSE(r.as_of_known()) << t.name << ": the source states no date";
      EXPECT_NE(r.notes.find("does not say which region"), std::string::npos) << t.name;
    }
  }
  EXPECT_EQ(azure_marked, 3) << "NV6ads_A10_v5, NV18ads_A10_v5 and ND96isr_MI300X_v5 (NV12ads has "
                                "its eastus price of 2024-08-26)";
  EXPECT_TRUE(Type("ecs.gn7i-c8g1.2xlarge").regions[0].price(PricingMode::kOnDemand).has_value())
      << "the A10 type the selection guides start from";
}

}  // namespace
}  // namespace cloudfit
