// Alibaba Cloud: ECS DescribePrice (OpenAPI, RPC style, version 2014-05-26), signed with the
// caller's AccessKey per Alibaba's documented RPC signature. Per region and instance type:
// pay-as-you-go (PriceUnit=Hour), spot (SpotStrategy=SpotAsPriceGo) and subscription for 1 and
// 3 years (PriceUnit=Year, Period=1|3, spread over the term's hours). The instance's own line
// (DetailInfo "instanceType") is used where the answer itemises, so the default system disk is
// not counted. Types not sold in a region are counted as skipped, not failures.
// https://www.alibabacloud.com/help/en/ecs/developer-reference/api-ecs-2014-05-26-describeprice
// https://www.alibabacloud.com/help/en/sdk/product-overview/rpc-mechanism
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>

#include "refresh/crypto.h"
#include "refresh/json_reader.h"
#include "refresh/provider.h"
#include "refresh/signing.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

constexpr int kThrottleRetries = 5;

struct Query {
  PricingMode mode;
  std::map<std::string, std::string> params;
  double hours = 1;  // the price covers this many hours
};

std::vector<Query> Queries() {
  return {
      {PricingMode::kOnDemand, {{"PriceUnit", "Hour"}}, 1},
      {PricingMode::kSpot, {{"PriceUnit", "Hour"}, {"SpotStrategy", "SpotAsPriceGo"}}, 1},
      {PricingMode::kReserved1y, {{"PriceUnit", "Year"}, {"Period", "1"}}, kHoursPerYear},
      {PricingMode::kReserved3y, {{"PriceUnit", "Year"}, {"Period", "3"}}, 3 * kHoursPerYear},
  };
}

// Error codes that mean "not sold here (or not like this)": skipped, not a failure.
bool NotSoldCode(const std::string& code) {
  for (const char* prefix : {"InvalidInstanceType", "PriceNotFound", "InvalidRegionId",
                             "InvalidSystemDiskCategory", "Invalid.InstanceType",
                             "InvalidParam.SpotStrategy", "OperationDenied",
                             "InvalidParameter.SpotStrategy", "InvalidPeriod",
                             "InvalidParameter.Period"}) {
    if (StartsWith(code, prefix)) return true;
  }
  return false;
}

std::string Nonce() {
  static thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", random(), random());
}

class AlibabaRefresher : public ProviderRefresher {
 public:
  std::string name() const override { return "alibaba"; }

  Status Refresh(const ProviderContext& ctx, ProviderResult* out) override {
    out->report.source = "https://ecs.<region>.aliyuncs.com/?Action=DescribePrice";
    AlibabaCredentials credentials;
    if (!ctx.replaying) {
      std::string where;
      Status s = FindAlibabaCredentials(ctx.credentials, &credentials, &where);
      if (!s.ok()) return s;
      ctx.Progress("  alibaba: AccessKey from " + where);
    }
    if (ctx.regions.empty()) {
      return Status::InvalidArgument("alibaba: DescribePrice is asked per region; name the "
                                     "regions with --regions (the catalog lists none)");
    }
    for (const std::string& region : ctx.regions) {
      int priced_here = 0;
      for (const InstanceType* t : ctx.types) {
        RefreshedOffer offer;
        offer.instance_type = t->name;
        offer.region = region;
        Status s = PriceType(ctx, credentials, region, *t, &offer, &out->report);
        if (!s.ok()) return s;
        if (!offer.any_price()) continue;
        ++priced_here;
        ++out->report.offers;
        ++out->report.priced_offers;
        out->offers.push_back(std::move(offer));
      }
      ctx.Progress(fmt::format("  alibaba {}: {} of {} types priced", region, priced_here,
                               ctx.types.size()));
    }
    std::set<std::string> priced;
    for (const RefreshedOffer& o : out->offers) priced.insert(o.instance_type);
    out->report.types_priced = static_cast<int>(priced.size());
    return Status::OK();
  }

 private:
  Status PriceType(const ProviderContext& ctx, const AlibabaCredentials& credentials,
                   const std::string& region, const InstanceType& t, RefreshedOffer* offer,
                   ProviderRefreshReport* report) {
    std::string endpoint = fmt::format("https://ecs.{}.aliyuncs.com/", region);
    for (const Query& q : Queries()) {
      std::map<std::string, std::string> params = q.params;
      params["Action"] = "DescribePrice";
      params["RegionId"] = region;
      params["ResourceType"] = "instance";
      params["InstanceType"] = t.name;
      HttpRequest request;
      request.shown_url = endpoint + "?" + CanonicalQuery(params);
      request.replay_key = "GET " + request.shown_url;
      HttpResponse response;
      for (int attempt = 0;; ++attempt) {
        std::map<std::string, std::string> signed_params = params;
        signed_params["Format"] = "JSON";
        signed_params["Version"] = "2014-05-26";
        signed_params["SignatureMethod"] = "HMAC-SHA1";
        signed_params["SignatureVersion"] = "1.0";
        signed_params["Timestamp"] = FormatUtcTime(ctx.now_seconds(), "%Y-%m-%dT%H:%M:%SZ");
        signed_params["SignatureNonce"] = Nonce();
        signed_params["AccessKeyId"] = credentials.access_key_id;
        if (!credentials.security_token.empty()) {
          signed_params["SecurityToken"] = credentials.security_token;
        }
        std::string signature =
            AlibabaRpcSignature("GET", signed_params, credentials.access_key_secret);
        request.url = ctx.replaying ? request.shown_url
                                    : endpoint + "?" + CanonicalQuery(signed_params) +
                                          "&Signature=" + PercentEncode(signature);
        Status s = ctx.http->Send(request, &response);
        if (!s.ok()) {
          return Status::IOError(fmt::format("alibaba: GET {}: {}", request.display_url(),
                                             s.message()));
        }
        if (response.ok()) break;
        // Errors come as JSON {"Code": ..., "Message": ...}.
        nlohmann::json error = nlohmann::json::parse(response.body, nullptr, false);
        std::string code = error.is_object() ? error.value("Code", "") : "";
        if (StartsWith(code, "Throttling") && attempt < kThrottleRetries) {
          if (ctx.sleep) ctx.sleep(1 << attempt);
          continue;
        }
        if (NotSoldCode(code)) {
          ++report->skipped[fmt::format("{} not offered ({})", PricingModeName(q.mode), code)];
          break;
        }
        return HttpStatusError("alibaba", request, response);
      }
      if (!response.ok()) continue;
      JsonReader reader("alibaba", "GET " + request.display_url());
      nlohmann::json json;
      Status s = reader.Parse(response.body, &json);
      if (!s.ok()) return s;
      const nlohmann::json* info = reader.Object(json, "PriceInfo", "");
      const nlohmann::json* price = info ? reader.Object(*info, "Price", "PriceInfo") : nullptr;
      if (!price) return reader.status();
      auto currency = reader.String(*price, "Currency", "PriceInfo.Price");
      std::optional<double> value;
      // The instance's own line when the answer itemises; the total otherwise.
      if (auto details = price->find("DetailInfos");
          details != price->end() && details->is_object() &&
          details->value("DetailInfo", nlohmann::json::array()).is_array()) {
        const nlohmann::json& lines = (*details)["DetailInfo"];
        for (size_t i = 0; i < lines.size(); ++i) {
          if (lines[i].is_object() && ToLower(lines[i].value("Resource", "")) == "instancetype") {
            value = reader.Price(lines[i], "TradePrice",
                                 PathIndex("PriceInfo.Price.DetailInfos.DetailInfo", i));
          }
        }
      }
      if (!value && reader.ok()) value = reader.Price(*price, "TradePrice", "PriceInfo.Price");
      if (!reader.ok()) return reader.status();
      if (offer->currency.empty()) {
        offer->currency = *currency;
        offer->as_of_days = response.fetched_days;
        offer->source = endpoint + "?Action=DescribePrice";
        offer->notes = "Alibaba ECS DescribePrice: instance only; spot = SpotAsPriceGo; "
                       "reserved = subscription price / hours of the term";
      } else if (offer->currency != *currency) {
        reader.Fail("PriceInfo.Price.Currency", fmt::format("'{}' where the {} price was in '{}'",
                                                            *currency, PricingModeName(q.mode),
                                                            offer->currency));
        return reader.status();
      }
      offer->Set(q.mode, *value / q.hours);
    }
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<ProviderRefresher> NewAlibabaRefresher() {
  return std::make_unique<AlibabaRefresher>();
}

}  // namespace cloudfit::refresh
