// `cloudfit catalog refresh`: current prices from each provider's own price source, merged into
// a new catalog. Providers: Azure (Retail Prices API, public), AWS (Price List bulk offer files,
// public; spot through DescribeSpotPriceHistory with credentials), GCP (Cloud Billing Catalog
// API, API key), Alibaba Cloud (ECS DescribePrice, AccessKey) and Tencent Cloud (CVM
// InquiryPriceRunInstances, SecretId/SecretKey). See docs/catalog-refresh.md.
//
// Refresh reprices the instance types the catalog already describes (their shapes are curated
// data); types a provider sells that the catalog lacks are counted, not invented. Every
// refreshed row carries the URL it came from and the day the provider served it as `as_of`.
// One provider failing never stops the others; a failed provider's rows stay as they were.
#ifndef CLOUDFIT_CATALOG_REFRESH_H_
#define CLOUDFIT_CATALOG_REFRESH_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct RefreshOptions {
  std::vector<std::string> providers;  // empty: every one of RefreshProviders()
  // Regions to price. Empty: the regions the catalog already lists for each provider;
  // {"all"}: every region the provider answers for.
  std::vector<std::string> regions;
  std::string from_dir;  // replay responses saved earlier instead of fetching
  std::string save_dir;  // keep every response here (for --from-dir elsewhere)
  // Tencent's price API does not name its currency: CNY on the China site, USD on the
  // international one.
  std::string tencent_currency = "CNY";
  std::function<void(const std::string&)> progress;  // one line at a time (stderr)
};

struct ProviderRefreshReport {
  std::string provider;
  enum class Outcome { kRefreshed, kSkipped, kFailed } outcome = Outcome::kSkipped;
  std::string message;  // why it was skipped or failed
  std::string source;   // the price API
  int types_in_catalog = 0;
  int types_priced = 0;
  int offers = 0;         // (type, region) rows the refresh produced
  int priced_offers = 0;  // of those, with at least one price
  std::map<std::string, int> skipped;  // reason -> count
  std::vector<std::string> notes;      // e.g. spot not fetched, and why
};

struct RefreshReport {
  std::vector<ProviderRefreshReport> providers;
  bool any_refreshed() const;
  bool any_failed() const;
};

// "aws", "azure", "gcp", "alibaba", "tencent".
const std::vector<std::string>& RefreshProviders();

// Fetches (or replays) and merges into a copy of `base`'s files. Fails (and fills nothing)
// when the options are bad or no provider could be refreshed; otherwise `out` holds the new
// catalog, checked by loading it, and `report` says what each provider did.
Status RefreshCatalog(const Catalog& base, const RefreshOptions& options, CatalogFiles* out,
                      RefreshReport* report);

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_REFRESH_H_
