// Azure: the Retail Prices REST API (public, no account). One query per instance type,
// following the OData NextPageLink until it is empty. Linux only (Windows meters carry the
// licence); on-demand and spot from "Consumption" items, 1- and 3-year reservations from
// "Reservation" items, whose retailPrice is the whole term's price.
// https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices
#include <map>

#include <fmt/format.h>

#include "refresh/crypto.h"
#include "refresh/json_reader.h"
#include "refresh/provider.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

constexpr const char* kApi = "https://prices.azure.com/api/retail/prices";
// The preview version returns reservationTerm on every reservation item.
constexpr const char* kApiVersion = "2023-01-01-preview";
constexpr int kMaxPages = 200;  // one SKU has a few pages; more means a paging loop

std::string QueryUrl(const std::string& api, const std::string& sku) {
  std::string filter = fmt::format("serviceName eq 'Virtual Machines' and armSkuName eq '{}'", sku);
  return fmt::format("{}?api-version={}&$filter={}", api, kApiVersion, PercentEncode(filter));
}

// "https://prices.azure.com" of "https://prices.azure.com/api/retail/prices".
std::string SchemeAndHost(const std::string& url) {
  size_t start = url.find("://");
  size_t slash = url.find('/', start == std::string::npos ? 0 : start + 3);
  return url.substr(0, slash);
}

struct Collected {
  RefreshedOffer offer;
  bool seen = false;
};

class AzureRefresher : public ProviderRefresher {
 public:
  std::string name() const override { return "azure"; }

  Status Refresh(const ProviderContext& ctx, ProviderResult* out) override {
    api_ = ctx.base_url.empty() ? kApi : ctx.base_url;
    out->report.source = api_;
    for (const InstanceType* t : ctx.types) {
      std::map<std::string, Collected> by_region;
      Status s = FetchType(ctx, *t, &by_region, &out->report);
      if (!s.ok()) return s;
      bool priced = false;
      for (auto& [region, c] : by_region) {
        ++out->report.offers;
        if (c.offer.any_price()) {
          ++out->report.priced_offers;
          priced = true;
        }
        out->offers.push_back(std::move(c.offer));
      }
      if (priced) ++out->report.types_priced;
      if (by_region.empty()) ++out->report.skipped["type with no Linux price in the asked regions"];
    }
    return Status::OK();
  }

 private:
  Status FetchType(const ProviderContext& ctx, const InstanceType& t,
                   std::map<std::string, Collected>* by_region, ProviderRefreshReport* report) {
    std::string url = QueryUrl(api_, t.name);
    std::string first_url = url;
    for (int page = 0; !url.empty(); ++page) {
      if (page >= kMaxPages) {
        return Status::Corruption(fmt::format("azure: {}: more than {} pages of prices for {}; "
                                              "is NextPageLink looping?",
                                              first_url, kMaxPages, t.name));
      }
      HttpRequest request;
      request.url = url;
      HttpResponse response;
      Status s = FetchOk(ctx.http, "azure", request, &response);
      if (!s.ok()) return s;
      JsonReader reader("azure", "GET " + url);
      nlohmann::json page_json;
      s = reader.Parse(response.body, &page_json);
      if (!s.ok()) return s;
      const nlohmann::json* items = reader.Array(page_json, "Items", "");
      if (!items) return reader.status();
      for (size_t i = 0; i < items->size(); ++i) {
        ReadItem(ctx, t, (*items)[i], PathIndex("Items", i), &reader, first_url,
                 response.fetched_days, by_region, report);
        if (!reader.ok()) return reader.status();
      }
      url.clear();
      if (auto next = page_json.find("NextPageLink");
          next != page_json.end() && next->is_string()) {
        url = next->get<std::string>();
        // Follow only links back to the same API: a changed host is a changed API. (The
        // API writes its host with the port, https://prices.azure.com:443/api/...)
        if (!url.empty() && !StartsWith(url, SchemeAndHost(api_))) {
          return Status::Corruption(fmt::format("azure: {}: NextPageLink '{}' leaves {}",
                                                first_url, url, SchemeAndHost(api_)));
        }
      }
      ctx.Progress(fmt::format("  azure {}: page {} ({} items)", t.name, page + 1, items->size()));
    }
    return Status::OK();
  }

  std::string api_;

  static void ReadItem(const ProviderContext& ctx, const InstanceType& t, const nlohmann::json& item,
                       const std::string& path, JsonReader* reader, const std::string& source,
                       int fetched_days, std::map<std::string, Collected>* by_region,
                       ProviderRefreshReport* report) {
    auto sku = reader->String(item, "armSkuName", path);
    auto region = reader->String(item, "armRegionName", path);
    auto type = reader->String(item, "type", path);
    auto product = reader->String(item, "productName", path);
    auto sku_name = reader->String(item, "skuName", path);
    auto unit = reader->String(item, "unitOfMeasure", path);
    auto currency = reader->String(item, "currencyCode", path);
    if (!reader->ok()) return;
    auto skip = [&](const std::string& why) { ++report->skipped[why]; };
    if (ToLower(*sku) != ToLower(t.name)) return skip("item for another SKU");
    if (!ctx.WantsRegion(*region)) return skip("region not asked for");
    if (product->find("Windows") != std::string::npos) return skip("Windows meter");
    if (sku_name->find("Low Priority") != std::string::npos) return skip("low-priority meter");
    if (auto primary = item.find("isPrimaryMeterRegion");
        primary != item.end() && primary->is_boolean() && !primary->get<bool>()) {
      return skip("non-primary meter region");
    }
    if (*unit != "1 Hour") return skip("unit '" + *unit + "', not '1 Hour'");

    PricingMode mode;
    double divisor = 1;
    if (*type == "Consumption") {
      mode = EndsWith(*sku_name, " Spot") ? PricingMode::kSpot : PricingMode::kOnDemand;
    } else if (*type == "Reservation") {
      auto term = reader->String(item, "reservationTerm", path);
      if (!term) return;
      if (*term == "1 Year") {
        mode = PricingMode::kReserved1y;
        divisor = kHoursPerYear;
      } else if (*term == "3 Years") {
        mode = PricingMode::kReserved3y;
        divisor = 3 * kHoursPerYear;
      } else {
        return skip("reservation term '" + *term + "'");
      }
    } else {
      return skip("price type '" + *type + "'");
    }
    auto price = reader->Price(item, "retailPrice", path);
    if (!price) return;
    Collected& c = (*by_region)[*region];
    if (!c.seen) {
      c.seen = true;
      c.offer.instance_type = t.name;
      c.offer.region = *region;
      c.offer.currency = *currency;
      c.offer.as_of_days = fetched_days;
      c.offer.source = source;
      c.offer.notes = "Azure Retail Prices API, Linux; reserved = term price / hours of the term";
    } else if (c.offer.currency != *currency) {
      reader->Fail(PathField(path, "currencyCode"),
                   fmt::format("'{}' where earlier items of {} in {} were '{}'", *currency, t.name,
                               *region, c.offer.currency));
      return;
    }
    std::optional<double>& slot = c.offer.per_hour[static_cast<int>(mode)];
    if (slot) skip("second meter for the same mode (lowest kept)");
    double hourly = *price / divisor;
    slot = slot ? std::min(*slot, hourly) : hourly;
  }
};

}  // namespace

std::unique_ptr<ProviderRefresher> NewAzureRefresher() { return std::make_unique<AzureRefresher>(); }

}  // namespace cloudfit::refresh
