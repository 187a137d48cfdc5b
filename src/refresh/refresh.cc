// The refresh: each chosen provider in turn, its answers merged into a working copy of the
// catalog, the result checked by loading it. A provider that fails leaves its rows as they
// were and does not stop the others.
#include "refresh/refresh.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "catalog/import_merge.h"
#include "refresh/provider.h"
#include "refresh/saved_responses.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

const std::vector<std::string>& RefreshProviders() {
  static const std::vector<std::string> providers = {"aws", "azure", "gcp", "alibaba", "tencent"};
  return providers;
}

bool RefreshReport::any_refreshed() const {
  for (const auto& p : providers) {
    if (p.outcome == ProviderRefreshReport::Outcome::kRefreshed) return true;
  }
  return false;
}

bool RefreshReport::any_failed() const {
  for (const auto& p : providers) {
    if (p.outcome == ProviderRefreshReport::Outcome::kFailed) return true;
  }
  return false;
}

namespace refresh {

namespace {

std::unique_ptr<ProviderRefresher> NewRefresher(const std::string& provider) {
  if (provider == "aws") return NewAwsRefresher();
  if (provider == "azure") return NewAzureRefresher();
  if (provider == "gcp") return NewGcpRefresher();
  if (provider == "alibaba") return NewAlibabaRefresher();
  if (provider == "tencent") return NewTencentRefresher();
  return nullptr;
}

// Writes one provider's offers into the working catalog: every price cell of a refreshed row
// is replaced (a mode the refresh did not price becomes empty rather than keep an older price
// under the new date); regions the refresh did not answer keep their old rows and dates.
// Checks every offer before changing anything, so a failed merge leaves no half behind.
Status Merge(const std::string& provider, const std::vector<RefreshedOffer>& offers,
             WorkingCatalog* working) {
  for (const RefreshedOffer& offer : offers) {
    if (working->Find(provider, offer.instance_type) == nullptr) {
      return Status::Corruption(
          fmt::format("{}: refreshed a type the catalog lacks: {}", provider, offer.instance_type));
    }
    if (offer.region.empty() || offer.currency.empty() || offer.as_of_days <= 0) {
      return Status::Corruption(
          fmt::format("{}: the offer of {} in '{}' lacks its region, "
                      "currency or date",
                      provider, offer.instance_type, offer.region));
    }
  }
  for (const RefreshedOffer& offer : offers) {
    InstanceType* type = working->Find(provider, offer.instance_type);
    RegionPrice* row = nullptr;
    for (RegionPrice& r : type->regions) {
      if (r.region == offer.region) row = &r;
    }
    if (row == nullptr) {
      type->regions.push_back(RegionPrice{});
      row = &type->regions.back();
      row->region = offer.region;
    }
    row->per_hour = offer.per_hour;
    row->lowest_over_regions_modes = 0;  // the API quoted this region
    row->currency = offer.currency;
    row->as_of_days = offer.as_of_days;
    row->source = type->shape_source.empty() || type->shape_source == offer.source
                      ? offer.source
                      : type->shape_source + "|" + offer.source;
    row->notes = offer.notes;
  }
  return Status::OK();
}

}  // namespace

Status ValidateRefreshOptions(const Catalog& base, const RefreshOptions& options) {
  for (const std::string& p : options.providers) {
    const auto& known = RefreshProviders();
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      return Status::InvalidArgument(
          fmt::format("--provider: '{}' is not one of {}", Shown(p), Join(known, ", ")));
    }
  }
  for (const std::string& r : options.regions) {
    if (r.empty() || r.size() > 64 || r.find_first_of(" /?&#") != std::string::npos) {
      return Status::InvalidArgument(fmt::format("--region: '{}' is not a region id", Shown(r)));
    }
  }
  if (options.regions.size() > 1 &&
      std::find(options.regions.begin(), options.regions.end(), "all") != options.regions.end()) {
    return Status::InvalidArgument("--regions: 'all' stands alone");
  }
  if (!options.from_dir.empty() && !options.save_dir.empty()) {
    return Status::InvalidArgument(
        "--from-dir and --save-responses together: replayed answers "
        "are already saved");
  }
  if (options.tencent_currency != "CNY" && options.tencent_currency != "USD") {
    return Status::InvalidArgument(
        fmt::format("--tencent-currency: '{}' is not CNY (China "
                    "site) or USD (international site)",
                    options.tencent_currency));
  }
  if (!base.FindCurrency(options.tencent_currency)) {
    return Status::InvalidArgument(
        fmt::format("--tencent-currency: '{}' has no rate in "
                    "currency.csv",
                    options.tencent_currency));
  }
  return Status::OK();
}

Status RefreshWith(const Catalog& base, const RefreshOptions& options,
                   const RefreshEnvironment& environment, CatalogFiles* out,
                   RefreshReport* report) {
  Status s = ValidateRefreshOptions(base, options);
  if (!s.ok()) return s;
  *report = RefreshReport();
  auto progress = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  std::vector<std::string> providers =
      options.providers.empty() ? RefreshProviders() : options.providers;
  bool all_regions = options.regions.size() == 1 && options.regions[0] == "all";
  WorkingCatalog working(base);
  for (const std::string& provider : providers) {
    ProviderContext ctx;
    ctx.http = environment.http;
    if (auto it = environment.base_urls.find(provider); it != environment.base_urls.end()) {
      ctx.base_url = it->second;
    }
    ctx.replaying = environment.replaying;
    ctx.credentials = environment.credentials;
    ctx.tencent_currency = options.tencent_currency;
    ctx.progress = options.progress;
    ctx.now_seconds = environment.now_seconds;
    ctx.sleep = environment.sleep;
    std::vector<const InstanceType*> types;
    std::set<std::string> catalog_regions;
    for (const InstanceType& t : base.instances()) {
      if (t.provider != provider) continue;
      types.push_back(&t);
      for (const RegionPrice& r : t.regions) catalog_regions.insert(r.region);
    }
    ctx.SetTypes(std::move(types));
    if (!all_regions) {
      ctx.regions = options.regions.empty()
                        ? catalog_regions
                        : std::set<std::string>(options.regions.begin(), options.regions.end());
    }

    ProviderResult result;
    result.report.provider = provider;
    result.report.types_in_catalog = static_cast<int>(ctx.types.size());
    if (environment.on_provider) environment.on_provider(provider);
    progress(fmt::format("{}: {} instance types, {}", provider, ctx.types.size(),
                         ctx.regions.empty()
                             ? std::string("every region")
                             : fmt::format("{} regions ({})", ctx.regions.size(),
                                           Join({ctx.regions.begin(), ctx.regions.end()}, ", "))));
    Status fetched = ctx.types.empty()
                         ? Status::NotFound("the catalog has no instance types of " + provider)
                         : NewRefresher(provider)->Refresh(ctx, &result);
    if (fetched.ok()) fetched = Merge(provider, result.offers, &working);
    ProviderRefreshReport& r = result.report;
    if (fetched.ok()) {
      r.outcome = ProviderRefreshReport::Outcome::kRefreshed;
      progress(fmt::format("{}: {} offers priced", provider, r.priced_offers));
    } else if (fetched.code() == Status::Code::kNotFound) {
      r.outcome = ProviderRefreshReport::Outcome::kSkipped;
      r.message = fetched.message();
      progress(fmt::format("{}: skipped: {}", provider, r.message));
    } else {
      r.outcome = ProviderRefreshReport::Outcome::kFailed;
      r.message = fetched.message();
      progress(fmt::format("{}: FAILED: {}", provider, r.message));
    }
    report->providers.push_back(std::move(r));
  }
  if (!report->any_refreshed()) {
    std::vector<std::string> why;
    for (const auto& p : report->providers) why.push_back(p.provider + ": " + p.message);
    return Status::NotFound("no provider was refreshed; nothing written (" + Join(why, "; ") + ")");
  }
  return working.Finish(out);
}

}  // namespace refresh

Status RefreshCatalog(const Catalog& base, const RefreshOptions& options, CatalogFiles* out,
                      RefreshReport* report) {
  using namespace refresh;
  Status s = ValidateRefreshOptions(base, options);
  if (!s.ok()) return s;
  RefreshEnvironment environment;
  environment.credentials = CredentialSources::FromProcess();
  environment.now_seconds = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  environment.sleep = [](double seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  };
  std::unique_ptr<ReplayHttpClient> replay;
  std::unique_ptr<HttpClient> curl;
  std::unique_ptr<RetryingHttpClient> retrying;
  std::unique_ptr<RecordingHttpClient> recorder;
  if (!options.from_dir.empty()) {
    s = ReplayHttpClient::Open(options.from_dir, &replay);
    if (!s.ok()) return s;
    environment.http = replay.get();
    environment.replaying = true;
  } else {
    std::string why_not;
    curl = NewCurlHttpClient(HttpLimits(), &why_not);
    if (!curl) return Status::IOError("catalog refresh: " + why_not);
    retrying = std::make_unique<RetryingHttpClient>(curl.get(), RetryPolicy(), environment.sleep,
                                                    options.progress);
    environment.http = retrying.get();
    if (!options.save_dir.empty()) {
      recorder = std::make_unique<RecordingHttpClient>(retrying.get(), options.save_dir);
      environment.http = recorder.get();
      environment.on_provider = [&](const std::string& p) { recorder->set_provider(p); };
    }
  }
  return RefreshWith(base, options, environment, out, report);
}

}  // namespace cloudfit
