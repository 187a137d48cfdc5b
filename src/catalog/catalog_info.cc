#include "cloudfit/catalog_info.h"

#include <fmt/format.h>

#include <algorithm>

#include "util/date.h"

namespace cloudfit {

CatalogSummary Summarize(const Catalog& catalog, int today_days) {
  CatalogSummary summary;
  summary.origin = catalog.origin();
  summary.accelerators = static_cast<int>(catalog.accelerators().size());
  summary.cpus = static_cast<int>(catalog.cpus().size());
  summary.models = static_cast<int>(catalog.models().size());
  summary.today_days = today_days;
  std::map<std::string, ProviderSummary> by_provider;
  for (const InstanceType& t : catalog.instances()) {
    ProviderSummary& p = by_provider[t.provider];
    p.provider = t.provider;
    ++p.instance_types;
    if (t.has_gpu()) ++p.gpu_instance_types;
    for (const RegionPrice& r : t.regions) {
      ++p.offers;
      ++p.offers_per_region[r.region];
      if (!r.any_price()) continue;
      ++p.priced_offers;
      if (r.lowest_over_regions_modes != 0) ++p.lower_bound_offers;
      // Only priced rows say anything about how fresh the prices are.
      if (!r.as_of_known()) {
        ++p.undated_offers;
        continue;
      }
      if (p.oldest_as_of_days == 0 || r.as_of_days < p.oldest_as_of_days) {
        p.oldest_as_of_days = r.as_of_days;
      }
      p.newest_as_of_days = std::max(p.newest_as_of_days, r.as_of_days);
    }
  }
  for (auto& [name, p] : by_provider) {
    if (p.priced_offers == 0) {
      summary.warnings.push_back(fmt::format(
          "{}: no prices in the catalog; every {} offer is 'price unknown'", name, name));
    } else {
      if (p.oldest_as_of_days > 0) {
        p.age_days = today_days - p.oldest_as_of_days;
        if (p.age_days > kStalePriceDays) {
          p.stale = true;
          summary.warnings.push_back(fmt::format(
              "{}: prices as old as {} ({} days, over {}); refresh them with 'cloudfit catalog "
              "refresh'",
              name, FormatIsoDate(p.oldest_as_of_days), p.age_days, kStalePriceDays));
        }
        if (summary.oldest_as_of_days == 0 || p.oldest_as_of_days < summary.oldest_as_of_days) {
          summary.oldest_as_of_days = p.oldest_as_of_days;
        }
        summary.newest_as_of_days = std::max(summary.newest_as_of_days, p.newest_as_of_days);
      }
      if (p.undated_offers > 0) {
        p.stale = true;
        summary.warnings.push_back(fmt::format(
            "{}: {} of {} priced offers have no date (their source gives none): treat them as "
            "stale; refresh them with 'cloudfit catalog refresh'",
            name, p.undated_offers, p.priced_offers));
      }
    }
    if (p.lower_bound_offers > 0) {
      summary.warnings.push_back(fmt::format(
          "{}: {} of {} priced offers carry the type's lowest price over all {} regions, not the "
          "region's own (their source does not say which region): a lower bound for the region",
          name, p.lower_bound_offers, p.priced_offers, name));
    }
    summary.providers.push_back(std::move(p));
  }
  return summary;
}

}  // namespace cloudfit
