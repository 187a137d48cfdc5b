#include "refresh/provider.h"

#include <ctime>

#include "util/strings.h"

namespace cloudfit::refresh {

void ProviderContext::SetTypes(std::vector<const InstanceType*> provider_types) {
  types = std::move(provider_types);
  by_name_.clear();
  for (const InstanceType* t : types) by_name_[ToLower(t->name)] = t;
}

const InstanceType* ProviderContext::FindType(std::string_view name) const {
  // Offer files name types in lower case already; try the exact text before lowering it.
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) it = by_name_.find(ToLower(name));
  return it == by_name_.end() ? nullptr : it->second;
}

bool RefreshedOffer::any_price() const {
  for (const auto& p : per_hour) {
    if (p) return true;
  }
  return false;
}

std::string FormatUtcTime(std::int64_t unix_seconds, const char* format) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[64];
  size_t n = std::strftime(buffer, sizeof(buffer), format, &tm);
  return std::string(buffer, n);
}

}  // namespace cloudfit::refresh
