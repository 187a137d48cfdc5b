// The explanation stage: reasons and warnings computed from a candidate's numbers, reasons that
// compare candidates, and notes about the whole request.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "cloudfit/catalog_info.h"
#include "cloudfit/table.h"
#include "recommend/recommender.h"
#include "util/date.h"
#include "util/seen_set.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kHeadroomWarning = 0.10;  // less free GPU memory than this is fragile

// A GPU job whose input pipeline starves it: how many more vCPUs it needs, and the cheapest
// CPU instance in the same region that has them (a data-loading companion).
std::string InputBoundWarning(const RecommendContext& ctx, const InstanceType& t,
                              const RegionPrice& r, const Estimate& e, int nodes) {
  const Workload& w = ctx.workload;
  double gpu_step = e.time.step_s - e.time.input_s > 0 ? e.time.step_s : e.time.input_s;
  double busy = e.time.compute_s + e.time.memory_s + e.time.optimizer_s + e.time.communication_s;
  double need_rate = busy > 0 ? e.layout.global_batch / busy : 0;
  std::string base =
      fmt::format("input-bound: {} vCPUs feed {:.0f} samples/s, the GPUs could take {:.0f}",
                  t.vcpus * nodes, e.layout.global_batch / gpu_step, need_rate);
  if (!w.loader_samples_per_core_s || need_rate <= 0) return base;
  double missing = std::ceil(need_rate / *w.loader_samples_per_core_s) - t.vcpus * nodes;
  const InstanceType* best = nullptr;
  double best_price = 0;
  for (const InstanceType& other : ctx.catalog.instances()) {
    if (other.has_gpu() || other.provider != t.provider || other.vcpus < missing) continue;
    const RegionPrice* p = other.FindRegion(r.region);
    if (!p || !p->price(PricingMode::kOnDemand)) continue;
    if (!best || *p->price(PricingMode::kOnDemand) < best_price) {
      best = &other;
      best_price = *p->price(PricingMode::kOnDemand);
    }
  }
  if (!best) return base + fmt::format("; {:.0f} more vCPUs would keep up", missing);
  return base + fmt::format(
                    "; a {} ({} vCPUs, {} {}/h in {}) as a data-loading companion "
                    "supplies the missing {:.0f}",
                    best->name, best->vcpus, FormatNumber(best_price, 3),
                    best->regions.front().currency, r.region, missing);
}

}  // namespace

void ExplainCandidate(const RecommendContext& ctx, const InstanceType& t, const RegionPrice& r,
                      const Estimate& e, Candidate* c) {
  const Workload& w = ctx.workload;
  const std::string& cur = ctx.options.currency;
  c->reasons.insert(
      c->reasons.begin(),
      fmt::format("{:.1f} h at {}/h = {}; bottleneck {}", c->hours, Money(*c->price_per_hour, cur),
                  Money(*c->total_cost, cur), e.bottleneck.empty() ? "-" : e.bottleneck));
  // A price that is the type's minimum over every region (Spare Cores' Alibaba figure) ranks as
  // if it were this region's, so the offer says per row that its cost is a floor: the answer's
  // stale-price note only says the date is unknown.
  if (r.lowest_over_regions(c->mode) && r.price(c->mode)) {
    c->warnings.push_back(fmt::format(
        "lower-bound price: {}/h is the lowest {} price of {} over all {} regions (the source "
        "does not say which region), not a quote for {}; the bill there may be higher",
        Money(ctx.ToRequestCurrency(*r.price(c->mode), r.currency), cur), PricingModeName(c->mode),
        t.name, t.provider, r.region));
  }
  const MemoryBreakdown& m = e.memory;
  if (m.capacity_bytes > 0) {
    double headroom = 1 - m.total_bytes() / m.capacity_bytes;
    if (headroom < kHeadroomWarning) {
      c->warnings.push_back(
          fmt::format("memory headroom {:.0f}% ({:.1f} of {:.1f} GiB): an "
                      "allocator spike or longer sequence can run out",
                      100 * headroom, m.total_bytes() / kGiB, m.capacity_bytes / kGiB));
    }
  }
  double gpus = t.gpu_count * c->nodes;
  if (gpus > 1 && w.is_training() && e.time.step_s > 0 &&
      e.time.communication_s > 0.15 * e.time.step_s &&
      HardwareForInstance(t, c->nodes).intra_node_link.rfind("PCIe", 0) == 0) {
    c->warnings.push_back(
        fmt::format("PCIe-only multi-GPU: gradient all-reduce takes {:.0f}% of each step",
                    100 * e.time.communication_s / e.time.step_s));
  }
  if (c->nodes > 1 && w.is_training() && t.has_gpu() && !HasRdma(t.interconnect) &&
      e.time.step_s > 0) {
    c->warnings.push_back(fmt::format(
        "{} nodes over {} without RDMA: all-reduce takes {:.0f}% of each step at the network's "
        "rate",
        c->nodes, t.interconnect == Interconnect::kEthernet ? "Ethernet" : "an unpublished fabric",
        100 * e.time.communication_s / e.time.step_s));
  }
  if (t.has_gpu() && t.gpu_memory_bytes > 0 && w.is_training() &&
      t.memory_bytes < t.gpu_memory_bytes) {
    c->warnings.push_back(
        fmt::format("{:.0f} GiB of host RAM for {:.0f} GiB of GPU memory: "
                    "loading and checkpointing go through less RAM than the "
                    "GPUs hold",
                    t.memory_gib(), t.gpu_memory_gib()));
  }
  // Input-bound when the loaders are more than 5% slower than the GPUs would be: within that,
  // the pipeline keeps up for practical purposes.
  double gpu_busy =
      e.time.compute_s + e.time.memory_s + e.time.optimizer_s + e.time.communication_s;
  if (e.time.input_s > 0 && e.time.input_s >= e.time.step_s * 0.999 &&
      e.time.input_s > 1.05 * gpu_busy) {
    c->warnings.push_back(InputBoundWarning(ctx, t, r, e, c->nodes));
  }
  for (const std::string& n : e.notes) {
    if (n.rfind("no amount of work", 0) != 0) c->warnings.push_back(n);
  }
}

void ExplainRanking(const RecommendContext& ctx, Recommendation* out) {
  CandidateList& v = out->ranked;
  if (v.size() > 1 && *v[0].total_cost > 0 && v[0].hours > 0) {
    const Candidate& first = v[0];
    const Candidate& second = v[1];
    std::string why = fmt::format(
        "ranks first by {}: the next ({} {}) is {}", ObjectiveName(ctx.options.objective),
        second.instance->name, PricingModeName(second.mode),
        ctx.options.objective == Objective::kFastest
            ? fmt::format("{:.1f}% slower", 100 * (second.hours / first.hours - 1))
            : fmt::format("{:.1f}% dearer", 100 * (*second.total_cost / *first.total_cost - 1)));
    v.Change(0).reasons.push_back(std::move(why));
  }
  if (v.empty() || !ctx.workload.is_training()) return;
  double fastest = v[0].hours;
  for (const Candidate& c : v) fastest = std::min(fastest, c.hours);
  std::vector<std::pair<size_t, std::string>> old_generations;
  size_t i = 0;
  for (auto it = v.begin(); it != v.end(); ++it, ++i) {
    const Accelerator* gpu = it->instance->gpu;
    if (it->described && gpu &&
        (gpu->architecture == "Kepler" || gpu->architecture == "Maxwell" ||
         gpu->architecture == "Pascal" || gpu->name == "T4")) {
      old_generations.emplace_back(
          i, fmt::format("{} is an old generation for training: {:.1f}x the time of the "
                         "fastest candidate",
                         gpu->name, it->hours / fastest));
    }
  }
  for (auto& [index, warning] : old_generations) {
    v.Change(index).warnings.push_back(std::move(warning));
  }
}

namespace {

// One note for the whole answer when a ranked price is older than kStalePriceDays or has no
// date, per provider: how many offers, and the oldest date.
std::string StalePriceNote(const RecommendContext& ctx, const Recommendation& answer) {
  struct Stale {
    std::string_view provider;
    int offers = 0;
    int undated = 0;
    int oldest_days = 0;
  };
  // A catalog has a handful of providers and an answer ranks hundreds of offers: a short list,
  // searched from the provider found last, is cheaper than a map keyed by name.
  std::vector<Stale> by_provider;
  size_t last = 0;
  SeenSet seen(answer.ranked.size());  // a row ranked in several modes counts once
  for (const Candidate& c : answer.ranked) {
    const RegionPrice& r = *c.region;
    if (!seen.Insert(reinterpret_cast<uintptr_t>(&r))) continue;
    bool undated = !r.as_of_known();
    if (!undated && ctx.today_days - r.as_of_days <= kStalePriceDays) continue;
    std::string_view provider = c.instance->provider;
    if (last >= by_provider.size() || by_provider[last].provider != provider) {
      last = 0;
      while (last < by_provider.size() && by_provider[last].provider != provider) ++last;
      if (last == by_provider.size()) by_provider.push_back(Stale{provider});
    }
    Stale& s = by_provider[last];
    ++s.offers;
    if (undated) {
      ++s.undated;
    } else if (s.oldest_days == 0 || r.as_of_days < s.oldest_days) {
      s.oldest_days = r.as_of_days;
    }
  }
  if (by_provider.empty()) return "";
  // Providers in name order, as the note has always listed them.
  std::sort(by_provider.begin(), by_provider.end(),
            [](const Stale& a, const Stale& b) { return a.provider < b.provider; });
  std::vector<std::string> parts;
  for (const Stale& s : by_provider) {
    const std::string_view provider = s.provider;
    std::vector<std::string> what;
    if (s.oldest_days > 0) {
      what.push_back(fmt::format("as old as {}, {} days", FormatIsoDate(s.oldest_days),
                                 ctx.today_days - s.oldest_days));
    }
    if (s.undated > 0) what.push_back(fmt::format("{} with no known date", s.undated));
    parts.push_back(fmt::format("{} ({} offer{}: {})", provider, s.offers, s.offers == 1 ? "" : "s",
                                Join(what, ", ")));
  }
  return fmt::format(
      "stale prices: {}; prices move within a quarter (over {} days "
      "old counts as stale): run 'cloudfit catalog refresh'",
      Join(parts, "; "), kStalePriceDays);
}

// Answers of a kept pass rank the same offers (in another order, by objective), so they share
// the note.
void AddStalePriceNote(const RecommendContext& ctx, Recommendation* out) {
  const Objective objective = ctx.options.objective;
  const bool all_regions = ctx.options.all_regions;
  std::string note;
  if (!ctx.pass || !ctx.pass->FindStaleNote(objective, all_regions, ctx.today_days, &note)) {
    note = StalePriceNote(ctx, *out);
    if (ctx.pass) ctx.pass->KeepStaleNote(objective, all_regions, ctx.today_days, note);
  }
  if (!note.empty()) out->notes.push_back(std::move(note));
}

// A limit that `value` fits under, rounded up to two significant figures so the hint reads as
// a number a person would type (31.3 h -> 32 h, 0.437 -> 0.44), never below `value`.
double RoundUpLimit(double value) {
  if (!(value > 0)) return value;
  double step = std::pow(10.0, std::floor(std::log10(value)) - 1);
  double up = std::ceil(value / step - 1e-9) * step;
  return up < value ? up + step : up;
}

std::string LimitText(double value) { return FormatNumber(value, value < 10 ? 2 : 0); }

// Nothing fits in memory: the least change that would, tried on the instances with the most
// GPU memory (a model sharded over eight GPUs needs the whole node's memory, one that is not
// needs the most per device, so both orders are tried).
void AddMemoryHints(const RecommendContext& ctx, Recommendation* out) {
  const Workload& w = ctx.workload;
  auto per_device = [](const InstanceType* t) {
    return t->gpu_memory_bytes / std::max(1.0, t->gpu_count);
  };
  std::vector<const InstanceType*> largest;
  const InstanceType* by_total = ctx.memory_rejects.front();
  const InstanceType* by_device = by_total;
  for (const InstanceType* t : ctx.memory_rejects) {
    if (t->gpu_memory_bytes > by_total->gpu_memory_bytes) by_total = t;
    if (per_device(t) > per_device(by_device)) by_device = t;
  }
  largest.push_back(by_total);
  if (by_device != by_total) largest.push_back(by_device);
  const InstanceType* biggest = by_device;
  struct Variant {
    const char* what;
    WorkloadKind kind;
    Recompute recompute;
  } variants[] = {{"full recomputation (gradient checkpointing)", w.kind, Recompute::kFull},
                  {"LoRA with checkpointing", WorkloadKind::kLora, Recompute::kFull},
                  {"QLoRA with checkpointing", WorkloadKind::kQlora, Recompute::kFull}};
  for (const Variant& v : variants) {
    for (const InstanceType* t : largest) {
      Workload alt = w;
      alt.kind = v.kind;
      alt.recompute = v.recompute;
      Estimate e;
      if (!EstimateWorkload(ctx.catalog, alt, HardwareForInstance(*t, 1), &e).ok() || !e.fits) {
        continue;
      }
      FitHint hint;
      hint.note = fmt::format(
          "nothing fits as asked; with {} it fits {} ({:.1f} of {:.1f} GiB per device)", v.what,
          t->name, e.memory.total_bytes() / kGiB, e.memory.capacity_bytes / kGiB);
      if (v.kind != w.kind) hint.workload.emplace_back("kind", WorkloadKindName(v.kind));
      hint.workload.emplace_back("recompute", "full");
      out->notes.push_back(hint.note);
      out->hints.push_back(std::move(hint));
      return;
    }
  }
  FitHint hint;
  hint.note = "nothing fits as asked, not even with QLoRA on " + biggest->name +
              ": raise --nodes-max for more GPUs";
  out->notes.push_back(hint.note);
  // The largest node count the options accept is 64; the hint is only an action below it.
  if (ctx.options.max_nodes < 64) {
    hint.options.emplace_back("max_nodes", std::to_string(std::min(64, 2 * ctx.options.max_nodes)));
    out->hints.push_back(std::move(hint));
  }
}

// Offers that fit but miss the deadline or the budget: the limit at which the first of them
// would be kept. A deadline-rejected offer was not checked against the budget, so it counts
// only when it is within the budget too; one over both gets both limits in one hint.
void AddLimitHints(const RecommendContext& ctx, Recommendation* out) {
  const RecommendOptions& o = ctx.options;
  const Candidate* fastest_in_budget = nullptr;
  const Candidate* fastest = nullptr;
  const Candidate* cheapest_in_time = nullptr;
  for (const Candidate& c : out->rejected) {
    if (!c.total_cost) continue;
    if (StartsWith(c.rejection, "misses the deadline")) {
      if (!fastest || c.hours < fastest->hours) fastest = &c;
      if ((!o.budget || *c.total_cost <= *o.budget) &&
          (!fastest_in_budget || c.hours < fastest_in_budget->hours)) {
        fastest_in_budget = &c;
      }
    } else if (StartsWith(c.rejection, "over budget")) {
      if (!cheapest_in_time || *c.total_cost < *cheapest_in_time->total_cost) cheapest_in_time = &c;
    }
  }
  auto describe = [](const Candidate& c) {
    return fmt::format("{} {}", c.instance->name, PricingModeName(c.mode));
  };
  if (fastest_in_budget) {
    double hours = RoundUpLimit(fastest_in_budget->hours);
    FitHint hint;
    hint.note =
        fmt::format("nothing meets the deadline; with a deadline of {} h, {} fits ({:.1f} h)",
                    LimitText(hours), describe(*fastest_in_budget), fastest_in_budget->hours);
    hint.options.emplace_back("deadline_hours", LimitText(hours));
    out->notes.push_back(hint.note);
    out->hints.push_back(std::move(hint));
  }
  if (cheapest_in_time) {
    double budget = RoundUpLimit(*cheapest_in_time->total_cost);
    FitHint hint;
    hint.note = fmt::format("nothing is within the budget; with a budget of {}, {} fits ({})",
                            Money(budget, o.currency), describe(*cheapest_in_time),
                            Money(*cheapest_in_time->total_cost, o.currency));
    hint.options.emplace_back("budget", LimitText(budget));
    out->notes.push_back(hint.note);
    out->hints.push_back(std::move(hint));
  }
  if (!fastest_in_budget && !cheapest_in_time && fastest) {
    double hours = RoundUpLimit(fastest->hours);
    double budget = RoundUpLimit(*fastest->total_cost);
    FitHint hint;
    hint.note =
        fmt::format("nothing meets the deadline within the budget; with {} h and {}, {} fits",
                    LimitText(hours), Money(budget, o.currency), describe(*fastest));
    hint.options.emplace_back("deadline_hours", LimitText(hours));
    if (o.budget) hint.options.emplace_back("budget", LimitText(budget));
    out->notes.push_back(hint.note);
    out->hints.push_back(std::move(hint));
  }
}

}  // namespace

void AddRequestNotes(const RecommendContext& ctx, Recommendation* out) {
  AddStalePriceNote(ctx, out);
  if (!out->ranked.empty()) return;
  if (!ctx.memory_rejects.empty() && ctx.workload.is_training()) AddMemoryHints(ctx, out);
  AddLimitHints(ctx, out);
}

std::vector<std::string> ExplainInstance(const Recommendation& r, const std::string& instance) {
  std::vector<std::string> lines;
  std::string key = ToLower(instance);
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const Candidate& c = r.ranked[i];
    if (ToLower(c.instance->name) != key) continue;
    lines.push_back(fmt::format("#{} {} {} x{}: {}", i + 1, c.region->region,
                                PricingModeName(c.mode), c.nodes, Join(c.reasons, "; ")));
    if (lines.size() >= 5) break;
  }
  std::map<std::string, int> reasons;
  for (const Candidate& c : r.rejected) {
    if (ToLower(c.instance->name) != key) continue;
    ++reasons[c.rejection];
  }
  for (const auto& [reason, count] : reasons) {
    lines.push_back(
        fmt::format("rejected ({} candidate{}): {}", count, count == 1 ? "" : "s", reason));
  }
  return lines;
}

bool CandidatePass::FindStaleNote(Objective objective, bool all_regions, int today_days,
                                  std::string* note) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  const StaleNote& kept = stale_notes_[RankingSlot(objective, all_regions)];
  if (kept.today_days != today_days) return false;
  *note = kept.note;
  return true;
}

void CandidatePass::KeepStaleNote(Objective objective, bool all_regions, int today_days,
                                  const std::string& note) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  stale_notes_[RankingSlot(objective, all_regions)] = {today_days, note};
}

}  // namespace cloudfit
