// Compare: each choice estimated and priced through the recommender's own stages, one instance
// type and node count at a time, then the differences stated against the first choice that runs.
#include "cloudfit/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "cloudfit/table.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr size_t kMinChoices = 2;
constexpr size_t kMaxChoices = 5;

// The cheapest on-demand price of an instance type across its regions, in `currency`.
std::optional<double> CheapestOnDemand(const Catalog& catalog, const InstanceType& t,
                                       const std::string& currency) {
  std::optional<double> best;
  for (const RegionPrice& r : t.regions) {
    auto p = r.price(PricingMode::kOnDemand);
    if (!p) continue;
    double converted = 0;
    if (!catalog.Convert(*p, r.currency, currency, &converted).ok()) continue;
    if (!best || converted < *best) best = converted;
  }
  return best;
}

bool ProviderWanted(const RecommendOptions& o, const std::string& provider) {
  if (o.providers.empty()) return true;
  return std::any_of(o.providers.begin(), o.providers.end(),
                     [&](const std::string& p) { return ToLower(p) == ToLower(provider); });
}

std::string Hours(double h) { return FormatNumber(h, h < 10 ? 2 : 1) + " h"; }

std::string Percent(double ratio) { return fmt::format("{:.0f}%", 100 * std::abs(ratio - 1)); }

std::string Name(const CompareEntry& e) { return e.choice.label; }

// The job's hours as the table shows them: the cheapest offer's (start-up and interruptions
// included) when it is priced, else the estimate's.
double JobHours(const CompareEntry& e) {
  const Candidate* c = e.cheapest();
  return c ? c->hours : e.estimate->total_s / 3600;
}

// How `b` differs from `a`, in a sentence per aspect.
void Differ(const CompareEntry& a, const CompareEntry& b, const std::string& currency,
            std::vector<std::string>* out) {
  const Estimate& ea = *a.estimate;
  const Estimate& eb = *b.estimate;
  std::string na = Name(a), nb = Name(b);
  double ha = JobHours(a), hb = JobHours(b);
  if (ha > 0 && hb > 0 && ea.throughput_unit == eb.throughput_unit) {
    double ratio = hb / ha;
    if (std::abs(ratio - 1) < 0.02) {
      out->push_back(fmt::format("{} and {} take about as long ({})", nb, na, Hours(ha)));
    } else {
      out->push_back(fmt::format("{} is {:.2g}x {} than {} ({} vs {})", nb,
                                 ratio < 1 ? 1 / ratio : ratio, ratio < 1 ? "faster" : "slower", na,
                                 Hours(hb), Hours(ha)));
    }
  }
  for (const ModeOffer& oa : a.offers) {
    for (const ModeOffer& ob : b.offers) {
      if (oa.mode != ob.mode || !oa.best || !ob.best) continue;
      double ca = *oa.best->total_cost, cb = *ob.best->total_cost;
      if (ca <= 0) continue;
      out->push_back(fmt::format("{}: {} costs {} {} than {} ({} vs {} {})",
                                 PricingModeName(oa.mode), nb, Percent(cb / ca),
                                 cb < ca ? "less" : "more", na, FormatNumber(cb, 2),
                                 FormatNumber(ca, 2), currency));
    }
  }
  double ua = ea.memory.capacity_bytes > 0 ? ea.memory.total_bytes() / ea.memory.capacity_bytes : 0;
  double ub = eb.memory.capacity_bytes > 0 ? eb.memory.total_bytes() / eb.memory.capacity_bytes : 0;
  if (ua > 0 && ub > 0 && std::abs(ua - ub) > 0.1) {
    out->push_back(
        fmt::format("memory: {} uses {:.0f}% of its {:.0f} GiB per device, {} {:.0f}% "
                    "of {:.0f} GiB{}",
                    nb, 100 * ub, eb.memory.capacity_bytes / kGiB, na, 100 * ua,
                    ea.memory.capacity_bytes / kGiB,
                    ub > 0.9 ? fmt::format(" ({} has little headroom)", nb) : ""));
  }
  if (ea.bottleneck != eb.bottleneck) {
    out->push_back(fmt::format("bottleneck: {} is bound by {}, {} by {}", nb, eb.bottleneck, na,
                               ea.bottleneck));
  }
  const Candidate* sa = nullptr;
  const Candidate* sb = nullptr;
  for (const ModeOffer& o : a.offers) {
    if (o.mode == PricingMode::kSpot && o.best) sa = &*o.best;
  }
  for (const ModeOffer& o : b.offers) {
    if (o.mode == PricingMode::kSpot && o.best) sb = &*o.best;
  }
  if (sa && sb && sa->spot && sb->spot &&
      std::abs(sa->spot->probability_interrupted - sb->spot->probability_interrupted) > 0.05) {
    out->push_back(fmt::format(
        "spot risk: {} is interrupted at least once with {:.0f}% "
        "probability, {} with {:.0f}%",
        nb, 100 * sb->spot->probability_interrupted, na, 100 * sa->spot->probability_interrupted));
  }
}

}  // namespace

const Candidate* CompareEntry::cheapest() const {
  const Candidate* best = nullptr;
  for (const ModeOffer& o : offers) {
    if (o.best && (!best || *o.best->total_cost < *best->total_cost)) best = &*o.best;
  }
  return best;
}

Status ParseCompareChoice(const Catalog& catalog, const RecommendOptions& options,
                          const std::string& text, CompareChoice* out) {
  *out = CompareChoice();
  out->label = std::string(Trim(text));
  std::string name = out->label;
  int count = 0;
  static const std::regex kCountFirst(R"(^(\d+)\s*[xX]\s*(.+)$)");
  static const std::regex kCountLast(R"(^(.+?)\s*(?::|\s[xX]\s*)(\d+)$)");
  std::smatch m;
  if (std::regex_match(name, m, kCountLast)) {
    name = m[1].str();
    count = std::stoi(m[2].str());
  } else if (std::regex_match(name, m, kCountFirst)) {
    count = std::stoi(m[1].str());
    name = m[2].str();
  }
  if (count < 0 || count > 1024) {
    return Status::InvalidArgument(
        fmt::format("--choice: '{}': a count in [1, 1024]", Shown(text)));
  }
  const InstanceType* t = nullptr;
  if (catalog.FindInstance(name, &t).ok()) {
    out->instance = t;
    out->nodes = std::max(1, count);
    return Status::OK();
  }
  const Accelerator* gpu = nullptr;
  Status s = catalog.FindAccelerator(name, &gpu);
  if (!s.ok()) {
    return Status::InvalidArgument(fmt::format(
        "--choice: '{}' is neither an instance type nor a GPU ({})", Shown(text), s.message()));
  }
  int gpus = std::max(1, count);
  const InstanceType* best = nullptr;
  double best_price = 0;
  for (const InstanceType& candidate : catalog.instances()) {
    if (candidate.gpu != gpu || std::abs(candidate.gpu_count - gpus) > 1e-9 ||
        !ProviderWanted(options, candidate.provider)) {
      continue;
    }
    auto price = CheapestOnDemand(catalog, candidate, options.currency);
    if (!price) continue;
    if (!best || *price < best_price) {
      best = &candidate;
      best_price = *price;
    }
  }
  if (best != nullptr) {
    out->instance = best;
    out->resolution = fmt::format(
        "{}x {}: {} ({}, {} {}/h, the cheapest on demand with that "
        "many)",
        gpus, gpu->name, best->name, best->provider, FormatNumber(best_price, 3), options.currency);
    return Status::OK();
  }
  out->resolution = fmt::format(
      "no priced instance type has {}x {}: estimated on bare GPUs, "
      "not priced",
      gpus, gpu->name);
  out->nodes = 1;
  // Bare GPUs: the estimator's GPU-only hardware.
  out->label = fmt::format("{}x{}", gpus, gpu->name);
  return Status::OK();
}

Status Compare(const Catalog& catalog, const Workload& workload, const RecommendOptions& options,
               const std::vector<std::string>& choices, Comparison* out) {
  *out = Comparison();
  if (choices.size() < kMinChoices || choices.size() > kMaxChoices) {
    return Status::InvalidArgument(fmt::format("--choice: compare takes {} to {} choices, not {}",
                                               kMinChoices, kMaxChoices, choices.size()));
  }
  for (const std::string& text : choices) {
    CompareEntry entry;
    Status s = ParseCompareChoice(catalog, options, text, &entry.choice);
    if (!s.ok()) return s;
    if (entry.choice.instance == nullptr) {
      // Bare GPUs: estimated, not priced.
      HardwareSpec spec;
      std::smatch m;
      static const std::regex kBare(R"(^(\d+)x(.+)$)");
      std::regex_match(entry.choice.label, m, kBare);
      spec.gpus = std::stod(m[1].str());
      spec.gpu = m[2].str();
      Hardware hw;
      auto e = std::make_shared<Estimate>();
      s = ResolveHardware(catalog, spec, &hw);
      if (s.ok()) s = EstimateWorkload(catalog, workload, hw, e.get());
      if (!s.ok()) {
        entry.rejection = s.message();
      } else {
        entry.estimate = e;
        if (!e->fits) entry.rejection = "does not fit in memory";
      }
      out->entries.push_back(std::move(entry));
      continue;
    }
    Recommendation r;
    s = RecommendOn(catalog, workload, options, *entry.choice.instance, entry.choice.nodes, &r);
    if (!s.ok()) return s;
    for (PricingMode mode : options.pricing) {
      ModeOffer offer;
      offer.mode = mode;
      for (const Candidate& c : r.ranked) {
        if (c.mode == mode) {
          offer.best = c;
          break;
        }
      }
      if (!offer.best) {
        for (const Candidate& c : r.rejected) {
          if (c.region != nullptr && c.mode == mode) offer.rejection = c.rejection;
        }
        if (offer.rejection.empty()) offer.rejection = "no price";
      }
      entry.offers.push_back(std::move(offer));
    }
    for (const Candidate& c : r.ranked) {
      entry.estimate = c.estimate;
      break;
    }
    if (!entry.estimate) {
      for (const Candidate& c : r.rejected) {
        if (c.estimate && !entry.estimate) entry.estimate = c.estimate;
        if (entry.rejection.empty() && c.region == nullptr) entry.rejection = c.rejection;
      }
      if (entry.rejection.empty() && !r.rejected.empty())
        entry.rejection = r.rejected.front().rejection;
    }
    out->entries.push_back(std::move(entry));
  }
  // Differences against the first choice that runs.
  const CompareEntry* base = nullptr;
  for (const CompareEntry& e : out->entries) {
    if (e.estimate && e.rejection.empty()) {
      base = &e;
      break;
    }
  }
  for (const CompareEntry& e : out->entries) {
    if (&e == base) continue;
    if (!e.rejection.empty() || !e.estimate) {
      out->differences.push_back(fmt::format("{} cannot run it: {}", e.choice.label, e.rejection));
      continue;
    }
    if (base) Differ(*base, e, options.currency, &out->differences);
  }
  const CompareEntry* cheapest = nullptr;
  const CompareEntry* fastest = nullptr;
  for (const CompareEntry& e : out->entries) {
    if (const Candidate* c = e.cheapest()) {
      if (!cheapest || *c->total_cost < *cheapest->cheapest()->total_cost) cheapest = &e;
      if (!fastest || c->hours < fastest->cheapest()->hours) fastest = &e;
    }
  }
  if (cheapest) {
    const Candidate* c = cheapest->cheapest();
    out->differences.push_back(fmt::format(
        "cheapest: {} {} at {} {} in {}", cheapest->choice.label, PricingModeName(c->mode),
        FormatNumber(*c->total_cost, 2), options.currency, Hours(c->hours)));
  }
  if (fastest && fastest != cheapest) {
    const Candidate* c = fastest->cheapest();
    out->differences.push_back(
        fmt::format("fastest: {} in {}", fastest->choice.label, Hours(c->hours)));
  }
  return Status::OK();
}

}  // namespace cloudfit
