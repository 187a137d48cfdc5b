// The ranking stage: feasible candidates ordered by the objective, regions of one instance type
// folded into the best one, and the time-versus-cost Pareto front marked.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "recommend/recommender.h"

namespace cloudfit {

namespace {

double Score(const RecommendContext& ctx, const PricedOffer& offer) {
  switch (ctx.options.objective) {
    case Objective::kCheapest:
      return offer.total;
    case Objective::kFastest:
      // A service runs for its whole period on any hardware, so its hours tell nothing: its
      // speed is what a request sees, the time per output token at the planned load.
      if (ctx.priced_per_period() && offer.basis->estimate->serving) {
        return offer.basis->estimate->serving->tpot_s;
      }
      return offer.hours;
    case Objective::kBalanced:
      // Equal weight to time and cost: their product (geometric balance).
      return offer.hours * offer.total;
  }
  return 0;
}

// What orders two offers: the objective's score, then time, then cost (the cheaper of two
// equally fast offers first), then provider, type and region (one type at one price in many
// regions), then the order the offers were priced in, so the order is total. Sorting keys
// moves 48 bytes, not offers; names are compared only on exact ties.
struct RankKey {
  double score;
  double hours;
  double cost;
  const InstanceType* type;
  const RegionPrice* region;
  size_t index;
};

bool RanksBefore(const RankKey& a, const RankKey& b) {
  if (a.score != b.score) return a.score < b.score;
  if (a.hours != b.hours) return a.hours < b.hours;
  if (a.cost != b.cost) return a.cost < b.cost;
  if (a.type != b.type) {
    int by_provider = a.type->provider.compare(b.type->provider);
    if (by_provider != 0) return by_provider < 0;
    int by_name = a.type->name.compare(b.type->name);
    if (by_name != 0) return by_name < 0;
  }
  if (a.region != b.region) {
    int by_region = a.region->region.compare(b.region->region);
    if (by_region != 0) return by_region < 0;
  }
  return a.index < b.index;
}

RankKey KeyOf(const RecommendContext& ctx, const std::vector<PricedOffer>& v, size_t i) {
  return {Score(ctx, v[i]), v[i].hours, v[i].total, &v[i].basis->t, v[i].region, i};
}

// The best offer of each instance type, node count and pricing mode (an OfferBasis and a mode):
// the one a sort of all offers would put first, found without sorting the region offers it
// leaves out. An OfferBasis's offers are contiguous in `v`, as PriceCandidates adds them.
std::vector<RankKey> BestRegionOffers(const RecommendContext& ctx,
                                      const std::vector<PricedOffer>& v) {
  std::vector<RankKey> kept;
  kept.reserve(v.size());
  constexpr int kModes = kPricingModeCount;
  RankKey best[kModes];
  bool have[kModes] = {};
  auto flush = [&] {
    for (int m = 0; m < kModes; ++m) {
      if (have[m]) kept.push_back(best[m]);
      have[m] = false;
    }
  };
  const OfferBasis* basis = nullptr;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].basis != basis) {
      flush();
      basis = v[i].basis;
    }
    int m = static_cast<int>(v[i].mode);
    RankKey key = KeyOf(ctx, v, i);
    if (!have[m] || RanksBefore(key, best[m])) best[m] = key;
    have[m] = true;
  }
  flush();
  return kept;
}

// A candidate is on the front when no other is at least as fast and as cheap and better in one.
// Sorted by hours, a running minimum of cost finds it.
std::string DroppedRegionsNote(size_t dropped) {
  return fmt::format(
      "{} more region offers of the same types rank at or below these (--all-regions lists them)",
      dropped);
}

void MarkParetoFront(std::vector<Candidate>* candidates) {
  auto& v = *candidates;
  struct Point {
    double hours;
    double cost;
    size_t index;
  };
  std::vector<Point> points(v.size());
  for (size_t i = 0; i < v.size(); ++i) points[i] = {v[i].hours, *v[i].total_cost, i};
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    if (a.hours != b.hours) return a.hours < b.hours;
    return a.cost < b.cost;
  });
  double best_cost = 1e300;
  for (const Point& p : points) {
    if (p.cost < best_cost) {
      v[p.index].pareto = true;
      best_cost = p.cost;
    }
  }
}

}  // namespace

std::shared_ptr<const CandidatePass::Ranking> CandidatePass::FindRanking(Objective objective,
                                                                         bool all_regions) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  return rankings_[RankingSlot(objective, all_regions)];
}

void CandidatePass::KeepRanking(Objective objective, bool all_regions,
                                std::shared_ptr<const Ranking> ranking) const {
  std::lock_guard<std::mutex> lock(described_mutex_);
  const size_t slot = RankingSlot(objective, all_regions);
  // The most recently kept last; past kMaxKeptCandidates the oldest are dropped. A ranking
  // over the budget alone is not kept: its answers make their candidates each time.
  if (ranking->ranked.size() > kMaxKeptCandidates) return;
  std::erase(ranking_recency_, slot);
  ranking_recency_.push_back(slot);
  rankings_[slot] = std::move(ranking);
  size_t kept = 0;
  for (size_t s : ranking_recency_) kept += rankings_[s]->ranked.size();
  while (kept > kMaxKeptCandidates) {
    size_t oldest = ranking_recency_.front();
    kept -= rankings_[oldest]->ranked.size();
    rankings_[oldest] = nullptr;
    ranking_recency_.erase(ranking_recency_.begin());
  }
}

bool RankCandidates(const RecommendContext& ctx, const PricedOffers& offers, Recommendation* out) {
  const std::vector<PricedOffer>& v = offers.feasible;
  const RecommendOptions& o = ctx.options;
  // A kept pass ranked the same way before: the same offers in the same order.
  if (ctx.pass != nullptr && &offers == &ctx.pass->offers && out->ranked.empty()) {
    if (auto kept = ctx.pass->FindRanking(o.objective, o.all_regions)) {
      if (size_t dropped = v.size() - kept->ranked.size(); dropped > 0 && !o.all_regions) {
        out->notes.push_back(DroppedRegionsNote(dropped));
      }
      out->ranked = kept->ranked;
      return true;
    }
  }
  std::vector<RankKey> keys;
  if (ctx.options.all_regions) {
    keys.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) keys.push_back(KeyOf(ctx, v, i));
  } else {
    keys = BestRegionOffers(ctx, v);
    if (size_t dropped = v.size() - keys.size(); dropped > 0) {
      out->notes.push_back(DroppedRegionsNote(dropped));
    }
  }
  std::sort(keys.begin(), keys.end(), RanksBefore);
  // Candidates only for the offers kept.
  std::vector<Candidate>& ranked = out->ranked.Mutable();
  ranked.reserve(ranked.size() + keys.size());
  for (const RankKey& key : keys) {
    MakeCandidateIn(ctx, v[key.index], ctx.describe_all, &ranked.emplace_back());
  }
  MarkParetoFront(&ranked);
  return false;
}

void KeepRanking(const RecommendContext& ctx, const Recommendation& answer) {
  if (ctx.pass == nullptr) return;
  auto ranking = std::make_shared<CandidatePass::Ranking>();
  ranking->ranked = answer.ranked;
  ctx.pass->KeepRanking(ctx.options.objective, ctx.options.all_regions, std::move(ranking));
}

void DescribeShown(const RecommendContext& ctx, Recommendation* out) {
  const RecommendOptions& o = ctx.options;
  // Which first, then describe them: changing an element of a shared list copies it, and the
  // walk over the list is cheapest before any is changed.
  CandidateList& ranked = out->ranked;
  std::vector<size_t> shown;
  size_t i = 0;
  for (auto it = ranked.begin(); it != ranked.end(); ++it, ++i) {
    bool named = !o.describe_instances.empty() && AnyOf(o.describe_instances, it->instance->name);
    if (!it->described && (o.top == 0 || i < o.top || it->pareto || named)) shown.push_back(i);
  }
  for (size_t index : shown) DescribeCandidate(ctx, &ranked.Change(index));
  // --why-not asks about a type: its priced offers that were rejected get their bill too.
  if (o.describe_instances.empty()) return;
  CandidateList& rejected = out->rejected;
  for (size_t i = 0; i < rejected.size(); ++i) {
    const Candidate& c = rejected[i];
    if (!c.described && AnyOf(o.describe_instances, c.instance->name)) {
      DescribeCandidate(ctx, &rejected.Change(i));
    }
  }
}

}  // namespace cloudfit
