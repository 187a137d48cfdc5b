// Filtering and sorting the instance catalog across providers, in the spirit of
// amazon-ec2-instance-selector. One offer is one instance type in one region.
#ifndef CLOUDFIT_INSTANCE_QUERY_H_
#define CLOUDFIT_INSTANCE_QUERY_H_

#include <optional>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"

namespace cloudfit {

// An inclusive range; either end may be open.
struct Range {
  std::optional<double> min;
  std::optional<double> max;
  bool Contains(double value) const {
    return (!min || value >= *min) && (!max || value <= *max);
  }
  bool empty() const { return !min && !max; }
};

struct InstanceQuery {
  std::vector<std::string> providers;  // any of; empty = all
  std::vector<std::string> regions;
  std::vector<std::string> families;
  std::vector<std::string> gpus;  // GPU names or aliases, any of
  bool gpu_only = false;
  bool cpu_only = false;
  Range gpu_count;
  Range gpu_memory_gib;        // per GPU
  Range total_gpu_memory_gib;  // whole instance
  Range vcpus;
  Range memory_gib;
  Range memory_per_vcpu_gib;
  std::string arch;  // x86_64 or arm64; empty = any
  PricingMode pricing = PricingMode::kOnDemand;
  Range price_per_hour;      // in `currency`
  bool priced_only = false;  // drop offers whose price under `pricing` is unknown
  // Prices are shown in this currency; empty keeps each offer's own. Price ranges and sorting
  // compare in this currency, or in USD when it is empty.
  std::string currency;
  std::string sort_by = "price";  // see SortKeys()
  bool descending = false;
  // Keep only the first offer of each instance type after sorting (by price: its cheapest
  // region), so one type sold in many regions does not fill the list.
  bool one_per_type = false;
  size_t top = 0;  // 0 = all
};

struct Offer {
  const InstanceType* instance = nullptr;
  const RegionPrice* region = nullptr;
  std::optional<double> price_per_hour;  // under the query's pricing mode, in `currency`
  std::string currency;
};

// The columns offers can be sorted by.
const std::vector<std::string>& SortKeys();

// Checks the query (ranges, names, currency, sort key) and returns the matching offers,
// sorted; offers with an unknown price always sort last.
Status FindOffers(const Catalog& catalog, const InstanceQuery& query, std::vector<Offer>* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_INSTANCE_QUERY_H_
