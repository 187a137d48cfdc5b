#include <gtest/gtest.h>

#include "cloudfit/instance_query.h"
#include "test_support.h"

namespace cloudfit {
namespace {

std::vector<std::string> Names(const std::vector<Offer>& offers) {
  std::vector<std::string> names;
  for (const Offer& o : offers) names.push_back(o.instance->name + "@" + o.region->region);
  return names;
}

class InstanceQueryTest : public ::testing::Test {
 protected:
  std::vector<Offer> Find(const InstanceQuery& q) {
    std::vector<Offer> offers;
    Status s = FindOffers(catalog_, q, &offers);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return offers;
  }
  Status Error(const InstanceQuery& q) {
    std::vector<Offer> offers;
    return FindOffers(catalog_, q, &offers);
  }
  Catalog catalog_ = testing::FixtureCatalog();
};

TEST_F(InstanceQueryTest, SortsByPriceWithUnknownLast) {
  auto offers = Find(InstanceQuery());
  ASSERT_EQ(offers.size(), 9u);
  EXPECT_EQ(offers.front().instance->name, "c7i.large");
  EXPECT_EQ(offers.back().instance->name, "ecs.gn6i-c4g1.xlarge");
  EXPECT_FALSE(offers.back().price_per_hour.has_value());
  InstanceQuery desc;
  desc.descending = true;
  offers = Find(desc);
  EXPECT_EQ(offers.front().instance->name, "p4d.24xlarge");
  EXPECT_EQ(offers.back().instance->name, "ecs.gn6i-c4g1.xlarge") << "unknown is last either way";
}

TEST_F(InstanceQueryTest, ComparesPricesAcrossCurrencies) {
  // 3.5 CNY at 0.14 USD/CNY is 0.49 USD: cheaper than g2-standard-4 at 0.7068 USD.
  InstanceQuery q;
  q.gpu_only = true;
  q.top = 2;
  auto offers = Find(q);
  EXPECT_EQ(Names(offers), (std::vector<std::string>{"vgn6i-m4.xlarge@cn-hangzhou",
                                                     "g2-standard-4@us-central1"}));
  EXPECT_EQ(offers[0].currency, "CNY");
  EXPECT_DOUBLE_EQ(*offers[0].price_per_hour, 3.5);
  q.currency = "USD";
  offers = Find(q);
  EXPECT_EQ(offers[0].currency, "USD");
  EXPECT_NEAR(*offers[0].price_per_hour, 0.49, 1e-9);
}

TEST_F(InstanceQueryTest, FiltersByGpuAliasCountMemoryAndPrice) {
  InstanceQuery q;
  q.gpus = {"a100 80g", "A100"};
  EXPECT_EQ(Names(Find(q)), (std::vector<std::string>{"a2-ultragpu-1g@us-central1",
                                                      "p4d.24xlarge@us-east-1",
                                                      "p4d.24xlarge@eu-west-1"}));
  InstanceQuery by_memory;
  by_memory.gpu_memory_gib.min = 40;
  by_memory.gpu_count.max = 1;
  EXPECT_EQ(Names(Find(by_memory)), (std::vector<std::string>{"a2-ultragpu-1g@us-central1"}));
  InstanceQuery cheap;
  cheap.price_per_hour.max = 1.1;
  cheap.gpu_only = true;
  EXPECT_EQ(Names(Find(cheap)),
            (std::vector<std::string>{"vgn6i-m4.xlarge@cn-hangzhou", "g2-standard-4@us-central1",
                                      "g5.xlarge@us-east-1"}));
}

TEST_F(InstanceQueryTest, SpotPricingUsesSpotAndDropsUnpricedUnderPriceFilter) {
  InstanceQuery q;
  q.pricing = PricingMode::kSpot;
  q.priced_only = true;
  auto offers = Find(q);
  for (const Offer& o : offers) EXPECT_TRUE(o.price_per_hour.has_value());
  EXPECT_EQ(offers.front().instance->name, "c7i.large");
  EXPECT_DOUBLE_EQ(*offers.front().price_per_hour, 0.03);
  EXPECT_EQ(offers.size(), 5u);
}

TEST_F(InstanceQueryTest, FiltersByProviderRegionVcpuMemoryPerVcpuAndArch) {
  InstanceQuery q;
  q.providers = {"AWS"};
  q.regions = {"us-east-1"};
  q.vcpus = {2, 8};
  EXPECT_EQ(Names(Find(q)),
            (std::vector<std::string>{"c7i.large@us-east-1", "g5.xlarge@us-east-1"}));
  InstanceQuery ratio;
  ratio.memory_per_vcpu_gib.min = 10;
  EXPECT_EQ(Names(Find(ratio)), (std::vector<std::string>{"a2-ultragpu-1g@us-central1",
                                                          "p4d.24xlarge@us-east-1",
                                                          "p4d.24xlarge@eu-west-1"}));
  InstanceQuery cpu;
  cpu.cpu_only = true;
  EXPECT_EQ(Names(Find(cpu)), (std::vector<std::string>{"c7i.large@us-east-1"}));
}

TEST_F(InstanceQueryTest, OnePerTypeKeepsTheCheapestRegion) {
  InstanceQuery q;
  q.one_per_type = true;
  q.providers = {"aws"};
  EXPECT_EQ(Names(Find(q)), (std::vector<std::string>{"c7i.large@us-east-1",
                                                      "g5.xlarge@us-east-1",
                                                      "p4d.24xlarge@us-east-1"}));
  q.descending = true;
  EXPECT_EQ(Names(Find(q)).front(), "p4d.24xlarge@eu-west-1");
}

TEST_F(InstanceQueryTest, SortsByOtherKeys) {
  InstanceQuery q;
  q.sort_by = "vcpus";
  q.descending = true;
  q.top = 1;
  EXPECT_EQ(Find(q).front().instance->name, "p4d.24xlarge");
  q.sort_by = "memory-per-vcpu";
  q.descending = false;
  EXPECT_EQ(Find(q).front().instance->name, "c7i.large");
}

TEST_F(InstanceQueryTest, RejectsBadQueriesNamingTheFlag) {
  InstanceQuery range;
  range.vcpus = {16, 8};
  EXPECT_EQ(Error(range).message(), "--vcpus: the minimum 16 is above the maximum 8");
  InstanceQuery negative;
  negative.price_per_hour.min = -1;
  EXPECT_NE(Error(negative).message().find("--price: -1 is outside"), std::string::npos);
  InstanceQuery gpu;
  gpu.gpus = {"A1000"};
  EXPECT_NE(Error(gpu).message().find("--gpu: unknown GPU 'A1000'"), std::string::npos);
  InstanceQuery provider;
  provider.providers = {"awz"};
  EXPECT_NE(Error(provider).message().find("did you mean 'aws'"), std::string::npos);
  InstanceQuery sort;
  sort.sort_by = "speed";
  EXPECT_NE(Error(sort).message().find("--sort: 'speed' is not one of"), std::string::npos);
  InstanceQuery currency;
  currency.currency = "EUR";
  EXPECT_NE(Error(currency).message().find("--currency: 'EUR'"), std::string::npos);
  InstanceQuery both;
  both.cpu_only = both.gpu_only = true;
  EXPECT_FALSE(Error(both).ok());
}

}  // namespace
}  // namespace cloudfit
