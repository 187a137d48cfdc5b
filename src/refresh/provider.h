// What every provider module implements: given the catalog's instance types of that provider,
// fetch their prices and return one offer per (type, region) with a summary. Each provider
// lives in its own file (azure_prices.cc, aws_prices.cc, ...) behind this interface.
#ifndef CLOUDFIT_REFRESH_PROVIDER_H_
#define CLOUDFIT_REFRESH_PROVIDER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cloudfit/catalog_refresh.h"
#include "cloudfit/instance.h"
#include "refresh/credentials.h"
#include "refresh/http_client.h"

namespace cloudfit::refresh {

struct ProviderContext {
  HttpClient* http = nullptr;
  // Where the provider's public price API lives; empty: its real address. Tests point it at
  // a local server.
  std::string base_url;
  std::vector<const InstanceType*> types;  // the catalog's types of this provider (SetTypes)
  std::set<std::string> regions;           // empty: every region the provider answers for
  bool replaying = false;  // answers come from --from-dir: nothing is signed, no keys needed
  CredentialSources credentials;
  std::string tencent_currency = "CNY";
  std::function<void(const std::string&)> progress;
  std::function<std::int64_t()> now_seconds;  // Unix time, for request signatures
  std::function<void(double)> sleep;          // waits between throttled API calls

  void SetTypes(std::vector<const InstanceType*> provider_types);
  // One of `types` by name, case-insensitively; nullptr when the catalog lacks it.
  const InstanceType* FindType(std::string_view name) const;
  bool WantsRegion(const std::string& region) const {
    return regions.empty() || regions.count(region) > 0;
  }
  void Progress(const std::string& line) const {
    if (progress) progress(line);
  }

 private:
  std::unordered_map<std::string, const InstanceType*> by_name_;  // lower-case name
};

struct RefreshedOffer {
  std::string instance_type;
  std::string region;
  std::array<std::optional<double>, kPricingModeCount> per_hour;
  std::string currency;
  int as_of_days = 0;
  std::string source;  // the price API URL
  std::string notes;

  void Set(PricingMode mode, double price) { per_hour[static_cast<int>(mode)] = price; }
  bool any_price() const;
};

struct ProviderResult {
  std::vector<RefreshedOffer> offers;
  ProviderRefreshReport report;
};

class ProviderRefresher {
 public:
  virtual ~ProviderRefresher() = default;
  virtual std::string name() const = 0;
  // NotFound: cannot run here (no credentials) -> the provider is skipped. Any other error:
  // the provider failed, with a message naming the URL and field.
  virtual Status Refresh(const ProviderContext& context, ProviderResult* out) = 0;
};

std::unique_ptr<ProviderRefresher> NewAzureRefresher();
std::unique_ptr<ProviderRefresher> NewAwsRefresher();
std::unique_ptr<ProviderRefresher> NewGcpRefresher();
std::unique_ptr<ProviderRefresher> NewAlibabaRefresher();
std::unique_ptr<ProviderRefresher> NewTencentRefresher();

// Unix time as strftime `format` in UTC ("%Y-%m-%dT%H:%M:%SZ").
std::string FormatUtcTime(std::int64_t unix_seconds, const char* format);

// Hours a reservation's total price is spread over: 365-day years, as the providers bill.
inline constexpr double kHoursPerYear = 8760;

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_PROVIDER_H_
