#include "cloudfit/instance_query.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

Status CheckRange(const Range& range, std::string_view flag, double limit) {
  for (const auto& end : {range.min, range.max}) {
    if (end && (*end < 0 || *end > limit)) {
      return Status::InvalidArgument(fmt::format("--{}: {} is outside [0, {}]", flag, *end, limit));
    }
  }
  if (range.min && range.max && *range.min > *range.max) {
    return Status::InvalidArgument(
        fmt::format("--{}: the minimum {} is above the maximum {}", flag, *range.min, *range.max));
  }
  return Status::OK();
}

// A name from a list the user gave must exist in the catalog, or the query is a typo.
Status CheckNames(const std::vector<std::string>& wanted, const std::set<std::string>& known,
                  std::string_view flag) {
  for (const std::string& name : wanted) {
    if (known.count(ToLower(name))) continue;
    std::vector<std::string> candidates(known.begin(), known.end());
    return Status::InvalidArgument(fmt::format("--{}: unknown value '{}'{}", flag, Shown(name),
                                               DidYouMean(ClosestNames(name, candidates))));
  }
  return Status::OK();
}

bool AnyOf(const std::vector<std::string>& wanted, const std::string& value) {
  if (wanted.empty()) return true;
  std::string key = ToLower(value);
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return ToLower(w) == key; });
}

struct SortableOffer {
  Offer offer;
  std::optional<double> comparable_price;  // in the comparison currency
  // The --sort key, made once before sorting; its text views the catalog (or a literal).
  std::pair<double, std::string_view> key;
};

}  // namespace

const std::vector<std::string>& SortKeys() {
  // FindOffers' key_of follows this order.
  static const std::vector<std::string> keys = {
      "price",      "provider", "instance", "region",          "gpu",     "gpus",
      "gpu-memory", "vcpus",    "memory",   "memory-per-vcpu", "network", "family"};
  return keys;
}

Status FindOffers(const Catalog& catalog, const InstanceQuery& q, std::vector<Offer>* out) {
  out->clear();
  Status s;
  constexpr double kHuge = 1e7;
  for (auto [range, flag] :
       {std::pair{&q.gpu_count, "gpus"}, std::pair{&q.gpu_memory_gib, "gpu-memory"},
        std::pair{&q.total_gpu_memory_gib, "total-gpu-memory"}, std::pair{&q.vcpus, "vcpus"},
        std::pair{&q.memory_gib, "memory"}, std::pair{&q.memory_per_vcpu_gib, "memory-per-vcpu"},
        std::pair{&q.price_per_hour, "price"}}) {
    s = CheckRange(*range, flag, kHuge);
    if (!s.ok()) return s;
  }
  if (q.gpu_only && q.cpu_only) {
    return Status::InvalidArgument("--gpu-only and --cpu-only exclude each other");
  }
  if (q.cpu_only && (!q.gpus.empty() || !q.gpu_count.empty())) {
    return Status::InvalidArgument("--cpu-only cannot be combined with a GPU filter");
  }
  if (!q.arch.empty() && q.arch != "x86_64" && q.arch != "arm64") {
    return Status::InvalidArgument(
        fmt::format("--arch: '{}' is not one of x86_64, arm64", Shown(q.arch)));
  }
  if (std::find(SortKeys().begin(), SortKeys().end(), q.sort_by) == SortKeys().end()) {
    return Status::InvalidArgument(
        fmt::format("--sort: '{}' is not one of {}", Shown(q.sort_by), Join(SortKeys(), ", ")));
  }
  std::string compare_currency = q.currency.empty() ? "USD" : q.currency;
  if (!catalog.FindCurrency(compare_currency)) {
    std::vector<std::string> known;
    for (const CurrencyRate& c : catalog.currencies()) known.push_back(c.currency);
    return Status::InvalidArgument(
        fmt::format("--currency: '{}' is not one of {}", Shown(q.currency), Join(known, ", ")));
  }
  // The known names are gathered only for lists the query has (most listings have none).
  if (!q.providers.empty() || !q.regions.empty() || !q.families.empty()) {
    std::set<std::string> providers, regions, families;
    for (const InstanceType& t : catalog.instances()) {
      providers.insert(ToLower(t.provider));
      families.insert(ToLower(t.family));
      for (const RegionPrice& r : t.regions) regions.insert(ToLower(r.region));
    }
    if (s = CheckNames(q.providers, providers, "provider"); !s.ok()) return s;
    if (s = CheckNames(q.regions, regions, "region"); !s.ok()) return s;
    if (s = CheckNames(q.families, families, "family"); !s.ok()) return s;
  }
  std::set<const Accelerator*> gpus;
  for (const std::string& name : q.gpus) {
    const Accelerator* a = nullptr;
    s = catalog.FindAccelerator(name, &a);
    if (!s.ok()) return Status::InvalidArgument("--gpu: " + s.message());
    gpus.insert(a);
  }

  std::vector<SortableOffer> offers;
  for (const InstanceType& t : catalog.instances()) {
    if (!AnyOf(q.providers, t.provider) || !AnyOf(q.families, t.family)) continue;
    if (q.gpu_only && !t.has_gpu()) continue;
    if (q.cpu_only && t.has_gpu()) continue;
    if (!gpus.empty() && !gpus.count(t.gpu)) continue;
    if (!q.gpu_count.empty() && !q.gpu_count.Contains(t.gpu_count)) continue;
    double per_gpu_gib = t.has_gpu() ? t.gpu_memory_gib() / std::max(1.0, t.gpu_count) : 0;
    if (!q.gpu_memory_gib.empty() && !q.gpu_memory_gib.Contains(per_gpu_gib)) continue;
    if (!q.total_gpu_memory_gib.Contains(t.gpu_memory_gib())) continue;
    if (!q.vcpus.Contains(t.vcpus) || !q.memory_gib.Contains(t.memory_gib())) continue;
    if (!q.memory_per_vcpu_gib.Contains(t.memory_gib() / t.vcpus)) continue;
    if (!q.arch.empty() && t.arch != q.arch) continue;
    for (const RegionPrice& r : t.regions) {
      if (!AnyOf(q.regions, r.region)) continue;
      SortableOffer o;
      o.offer.instance = &t;
      o.offer.region = &r;
      o.offer.currency = q.currency.empty() ? r.currency : q.currency;
      if (auto price = r.price(q.pricing)) {
        double shown = 0, compared = 0;
        if (s = catalog.Convert(*price, r.currency, o.offer.currency, &shown); !s.ok()) return s;
        if (s = catalog.Convert(*price, r.currency, compare_currency, &compared); !s.ok()) {
          return s;
        }
        o.offer.price_per_hour = shown;
        o.comparable_price = compared;
      }
      if (!o.comparable_price && (q.priced_only || !q.price_per_hour.empty())) continue;
      if (o.comparable_price && !q.price_per_hour.Contains(*o.comparable_price)) continue;
      offers.push_back(std::move(o));
    }
  }

  // Sort by the key, then by price, provider, type and region so output is stable.
  // The key's position in SortKeys(), found once rather than by name for every offer.
  auto key_index = std::find(SortKeys().begin(), SortKeys().end(), q.sort_by) - SortKeys().begin();
  auto key_of = [&](const SortableOffer& o) -> std::pair<double, std::string_view> {
    const InstanceType& t = *o.offer.instance;
    switch (key_index) {
      case 1:  // provider
        return {0, t.provider};
      case 2:  // instance
        return {0, t.name};
      case 3:  // region
        return {0, o.offer.region->region};
      case 4:  // gpu: InstanceType::gpu_name() without its copy
        return {0, t.gpu         ? std::string_view(t.gpu->name)
                   : t.has_gpu() ? std::string_view("undisclosed")
                                 : std::string_view()};
      case 5:  // gpus
        return {t.gpu_count, ""};
      case 6:  // gpu-memory
        return {t.gpu_memory_bytes, ""};
      case 7:  // vcpus
        return {static_cast<double>(t.vcpus), ""};
      case 8:  // memory
        return {t.memory_bytes, ""};
      case 9:  // memory-per-vcpu
        return {t.memory_bytes / t.vcpus, ""};
      case 10:  // network
        return {t.network_bits_per_s, ""};
      case 11:  // family
        return {0, t.family};
      default:  // price
        return {o.comparable_price.value_or(0), ""};
    }
  };
  bool by_price = q.sort_by == "price";
  // Made once per offer, not twice per comparison (a listing of the whole catalog compares
  // ~40,000 times).
  for (SortableOffer& o : offers) o.key = key_of(o);
  // Positions are sorted, not the offers: moving ~120-byte offers with their strings was most
  // of the sort's time.
  std::vector<uint32_t> order(offers.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t ia, uint32_t ib) {
    const SortableOffer& a = offers[ia];
    const SortableOffer& b = offers[ib];
    if (by_price && a.comparable_price.has_value() != b.comparable_price.has_value()) {
      return a.comparable_price.has_value();  // unknown prices last, in either direction
    }
    const auto& ka = a.key;
    const auto& kb = b.key;
    if (ka != kb) return q.descending ? kb < ka : ka < kb;
    if (a.comparable_price.has_value() != b.comparable_price.has_value()) {
      return a.comparable_price.has_value();
    }
    if (a.comparable_price != b.comparable_price) return *a.comparable_price < *b.comparable_price;
    return std::tie(a.offer.instance->provider, a.offer.instance->name, a.offer.region->region) <
           std::tie(b.offer.instance->provider, b.offer.instance->name, b.offer.region->region);
  });
  if (q.one_per_type) {
    std::set<const InstanceType*> seen;
    std::vector<uint32_t> kept;
    for (uint32_t i : order) {
      if (seen.insert(offers[i].offer.instance).second) kept.push_back(i);
    }
    order = std::move(kept);
  }
  if (q.top > 0 && order.size() > q.top) order.resize(q.top);
  out->reserve(order.size());
  for (uint32_t i : order) out->push_back(std::move(offers[i].offer));
  return Status::OK();
}

}  // namespace cloudfit
