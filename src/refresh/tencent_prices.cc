// Tencent Cloud: CVM InquiryPriceRunInstances (API 3.0, version 2017-03-12), signed with
// TC3-HMAC-SHA256. Per region: DescribeZoneInstanceConfigInfos says in which zone each
// instance type is sold, DescribeImages gives a public image (the price API needs one; public
// images cost nothing), then one inquiry per type and mode: pay-as-you-go (POSTPAID_BY_HOUR),
// spot (SPOTPAID) and prepaid for 12 and 36 months (spread over the term's hours). The answer
// does not name its currency: it is the account site's (CNY on cloud.tencent.com, USD on
// tencentcloud.com), given by RefreshOptions::tencent_currency.
// https://www.tencentcloud.com/document/api/213/15726 (InquiryPriceRunInstances)
// https://www.tencentcloud.com/document/api/213/33224 (signature v3)
#include <map>
#include <set>

#include <fmt/format.h>

#include "refresh/json_reader.h"
#include "refresh/provider.h"
#include "refresh/signing.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

constexpr const char* kEndpoint = "https://cvm.tencentcloudapi.com/";
constexpr const char* kVersion = "2017-03-12";
constexpr int kThrottleRetries = 5;

struct Inquiry {
  PricingMode mode;
  nlohmann::json extra;
  double hours;  // the price covers this many hours (1: a unit price per hour)
};

std::vector<Inquiry> Inquiries() {
  return {
      {PricingMode::kOnDemand, {{"InstanceChargeType", "POSTPAID_BY_HOUR"}}, 1},
      {PricingMode::kSpot,
       {{"InstanceChargeType", "SPOTPAID"},
        {"InstanceMarketOptions",
         {{"MarketType", "spot"}, {"SpotOptions", {{"MaxPrice", "1000"}}}}}},
       1},
      {PricingMode::kReserved1y,
       {{"InstanceChargeType", "PREPAID"}, {"InstanceChargePrepaid", {{"Period", 12}}}},
       kHoursPerYear},
      {PricingMode::kReserved3y,
       {{"InstanceChargeType", "PREPAID"}, {"InstanceChargePrepaid", {{"Period", 36}}}},
       3 * kHoursPerYear},
  };
}

// Error codes that mean the type is not sold like this in this zone: skipped, not a failure.
bool NotSoldCode(const std::string& code) {
  for (const char* prefix : {"InvalidInstanceType", "InvalidParameterValue.InstanceType",
                             "ResourceInsufficient", "ResourcesSoldOut", "InvalidZone",
                             "InvalidParameterValue.Zone", "UnsupportedOperation",
                             "InvalidParameterValue.InvalidInstanceType",
                             "InvalidParameterCombination", "ResourceNotFound"}) {
    if (StartsWith(code, prefix)) return true;
  }
  return false;
}

class TencentRefresher : public ProviderRefresher {
 public:
  std::string name() const override { return "tencent"; }

  Status Refresh(const ProviderContext& ctx, ProviderResult* out) override {
    out->report.source = std::string(kEndpoint) + " (InquiryPriceRunInstances)";
    if (!ctx.replaying) {
      std::string where;
      Status s = FindTencentCredentials(ctx.credentials, &credentials_, &where);
      if (!s.ok()) return s;
      ctx.Progress("  tencent: keys from " + where);
    }
    if (ctx.regions.empty()) {
      return Status::InvalidArgument("tencent: prices are asked per region; name the regions "
                                     "with --regions (the catalog lists none)");
    }
    std::set<std::string> priced;
    for (const std::string& region : ctx.regions) {
      std::map<std::string, std::string> zones;  // type -> a zone that sells it
      Status s = SellingZones(ctx, region, &zones);
      if (!s.ok()) return s;
      std::string image;
      s = PublicImage(ctx, region, &image);
      if (!s.ok()) return s;
      int priced_here = 0;
      for (const InstanceType* t : ctx.types) {
        auto zone = zones.find(t->name);
        if (zone == zones.end()) {
          ++out->report.skipped["type not sold in the region"];
          continue;
        }
        RefreshedOffer offer;
        offer.instance_type = t->name;
        offer.region = region;
        offer.currency = ctx.tencent_currency;
        offer.source = std::string(kEndpoint) + "?Action=InquiryPriceRunInstances";
        offer.notes = fmt::format("Tencent InquiryPriceRunInstances in {}; reserved = prepaid "
                                  "price / hours of the term; currency of the account's site",
                                  zone->second);
        for (const Inquiry& inquiry : Inquiries()) {
          s = Inquire(ctx, region, zone->second, image, *t, inquiry, &offer, &out->report);
          if (!s.ok()) return s;
        }
        if (!offer.any_price()) continue;
        ++priced_here;
        priced.insert(t->name);
        ++out->report.offers;
        ++out->report.priced_offers;
        out->offers.push_back(std::move(offer));
      }
      ctx.Progress(fmt::format("  tencent {}: {} of {} types priced", region, priced_here,
                               ctx.types.size()));
    }
    out->report.types_priced = static_cast<int>(priced.size());
    return Status::OK();
  }

 private:
  // Calls `action` in `region`; `*not_sold` (when given) receives a not-sold error code
  // instead of failing.
  Status Call(const ProviderContext& ctx, const std::string& action, const std::string& region,
              const nlohmann::json& body, nlohmann::json* response_json, JsonReader* reader,
              std::string* not_sold, int* fetched_days) {
    HttpRequest request;
    request.url = kEndpoint;
    request.method = "POST";
    request.body = body.dump();
    request.shown_url = fmt::format("{}?Action={}&Region={}", kEndpoint, action, region);
    request.replay_key = "POST " + request.shown_url + " " + request.body;
    for (int attempt = 0;; ++attempt) {
      request.headers.clear();
      if (!ctx.replaying) {
        SignTencentTc3(credentials_, "cvm", action, kVersion, region, ctx.now_seconds(),
                       &request);
      }
      HttpResponse response;
      Status s = FetchOk(ctx.http, "tencent", request, &response);
      if (!s.ok()) return s;
      *reader = JsonReader("tencent", "POST " + request.display_url());
      s = reader->Parse(response.body, response_json);
      if (!s.ok()) return s;
      *fetched_days = response.fetched_days;
      const nlohmann::json* r = reader->Object(*response_json, "Response", "");
      if (!r) return reader->status();
      // API 3.0 answers errors with HTTP 200 and Response.Error {Code, Message}.
      if (auto error = r->find("Error"); error != r->end() && error->is_object()) {
        std::string code = error->value("Code", "");
        if (code == "RequestLimitExceeded" && attempt < kThrottleRetries) {
          if (ctx.sleep) ctx.sleep(1 << attempt);
          continue;
        }
        if (not_sold != nullptr && NotSoldCode(code)) {
          *not_sold = code;
          return Status::OK();
        }
        return Status::IOError(fmt::format("tencent: POST {}: {}: {}", request.display_url(),
                                           code, error->value("Message", "")));
      }
      return Status::OK();
    }
  }

  Status SellingZones(const ProviderContext& ctx, const std::string& region,
                      std::map<std::string, std::string>* zones) {
    nlohmann::json body = {
        {"Filters", {{{"Name", "instance-charge-type"}, {"Values", {"POSTPAID_BY_HOUR"}}}}}};
    nlohmann::json json;
    JsonReader reader("tencent", "");
    int fetched = 0;
    Status s = Call(ctx, "DescribeZoneInstanceConfigInfos", region, body, &json, &reader,
                    nullptr, &fetched);
    if (!s.ok()) return s;
    const nlohmann::json* set = reader.Array(json["Response"], "InstanceTypeQuotaSet", "Response");
    if (!set) return reader.status();
    for (size_t i = 0; i < set->size(); ++i) {
      std::string path = PathIndex("Response.InstanceTypeQuotaSet", i);
      auto type = reader.String((*set)[i], "InstanceType", path);
      auto zone = reader.String((*set)[i], "Zone", path);
      if (!reader.ok()) return reader.status();
      if ((*set)[i].value("Status", "SELL") != "SELL") continue;
      zones->emplace(*type, *zone);  // the first selling zone, in the API's order
    }
    return Status::OK();
  }

  Status PublicImage(const ProviderContext& ctx, const std::string& region, std::string* image) {
    nlohmann::json body = {
        {"Filters", {{{"Name", "image-type"}, {"Values", {"PUBLIC_IMAGE"}}}}}, {"Limit", 1}};
    nlohmann::json json;
    JsonReader reader("tencent", "");
    int fetched = 0;
    Status s = Call(ctx, "DescribeImages", region, body, &json, &reader, nullptr, &fetched);
    if (!s.ok()) return s;
    const nlohmann::json* set = reader.Array(json["Response"], "ImageSet", "Response");
    if (!set) return reader.status();
    if (set->empty()) {
      reader.Fail("Response.ImageSet", "no public image in the region");
      return reader.status();
    }
    auto id = reader.String((*set)[0], "ImageId", "Response.ImageSet[0]");
    if (!id) return reader.status();
    *image = *id;
    return Status::OK();
  }

  Status Inquire(const ProviderContext& ctx, const std::string& region, const std::string& zone,
                 const std::string& image, const InstanceType& t, const Inquiry& inquiry,
                 RefreshedOffer* offer, ProviderRefreshReport* report) {
    nlohmann::json body = {{"Placement", {{"Zone", zone}}},
                           {"ImageId", image},
                           {"InstanceType", t.name},
                           {"InstanceCount", 1}};
    body.update(inquiry.extra);
    nlohmann::json json;
    JsonReader reader("tencent", "");
    std::string not_sold;
    int fetched = 0;
    Status s = Call(ctx, "InquiryPriceRunInstances", region, body, &json, &reader, &not_sold,
                    &fetched);
    if (!s.ok()) return s;
    if (!not_sold.empty()) {
      ++report->skipped[fmt::format("{} not offered ({})", PricingModeName(inquiry.mode),
                                    not_sold)];
      return Status::OK();
    }
    const nlohmann::json* price = reader.Object(json["Response"], "Price", "Response");
    const nlohmann::json* instance =
        price ? reader.Object(*price, "InstancePrice", "Response.Price") : nullptr;
    if (!instance) return reader.status();
    const char* path = "Response.Price.InstancePrice";
    // Hourly modes quote a unit price; prepaid ones the whole term's price after discount.
    std::optional<double> value = inquiry.hours == 1
                                      ? reader.Price(*instance, "UnitPriceDiscount", path)
                                      : reader.Price(*instance, "DiscountPrice", path);
    if (!value) return reader.status();
    offer->as_of_days = fetched;
    offer->Set(inquiry.mode, *value / inquiry.hours);
    return Status::OK();
  }

  TencentCredentials credentials_;
};

}  // namespace

std::unique_ptr<ProviderRefresher> NewTencentRefresher() {
  return std::make_unique<TencentRefresher>();
}

}  // namespace cloudfit::refresh
