#include "refresh_test_support.h"

#include <gtest/gtest.h>

#include "test_support.h"
#include "util/strings.h"

namespace cloudfit::testing {

namespace {

const ScriptedAnswer* Match(std::vector<ScriptedAnswer>* answers,
                            const refresh::HttpRequest& request) {
  for (ScriptedAnswer& a : *answers) {
    if (a.times == 0) continue;
    if (!a.method.empty() && a.method != request.method) continue;
    if (request.display_url().find(a.url_has) == std::string::npos) continue;
    if (!a.body_has.empty() && request.body.find(a.body_has) == std::string::npos) continue;
    if (a.times > 0) --a.times;
    return &a;
  }
  return nullptr;
}

}  // namespace

Status ScriptedHttpClient::Send(const refresh::HttpRequest& request,
                                refresh::HttpResponse* response) {
  requests_.push_back(request);
  *response = refresh::HttpResponse();
  const ScriptedAnswer* a = Match(&answers_, request);
  if (a == nullptr) return Status::IOError("no scripted answer for " + request.key());
  response->status = a->status;
  response->body = a->body;
  response->fetched_days = fetched_days;
  return Status::OK();
}

Status ScriptedHttpClient::Stream(const refresh::HttpRequest& request,
                                  const refresh::BodySink& sink,
                                  refresh::HttpResponse* response) {
  Status s = Send(request, response);
  if (!s.ok() || !response->ok()) return s;
  // Small uneven pieces, so records and quoted fields cross piece boundaries.
  std::string body = std::move(response->body);
  response->body.clear();
  for (size_t i = 0; i < body.size(); i += 7) {
    if (!sink(std::string_view(body).substr(i, 7))) {
      return Status::Corruption("the reader stopped the transfer");
    }
  }
  return Status::OK();
}

std::string RefreshFixture(const std::string& relative) {
  std::string text = ReadWholeFile(SourcePath("tests/fixtures/refresh/" + relative));
  EXPECT_FALSE(text.empty()) << relative;
  return text;
}

void AddStandardAnswers(ScriptedHttpClient* http) {
  std::string azure_page1 = RefreshFixture("azure/page1.json");
  std::string next = "https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-"
                     "preview&$filter=serviceName%20eq%20%27Virtual%20Machines%27%20and%20"
                     "armSkuName%20eq%20%27Standard_NC24ads_A100_v4%27&$skip=100";
  azure_page1.replace(azure_page1.find("NEXT_PAGE"), 9, next);
  http->Add({"GET", "$skip=100", "", 200, RefreshFixture("azure/page2.json")});
  http->Add({"GET", "prices.azure.com/api/retail/prices", "", 200, azure_page1});

  http->Add({"GET", "/AmazonEC2/current/region_index.json", "", 200,
             RefreshFixture("aws/region_index.json")});
  http->Add({"GET", "/us-east-1/index.csv", "", 200, RefreshFixture("aws/us-east-1.csv")});
  http->Add({"GET", "/eu-west-1/index.csv", "", 200, RefreshFixture("aws/eu-west-1.csv")});
  http->Add({"GET", "ec2.us-east-1.amazonaws.com", "", 200,
             RefreshFixture("aws/spot_us-east-1.xml")});

  http->Add({"GET", "pageToken=CAEQ8A8aHRIbCgpza3VzLzAwMDA", "", 200,
             RefreshFixture("gcp/skus_page2.json")});
  http->Add({"GET", "cloudbilling.googleapis.com", "", 200, RefreshFixture("gcp/skus_page1.json")});

  const std::string ali = "ecs.cn-hangzhou.aliyuncs.com/?Action=DescribePrice";
  http->Add({"GET", "InstanceType=vgn6i-m4.xlarge", "", 400,
             RefreshFixture("alibaba/error_not_sold.json")});
  http->Add({"GET", "Period=1&PriceUnit=Year", "", 200, RefreshFixture("alibaba/price_year1.json")});
  http->Add({"GET", "Period=3&PriceUnit=Year", "", 200, RefreshFixture("alibaba/price_year3.json")});
  http->Add({"GET", "SpotStrategy=SpotAsPriceGo", "", 200,
             RefreshFixture("alibaba/price_spot.json")});
  http->Add({"GET", ali, "", 200, RefreshFixture("alibaba/price_hour.json")});

  http->Add({"POST", "Action=DescribeZoneInstanceConfigInfos", "", 200,
             RefreshFixture("tencent/zones.json")});
  http->Add({"POST", "Action=DescribeImages", "", 200, RefreshFixture("tencent/images.json")});
  http->Add({"POST", "Action=InquiryPriceRunInstances", "\"Period\":12", 200,
             RefreshFixture("tencent/inquiry_prepaid12.json")});
  http->Add({"POST", "Action=InquiryPriceRunInstances", "\"Period\":36", 200,
             RefreshFixture("tencent/inquiry_prepaid36.json")});
  http->Add({"POST", "Action=InquiryPriceRunInstances", "SPOTPAID", 200,
             RefreshFixture("tencent/inquiry_spot.json")});
  http->Add({"POST", "Action=InquiryPriceRunInstances", "POSTPAID_BY_HOUR", 200,
             RefreshFixture("tencent/inquiry_postpaid.json")});
}

CatalogFiles RefreshCatalogFiles() {
  CatalogFiles files = FixtureFiles();
  const std::string header =
      "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,cpu,arch,"
      "network_gbps,local_disk_gb,local_disk_type,region,ondemand,spot,reserved_1y,reserved_3y,"
      "currency,source,as_of,notes\n";
  files["instances/azure.csv"] =
      header +
      "azure,Standard_NC24ads_A100_v4,NCads A100 v4,A100 80G,1,,24,220,,x86_64,,0,,eastus,"
      "3.67,,,,USD,https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
      "nca100v4-series,2025-01-01,\n";
  files["instances/tencent.csv"] =
      header +
      "tencent,GN7.2XLARGE32,GN7,T4,1,,8,32,,x86_64,3,0,,ap-guangzhou,,,,,,"
      "https://cloud.tencent.com/document/product/560/19701,2026-01-01,\n";
  return files;
}

refresh::RefreshEnvironment TestEnvironment(refresh::HttpClient* http,
                                            std::map<std::string, std::string> env,
                                            std::vector<double>* sleeps) {
  refresh::RefreshEnvironment e;
  e.http = http;
  e.credentials.home = "";  // no credential files
  e.credentials.getenv = [env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  e.now_seconds = [] { return std::int64_t{1795478400}; };  // 2026-11-24 00:00:00 UTC
  e.sleep = [sleeps](double s) {
    if (sleeps) sleeps->push_back(s);
  };
  return e;
}

std::map<std::string, std::string> AllCredentials() {
  return {{"AWS_ACCESS_KEY_ID", "AKIDTEST"},
          {"AWS_SECRET_ACCESS_KEY", "aws-secret-never-logged"},
          {"GOOGLE_API_KEY", "gcp-key-never-logged"},
          {"ALIBABA_CLOUD_ACCESS_KEY_ID", "LTAITEST"},
          {"ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ali-secret-never-logged"},
          {"TENCENTCLOUD_SECRET_ID", "AKIDTENCENT"},
          {"TENCENTCLOUD_SECRET_KEY", "tencent-secret-never-logged"}};
}

}  // namespace cloudfit::testing
