// The refresh run with its surroundings made explicit, so tests can give it a local server or
// recorded answers, fixed credentials, a fixed clock and a sleep that does not wait.
#ifndef CLOUDFIT_REFRESH_REFRESH_H_
#define CLOUDFIT_REFRESH_REFRESH_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "cloudfit/catalog_refresh.h"
#include "refresh/credentials.h"
#include "refresh/http_client.h"

namespace cloudfit::refresh {

struct RefreshEnvironment {
  HttpClient* http = nullptr;
  bool replaying = false;
  CredentialSources credentials;
  std::function<std::int64_t()> now_seconds;
  std::function<void(double)> sleep;
  // Told which provider runs next (the recorder files its answers under that name).
  std::function<void(const std::string&)> on_provider;
  // Per provider, another address for its public price API (tests: a local server).
  std::map<std::string, std::string> base_urls;
};

Status RefreshWith(const Catalog& base, const RefreshOptions& options,
                   const RefreshEnvironment& environment, CatalogFiles* out,
                   RefreshReport* report);

// The checks on options that need no network: known providers, sane regions, currency.
Status ValidateRefreshOptions(const Catalog& base, const RefreshOptions& options);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_REFRESH_H_
