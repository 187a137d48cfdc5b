// AWS: the Price List bulk API (public, no account). The EC2 region index names each region's
// current offer file; each file is streamed in its CSV form and only the rows cloudfit prices
// are kept: Linux, shared tenancy, no pre-installed software, on-demand and standard
// no-upfront reservations for 1 and 3 years. Spot prices come from EC2's
// DescribeSpotPriceHistory (the current price per zone, lowest kept), signed with SigV4, and
// only when AWS credentials are configured.
// https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-the-aws-price-list-bulk-api.html
// https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DescribeSpotPriceHistory.html
#include <map>
#include <set>

#include <fmt/format.h>

#include "refresh/aws_offer_file.h"
#include "refresh/crypto.h"
#include "refresh/json_reader.h"
#include "refresh/provider.h"
#include "refresh/signing.h"
#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

constexpr const char* kPricingHost = "https://pricing.us-east-1.amazonaws.com";
constexpr const char* kRegionIndex = "/offers/v1.0/aws/AmazonEC2/current/region_index.json";
constexpr int kMaxSpotPages = 100;

const std::vector<std::string>& RequiredColumns() {
  static const std::vector<std::string> columns = {
      "TermType",       "PricePerUnit",        "Currency",       "Unit",
      "Instance Type",  "Operating System",    "Tenancy",        "Pre Installed S/W",
      "CapacityStatus", "LeaseContractLength", "PurchaseOption", "OfferingClass",
      "Product Family"};
  return columns;
}

std::string AmzDate(std::int64_t unix_seconds) {
  return FormatUtcTime(unix_seconds, "%Y%m%dT%H%M%SZ");
}

// The text between <tag> and </tag> from `from`, or "" (advancing `from` past it).
std::string XmlElement(std::string_view xml, std::string_view tag, size_t* from) {
  std::string open = fmt::format("<{}>", tag);
  std::string close = fmt::format("</{}>", tag);
  size_t start = xml.find(open, *from);
  if (start == std::string_view::npos) return "";
  start += open.size();
  size_t end = xml.find(close, start);
  if (end == std::string_view::npos) return "";
  *from = end + close.size();
  return std::string(xml.substr(start, end - start));
}

class AwsRefresher : public ProviderRefresher {
 public:
  std::string name() const override { return "aws"; }

  Status Refresh(const ProviderContext& ctx, ProviderResult* out) override {
    host_ = ctx.base_url.empty() ? kPricingHost : ctx.base_url;
    out->report.source = host_ + kRegionIndex;
    std::map<std::string, std::string> region_files;
    Status s = ReadRegionIndex(ctx, &region_files);
    if (!s.ok()) return s;

    AwsCredentials credentials;
    std::string where;
    Status found = FindAwsCredentials(ctx.credentials, &credentials, &where);
    bool spot = found.ok() || ctx.replaying;
    if (!found.ok() && found.code() != Status::Code::kNotFound) return found;
    if (!spot) {
      out->report.notes.push_back("spot prices not fetched: " + found.message() +
                                  "; spot cells of refreshed rows are left empty");
    } else if (!ctx.replaying) {
      ctx.Progress("  aws: spot prices with credentials from " + where);
    }

    for (const std::string& region : ctx.regions) {
      if (!region_files.count(region)) ++out->report.skipped["region not in the EC2 region index"];
    }
    std::set<std::string> priced_types;
    for (const auto& [region, file] : region_files) {
      if (!ctx.WantsRegion(region)) continue;
      std::map<std::string, RefreshedOffer> offers;
      s = ReadOfferFile(ctx, region, file, &offers, &out->report);
      if (!s.ok()) return s;
      if (spot && !offers.empty()) {
        Status spot_status = ReadSpotPrices(ctx, credentials, region, &offers);
        if (!spot_status.ok()) {
          out->report.notes.push_back(fmt::format("spot prices for {} not refreshed: {}", region,
                                                  spot_status.message()));
        }
      }
      for (auto& [type, offer] : offers) {
        ++out->report.offers;
        if (offer.any_price()) {
          ++out->report.priced_offers;
          priced_types.insert(type);
        }
        out->offers.push_back(std::move(offer));
      }
    }
    out->report.types_priced = static_cast<int>(priced_types.size());
    for (const InstanceType* t : ctx.types) {
      if (!priced_types.count(t->name)) ++out->report.skipped["type with no Linux price in the asked regions"];
    }
    return Status::OK();
  }

 private:
  std::string host_;

  Status ReadRegionIndex(const ProviderContext& ctx, std::map<std::string, std::string>* files) {
    HttpRequest request;
    request.url = host_ + kRegionIndex;
    HttpResponse response;
    Status s = FetchOk(ctx.http, "aws", request, &response);
    if (!s.ok()) return s;
    JsonReader reader("aws", "GET " + request.url);
    nlohmann::json index;
    s = reader.Parse(response.body, &index);
    if (!s.ok()) return s;
    const nlohmann::json* regions = reader.Object(index, "regions", "");
    if (!regions) return reader.status();
    for (const auto& [code, entry] : regions->items()) {
      std::string path = PathField("regions", code);
      auto url = reader.String(entry, "currentVersionUrl", path);
      if (!url) return reader.status();
      if (!StartsWith(*url, "/offers/") || !EndsWith(*url, ".json")) {
        reader.Fail(PathField(path, "currentVersionUrl"),
                    fmt::format("'{}' is not an /offers/.../index.json path", *url));
        return reader.status();
      }
      // The same offer in CSV: line by line, so it streams with bounded memory.
      (*files)[code] = host_ + url->substr(0, url->size() - 5) + ".csv";
    }
    if (files->empty()) {
      reader.Fail("regions", "no region in the index");
      return reader.status();
    }
    return Status::OK();
  }

  Status ReadOfferFile(const ProviderContext& ctx, const std::string& region,
                       const std::string& url, std::map<std::string, RefreshedOffer>* offers,
                       ProviderRefreshReport* report) {
    ctx.Progress(fmt::format("  aws {}: streaming {}", region, url));
    HttpRequest request;
    request.url = url;
    AwsOfferFileReader reader("aws: GET " + url, RequiredColumns());
    int term = -1, price = -1, currency = -1, unit = -1, type = -1, os = -1, tenancy = -1,
        software = -1, capacity = -1, lease = -1, purchase = -1, offering = -1, family = -1,
        license = -1, operation = -1;
    std::set<std::string> unknown_types;
    reader.set_row_handler([&](const std::vector<std::string>& row, long line) {
      if (term < 0) {
        term = reader.Column("TermType");
        price = reader.Column("PricePerUnit");
        currency = reader.Column("Currency");
        unit = reader.Column("Unit");
        type = reader.Column("Instance Type");
        os = reader.Column("Operating System");
        tenancy = reader.Column("Tenancy");
        software = reader.Column("Pre Installed S/W");
        capacity = reader.Column("CapacityStatus");
        lease = reader.Column("LeaseContractLength");
        purchase = reader.Column("PurchaseOption");
        offering = reader.Column("OfferingClass");
        family = reader.Column("Product Family");
        license = reader.Column("License Model");  // absent from older files
        operation = reader.Column("operation");
      }
      auto at = [&](int column) -> const std::string& { return row[static_cast<size_t>(column)]; };
      if (!StartsWith(at(family), "Compute Instance")) return;
      if (at(os) != "Linux" || at(tenancy) != "Shared" || at(software) != "NA" ||
          at(capacity) != "Used" || at(unit) != "Hrs") {
        return;
      }
      if (license >= 0 && at(license) != "No License required") return;
      if (operation >= 0 && at(operation) != "RunInstances") return;
      PricingMode mode;
      if (at(term) == "OnDemand") {
        mode = PricingMode::kOnDemand;
      } else if (at(term) == "Reserved" && at(purchase) == "No Upfront" &&
                 at(offering) == "standard" && (at(lease) == "1yr" || at(lease) == "3yr")) {
        mode = at(lease) == "1yr" ? PricingMode::kReserved1y : PricingMode::kReserved3y;
      } else {
        return;
      }
      const std::string& name = at(type);
      if (ctx.FindType(name) == nullptr) {
        unknown_types.insert(name);
        return;
      }
      double value = 0;
      if (!ParseDouble(at(price), &value) || value <= 0) {
        reader.Fail(line, fmt::format("PricePerUnit '{}' for {} ({}) is not a price (a price "
                                      "must be above 0)",
                                      at(price), name, PricingModeName(mode)));
        return;
      }
      RefreshedOffer& offer = (*offers)[name];
      if (offer.instance_type.empty()) {
        offer.instance_type = name;
        offer.region = region;
        offer.currency = at(currency);
        offer.source = url;
      } else if (offer.currency != at(currency)) {
        reader.Fail(line, fmt::format("Currency '{}' for {} where other rows say '{}'",
                                      at(currency), name, offer.currency));
        return;
      }
      std::optional<double>& slot = offer.per_hour[static_cast<int>(mode)];
      slot = slot ? std::min(*slot, value) : value;
    });
    HttpResponse response;
    Status s = ctx.http->Stream(request, [&](std::string_view chunk) { return reader.Feed(chunk); },
                                &response);
    if (!reader.status().ok()) return reader.status();
    if (!s.ok()) return Status::IOError(fmt::format("aws: GET {}: {}", url, s.message()));
    if (!response.ok()) return HttpStatusError("aws", request, response);
    s = reader.Finish();
    if (!s.ok()) return s;
    int fetched_days = response.fetched_days;
    std::string published = reader.publication_date().substr(0, 10);
    for (auto& [name, offer] : *offers) {
      offer.as_of_days = fetched_days;
      offer.notes = fmt::format("AWS Price List offer file published {}; Linux, shared tenancy; "
                                "reserved = standard, no upfront",
                                published.empty() ? "(date not stated)" : published);
    }
    if (!unknown_types.empty()) {
      report->skipped["instance type not in the catalog (shape unknown; add its row to "
                      "data/instances/aws.csv)"] += static_cast<int>(unknown_types.size());
    }
    ctx.Progress(fmt::format("  aws {}: {} price rows read, {} catalog types priced", region,
                             reader.data_rows(), offers->size()));
    return Status::OK();
  }

  Status ReadSpotPrices(const ProviderContext& ctx, const AwsCredentials& credentials,
                        const std::string& region, std::map<std::string, RefreshedOffer>* offers) {
    std::string endpoint = fmt::format("https://ec2.{}.amazonaws.com/", region);
    std::map<std::string, std::string> params = {{"Action", "DescribeSpotPriceHistory"},
                                                 {"Version", "2016-11-15"},
                                                 {"ProductDescription.1", "Linux/UNIX"}};
    int n = 0;
    for (const auto& [type, offer] : *offers) params[fmt::format("InstanceType.{}", ++n)] = type;
    std::string token;
    std::map<std::string, double> lowest;
    for (int page = 0;; ++page) {
      if (page >= kMaxSpotPages) return Status::Corruption("more than 100 pages of spot prices");
      std::map<std::string, std::string> query = params;
      if (!token.empty()) query["NextToken"] = token;
      HttpRequest request;
      // The key leaves out the start time, which changes every run.
      request.replay_key = "GET " + endpoint + "?" + CanonicalQuery(query);
      std::int64_t now = ctx.now_seconds();
      // StartTime = now asks for the price in force now in every zone.
      query["StartTime"] = FormatUtcTime(now, "%Y-%m-%dT%H:%M:%SZ");
      request.url = endpoint + "?" + CanonicalQuery(query);
      request.shown_url = endpoint + "?Action=DescribeSpotPriceHistory";
      if (!ctx.replaying) SignAwsV4(credentials, region, "ec2", AmzDate(now), &request);
      HttpResponse response;
      Status s = FetchOk(ctx.http, "aws", request, &response);
      if (!s.ok()) return s;
      const std::string& xml = response.body;
      if (xml.find("DescribeSpotPriceHistoryResponse") == std::string::npos) {
        return Status::Corruption(fmt::format("aws: GET {}: not a "
                                              "DescribeSpotPriceHistoryResponse",
                                              request.display_url()));
      }
      size_t from = 0;
      for (;;) {
        std::string item = XmlElement(xml, "item", &from);
        if (item.empty()) break;
        size_t at = 0;
        std::string type = XmlElement(item, "instanceType", &at);
        at = 0;
        std::string price_text = XmlElement(item, "spotPrice", &at);
        double price = 0;
        if (type.empty() || !ParseDouble(price_text, &price) || price <= 0) {
          return Status::Corruption(fmt::format(
              "aws: GET {}: spotPriceHistorySet item without an instanceType and a spotPrice "
              "above 0 ('{}', '{}')",
              request.display_url(), type, price_text));
        }
        auto [it, inserted] = lowest.emplace(type, price);
        if (!inserted) it->second = std::min(it->second, price);
      }
      from = 0;
      token = XmlElement(xml, "nextToken", &from);
      if (token.empty()) break;
    }
    for (auto& [type, offer] : *offers) {
      if (auto it = lowest.find(type); it != lowest.end()) {
        offer.Set(PricingMode::kSpot, it->second);
      }
    }
    if (!lowest.empty()) {
      for (auto& [type, offer] : *offers) offer.notes += "; spot = lowest zone's current price";
    }
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<ProviderRefresher> NewAwsRefresher() { return std::make_unique<AwsRefresher>(); }

}  // namespace cloudfit::refresh
