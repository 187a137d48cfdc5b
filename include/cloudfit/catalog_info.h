// What a loaded catalog holds: counts per provider and region, and how old its prices are.
#ifndef CLOUDFIT_CATALOG_INFO_H_
#define CLOUDFIT_CATALOG_INFO_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"

namespace cloudfit {

// Prices older than this many days draw a warning: cloud prices move within a quarter.
inline constexpr int kStalePriceDays = 90;

struct ProviderSummary {
  std::string provider;
  int instance_types = 0;
  int gpu_instance_types = 0;
  int offers = 0;          // (type, region) rows
  int priced_offers = 0;   // rows with at least one known price
  int undated_offers = 0;  // priced rows whose source gives no date (as stale as can be)
  // Priced rows with a price that is the type's lowest over all the provider's regions, not the
  // region's own quote (RegionPrice::lowest_over_regions): a lower bound for that region.
  int lower_bound_offers = 0;
  std::map<std::string, int> offers_per_region;
  int oldest_as_of_days = 0;  // over dated priced rows; 0 when there are none
  int newest_as_of_days = 0;
  // Days from the oldest dated price to today; -1 when no priced row has a date.
  int age_days = -1;
  bool stale = false;  // a price older than kStalePriceDays, or one without a date
};

struct CatalogSummary {
  std::string origin;
  int accelerators = 0;
  int cpus = 0;
  int models = 0;
  std::vector<ProviderSummary> providers;
  int oldest_as_of_days = 0;  // over priced rows only
  int newest_as_of_days = 0;
  int today_days = 0;
  std::vector<std::string> warnings;  // stale or undated prices, one line per provider
};

CatalogSummary Summarize(const Catalog& catalog, int today_days);

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_INFO_H_
