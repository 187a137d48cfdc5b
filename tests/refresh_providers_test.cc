// Each provider's refresh on recorded answers in the provider's documented format: the prices
// it computes, what it skips and why, and a clear error (provider, URL, field) for bad input,
// with nothing of that provider written.
#include <cmath>

#include <gtest/gtest.h>

#include "refresh/refresh.h"
#include "refresh_test_support.h"
#include "test_support.h"
#include "util/date.h"

namespace cloudfit {
namespace {

using testing::AddStandardAnswers;
using testing::AllCredentials;
using testing::RefreshFixture;
using testing::ScriptedAnswer;
using testing::ScriptedHttpClient;
using testing::TestEnvironment;

class RefreshProvidersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Catalog::FromFiles(testing::RefreshCatalogFiles(), "refresh fixture", &base_).ok());
    AddStandardAnswers(&http_);
  }

  // Refreshes `providers` and loads the result into merged_.
  Status Run(std::vector<std::string> providers,
             std::map<std::string, std::string> env = AllCredentials()) {
    RefreshOptions options;
    options.providers = std::move(providers);
    CatalogFiles files;
    Status s = refresh::RefreshWith(base_, options, TestEnvironment(&http_, env, &sleeps_), &files,
                                    &report_);
    if (s.ok()) {
      merged_ = Catalog();
      Status loaded = Catalog::FromFiles(files, "refreshed", &merged_);
      EXPECT_TRUE(loaded.ok()) << loaded.ToString();
    }
    return s;
  }

  const RegionPrice& Row(const std::string& type, const std::string& region) {
    const InstanceType* t = nullptr;
    Status s = merged_.FindInstance(type, &t);
    EXPECT_TRUE(s.ok()) << s.ToString();
    static const RegionPrice kNone;
    if (!t) return kNone;
    const RegionPrice* r = t->FindRegion(region);
    EXPECT_NE(r, nullptr) << type << " in " << region;
    return r ? *r : kNone;
  }

  const ProviderRefreshReport& Report(const std::string& provider) {
    for (const auto& p : report_.providers) {
      if (p.provider == provider) return p;
    }
    static const ProviderRefreshReport kNone;
    ADD_FAILURE() << "no report for " << provider;
    return kNone;
  }

  static double Price(const RegionPrice& r, PricingMode mode) {
    return r.price(mode).value_or(-1);
  }

  Catalog base_;
  Catalog merged_;
  ScriptedHttpClient http_;
  RefreshReport report_;
  std::vector<double> sleeps_;
};

TEST_F(RefreshProvidersTest, AzureFollowsPagesAndReadsLinuxOnDemandSpotAndReservations) {
  ASSERT_TRUE(Run({"azure"}).ok());
  const RegionPrice& r = Row("Standard_NC24ads_A100_v4", "eastus");
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kOnDemand), 3.673);  // not the Windows 4.041
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kSpot), 0.7346);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved1y), 19305.0 / 8760);  // the term's price
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved3y), 37021.0 / 26280);
  EXPECT_EQ(r.currency, "USD");
  EXPECT_EQ(FormatIsoDate(r.as_of_days), "2026-11-24") << "the day the API answered";
  EXPECT_NE(r.source.find("https://prices.azure.com/api/retail/prices"), std::string::npos);
  EXPECT_NE(r.source.find("nca100v4-series"), std::string::npos) << "the shape's source stays";
  const ProviderRefreshReport& p = Report("azure");
  EXPECT_EQ(p.outcome, ProviderRefreshReport::Outcome::kRefreshed);
  EXPECT_EQ(p.offers, 1);
  EXPECT_EQ(p.skipped.at("Windows meter"), 1);
  EXPECT_EQ(p.skipped.at("low-priority meter"), 1);
  EXPECT_EQ(p.skipped.at("region not asked for"), 1);  // westeurope: the catalog lists eastus
  EXPECT_EQ(p.skipped.at("price type 'DevTestConsumption'"), 1);
  int pages = 0;
  for (const auto& request : http_.requests()) pages += request.url.find("prices.azure.com") != std::string::npos;
  EXPECT_EQ(pages, 2);
}

TEST_F(RefreshProvidersTest, AwsStreamsOfferFilesAndAddsSpotWithCredentials) {
  ASSERT_TRUE(Run({"aws"}).ok());
  const RegionPrice& p4d = Row("p4d.24xlarge", "us-east-1");
  EXPECT_DOUBLE_EQ(Price(p4d, PricingMode::kOnDemand), 21.9576);
  EXPECT_DOUBLE_EQ(Price(p4d, PricingMode::kReserved1y), 13.91);  // standard, not convertible
  EXPECT_DOUBLE_EQ(Price(p4d, PricingMode::kReserved3y), 8.94);
  EXPECT_DOUBLE_EQ(Price(p4d, PricingMode::kSpot), 8.7123);  // the cheaper zone
  EXPECT_EQ(FormatIsoDate(p4d.as_of_days), "2026-11-24");
  EXPECT_NE(p4d.notes.find("published 2026-11-20"), std::string::npos) << p4d.notes;
  const RegionPrice& g5 = Row("g5.xlarge", "us-east-1");
  EXPECT_DOUBLE_EQ(Price(g5, PricingMode::kOnDemand), 1.006);
  EXPECT_DOUBLE_EQ(Price(g5, PricingMode::kSpot), 0.3817);
  EXPECT_FALSE(g5.price(PricingMode::kReserved3y)) << "no 3-year row in the file";
  const RegionPrice& eu = Row("p4d.24xlarge", "eu-west-1");
  EXPECT_DOUBLE_EQ(Price(eu, PricingMode::kOnDemand), 24.21);
  EXPECT_FALSE(eu.price(PricingMode::kSpot)) << "no spot answer for eu-west-1";
  // c7i.large is not in the offer files: its old row stays, with its old date.
  const RegionPrice& c7i = Row("c7i.large", "us-east-1");
  EXPECT_EQ(FormatIsoDate(c7i.as_of_days), "2026-07-22");
  const ProviderRefreshReport& p = Report("aws");
  EXPECT_EQ(p.offers, 3);
  EXPECT_EQ(p.types_priced, 2);
  EXPECT_EQ(p.skipped.begin()->second, 1) << "m7i.xlarge is not in the catalog";
  bool spot_note = false;
  for (const std::string& n : p.notes) spot_note |= n.find("spot prices for eu-west-1") == 0;
  EXPECT_TRUE(spot_note);
  // The spot request was signed; the offer files, public, were not.
  for (const auto& request : http_.requests()) {
    bool is_spot = request.url.find("://ec2.") != std::string::npos;
    bool has_auth = false;
    for (const auto& [name, value] : request.headers) has_auth |= name == "Authorization";
    EXPECT_EQ(is_spot, has_auth) << request.display_url();
  }
}

TEST_F(RefreshProvidersTest, AwsWithoutCredentialsLeavesSpotEmptyAndSaysSo) {
  ASSERT_TRUE(Run({"aws"}, {}).ok());
  const RegionPrice& p4d = Row("p4d.24xlarge", "us-east-1");
  EXPECT_DOUBLE_EQ(Price(p4d, PricingMode::kOnDemand), 21.9576);
  EXPECT_FALSE(p4d.price(PricingMode::kSpot)) << "an old spot price must not take the new date";
  ASSERT_FALSE(Report("aws").notes.empty());
  EXPECT_NE(Report("aws").notes[0].find("spot prices not fetched: no AWS credentials"),
            std::string::npos);
}

TEST_F(RefreshProvidersTest, GcpAddsCoreMemoryAndGpuPartsAsGcpBillsThem) {
  ASSERT_TRUE(Run({"gcp"}).ok());
  const RegionPrice& a2 = Row("a2-ultragpu-1g", "us-central1");
  EXPECT_NEAR(Price(a2, PricingMode::kOnDemand), 12 * 0.031611 + 170 * 0.004237 + 3.92808, 1e-9);
  EXPECT_NEAR(Price(a2, PricingMode::kSpot), 12 * 0.009483 + 170 * 0.001271 + 1.571232, 1e-9);
  EXPECT_NEAR(Price(a2, PricingMode::kReserved1y), 12 * 0.019915 + 170 * 0.002669 + 2.47469,
              1e-9);
  EXPECT_FALSE(a2.price(PricingMode::kReserved3y)) << "no 3-year parts: left empty, not guessed";
  const RegionPrice& g2 = Row("g2-standard-4", "us-central1");
  EXPECT_NEAR(Price(g2, PricingMode::kOnDemand), 4 * 0.024988 + 16 * 0.002927 + 0.56004, 1e-9);
  EXPECT_FALSE(g2.price(PricingMode::kSpot));
  // The API key travels in a header, never in the URL.
  for (const auto& request : http_.requests()) {
    EXPECT_EQ(request.url.find("gcp-key"), std::string::npos);
  }
}

TEST_F(RefreshProvidersTest, GcpWithoutAnApiKeyIsSkippedNotFailed) {
  RefreshOptions options;
  options.providers = {"gcp", "azure"};
  CatalogFiles files;
  ASSERT_TRUE(refresh::RefreshWith(base_, options, TestEnvironment(&http_, {}), &files, &report_)
                  .ok());
  EXPECT_EQ(Report("gcp").outcome, ProviderRefreshReport::Outcome::kSkipped);
  EXPECT_NE(Report("gcp").message.find("GOOGLE_API_KEY"), std::string::npos);
  EXPECT_FALSE(report_.any_failed());
}

TEST_F(RefreshProvidersTest, AlibabaSignsDescribePriceAndSkipsTypesNotSold) {
  ASSERT_TRUE(Run({"alibaba"}).ok());
  const RegionPrice& r = Row("ecs.gn6i-c4g1.xlarge", "cn-hangzhou");
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kOnDemand), 11.76) << "the instance line, not the disk";
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kSpot), 2.352);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved1y), 87564.96 / 8760);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved3y), 173069.57 / 26280);
  EXPECT_EQ(r.currency, "CNY");
  // vgn6i-m4.xlarge is not sold: its old row and price stay.
  const RegionPrice& v = Row("vgn6i-m4.xlarge", "cn-hangzhou");
  EXPECT_DOUBLE_EQ(Price(v, PricingMode::kOnDemand), 3.5);
  EXPECT_EQ(Report("alibaba").skipped.at(
                "ondemand not offered (InvalidInstanceType.ValueNotSupported)"),
            1);
  for (const auto& request : http_.requests()) {
    EXPECT_NE(request.url.find("&Signature="), std::string::npos);
    EXPECT_NE(request.url.find("AccessKeyId=LTAITEST"), std::string::npos);
    EXPECT_EQ(request.url.find("ali-secret"), std::string::npos);
    EXPECT_EQ(request.display_url().find("Signature"), std::string::npos) << "shown URLs are clean";
  }
}

TEST_F(RefreshProvidersTest, TencentInquiresInASellingZoneWithTheAccountCurrency) {
  ASSERT_TRUE(Run({"tencent"}).ok());
  const RegionPrice& r = Row("GN7.2XLARGE32", "ap-guangzhou");
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kOnDemand), 8.68);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kSpot), 1.736);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved1y), 44634.24 / 8760);
  EXPECT_DOUBLE_EQ(Price(r, PricingMode::kReserved3y), 95644.8 / 26280);
  EXPECT_EQ(r.currency, "CNY");
  int inquiries = 0;
  for (const auto& request : http_.requests()) {
    if (request.display_url().find("InquiryPrice") == std::string::npos) continue;
    ++inquiries;
    EXPECT_NE(request.body.find("ap-guangzhou-4"), std::string::npos) << "the zone that sells it";
    EXPECT_NE(request.body.find("img-487zeit5"), std::string::npos);
  }
  EXPECT_EQ(inquiries, 4);
}

TEST_F(RefreshProvidersTest, OneFailingProviderDoesNotStopTheOthers) {
  http_.Override({"GET", "prices.azure.com", "", 200, "<html><body>502 Bad Gateway</body></html>"});
  ASSERT_TRUE(Run({"azure", "aws"}).ok());
  EXPECT_EQ(Report("azure").outcome, ProviderRefreshReport::Outcome::kFailed);
  EXPECT_EQ(Report("aws").outcome, ProviderRefreshReport::Outcome::kRefreshed);
  EXPECT_TRUE(report_.any_failed());
  // Azure keeps what it had; AWS is new.
  const RegionPrice& azure = Row("Standard_NC24ads_A100_v4", "eastus");
  EXPECT_DOUBLE_EQ(Price(azure, PricingMode::kOnDemand), 3.67);
  EXPECT_EQ(FormatIsoDate(azure.as_of_days), "2025-01-01");
  EXPECT_EQ(FormatIsoDate(Row("p4d.24xlarge", "us-east-1").as_of_days), "2026-11-24");
}

// Bad input: each case breaks one answer and must fail its provider with a message naming the
// provider, the URL and the field, and write nothing.
struct BadInput {
  const char* name;
  const char* provider;
  ScriptedAnswer answer;
  std::vector<std::string> message_has;
};

class RefreshBadInputTest : public RefreshProvidersTest,
                            public ::testing::WithParamInterface<BadInput> {};

TEST_P(RefreshBadInputTest, FailsWithTheProviderUrlAndFieldAndWritesNothing) {
  const BadInput& bad = GetParam();
  ScriptedAnswer answer = bad.answer;
  // Some cases take the recorded answer and change one thing.
  auto replace = [&](const std::string& from, const std::string& to) {
    size_t at = answer.body.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    answer.body.replace(at, from.size(), to);
  };
  std::string name = bad.name;
  if (name == "azure_price_zero") {
    answer.body = RefreshFixture("azure/page1.json");
    replace("\"retailPrice\": 3.673", "\"retailPrice\": 0.0");
  } else if (name == "azure_missing_field") {
    answer.body = RefreshFixture("azure/page1.json");
    replace("\"armRegionName\": \"eastus\",", "");
  } else if (name == "azure_schema_changed") {
    answer.body = RefreshFixture("azure/page1.json");
    replace("\"Items\"", "\"items\"");
  } else if (name == "azure_truncated") {
    answer.body = RefreshFixture("azure/page1.json").substr(0, 700);
  } else if (name == "aws_missing_column") {
    answer.body = RefreshFixture("aws/us-east-1.csv");
    replace("\"Tenancy\",", "\"Tenancy Type\",");
  } else if (name == "aws_negative_price") {
    answer.body = RefreshFixture("aws/us-east-1.csv");
    replace("\"21.9576000000\"", "\"-21.9576000000\"");
  } else if (name == "aws_truncated") {
    std::string full = RefreshFixture("aws/us-east-1.csv");
    answer.body = full.substr(0, full.find("B5S7KQ9DXQ2JN4WE") + 120);
  } else if (name == "gcp_units_not_a_number") {
    answer.body = RefreshFixture("gcp/skus_page1.json");
    replace("\"units\": \"3\"", "\"units\": \"three\"");
  } else if (name == "alibaba_missing_currency") {
    answer.body = RefreshFixture("alibaba/price_hour.json");
    replace("\"Currency\": \"CNY\",", "");
  } else if (name == "alibaba_negative_price") {
    answer.body = RefreshFixture("alibaba/price_hour.json");
    replace("\"TradePrice\": 11.76", "\"TradePrice\": -11.76");
  } else if (name == "tencent_auth_failure") {
    answer.body = RefreshFixture("tencent/error_auth.json");
  }
  http_.Override(answer);
  RefreshOptions options;
  options.providers = {bad.provider};
  CatalogFiles files;
  Status s =
      refresh::RefreshWith(base_, options, TestEnvironment(&http_, AllCredentials()), &files, &report_);
  EXPECT_FALSE(s.ok()) << "a failed provider alone must write nothing";
  EXPECT_TRUE(files.empty());
  ASSERT_EQ(report_.providers.size(), 1u);
  EXPECT_EQ(report_.providers[0].outcome, ProviderRefreshReport::Outcome::kFailed);
  const std::string& message = report_.providers[0].message;
  EXPECT_EQ(message.rfind(std::string(bad.provider) + ": ", 0), 0u) << message;
  for (const std::string& piece : bad.message_has) {
    EXPECT_NE(message.find(piece), std::string::npos) << "'" << piece << "' not in: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Providers, RefreshBadInputTest,
    ::testing::Values(
        BadInput{"azure_html_page", "azure",
                 {"GET", "prices.azure.com", "", 200, "<!DOCTYPE html><html>Sign in</html>"},
                 {"https://prices.azure.com/api/retail/prices", "HTML"}},
        BadInput{"azure_price_zero", "azure", {"GET", "prices.azure.com/api/retail/prices?api", "", 200, ""},
                 {"Items[0].retailPrice", "0 is not a price"}},
        BadInput{"azure_missing_field", "azure", {"GET", "prices.azure.com/api/retail/prices?api", "", 200, ""},
                 {"Items[0].armRegionName", "missing"}},
        BadInput{"azure_schema_changed", "azure",
                 {"GET", "prices.azure.com/api/retail/prices?api", "", 200, ""},
                 {"Items: missing", "schema changed"}},
        BadInput{"azure_truncated", "azure", {"GET", "prices.azure.com/api/retail/prices?api", "", 200, ""},
                 {"truncated JSON"}},
        BadInput{"azure_http_error", "azure",
                 {"GET", "prices.azure.com", "", 403, "{\"error\": \"forbidden\"}"},
                 {"HTTP 403", "forbidden"}},
        BadInput{"aws_missing_column", "aws", {"GET", "/us-east-1/index.csv", "", 200, ""},
                 {"/us-east-1/index.csv", "column 'Tenancy' is missing"}},
        BadInput{"aws_negative_price", "aws", {"GET", "/us-east-1/index.csv", "", 200, ""},
                 {"/us-east-1/index.csv", "line 7", "PricePerUnit '-21.9576000000'",
                  "not a price"}},
        BadInput{"aws_truncated", "aws", {"GET", "/us-east-1/index.csv", "", 200, ""},
                 {"/us-east-1/index.csv", "truncated"}},
        BadInput{"aws_html_instead_of_csv", "aws",
                 {"GET", "/us-east-1/index.csv", "", 200, "<?xml version=\"1.0\"?><Error/>"},
                 {"/us-east-1/index.csv", "HTML or XML page"}},
        BadInput{"aws_index_schema", "aws",
                 {"GET", "region_index.json", "", 200, "{\"formatVersion\": \"v2\"}"},
                 {"region_index.json", "regions: missing"}},
        BadInput{"gcp_units_not_a_number", "gcp", {"GET", "cloudbilling.googleapis.com", "", 200, ""},
                 {"cloudbilling.googleapis.com", "skus[2].pricingInfo[0].pricingExpression."
                                                 "tieredRates[0].unitPrice.units"}},
        BadInput{"alibaba_missing_currency", "alibaba",
                 {"GET", "ecs.cn-hangzhou.aliyuncs.com/?Action=DescribePrice&InstanceType=ecs", "", 200, ""},
                 {"aliyuncs.com", "PriceInfo.Price.Currency: missing"}},
        BadInput{"alibaba_negative_price", "alibaba",
                 {"GET", "ecs.cn-hangzhou.aliyuncs.com/?Action=DescribePrice&InstanceType=ecs", "", 200, ""},
                 {"DetailInfo[0].TradePrice", "-11.76 is not a price"}},
        BadInput{"tencent_auth_failure", "tencent",
                 {"POST", "Action=DescribeZoneInstanceConfigInfos", "", 200, ""},
                 {"tencent: POST https://cvm.tencentcloudapi.com/",
                  "AuthFailure.SignatureFailure"}}),
    [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

}  // namespace
}  // namespace cloudfit
