// The ranking stage: feasible candidates ordered by the objective, regions of one instance type
// folded into the best one, and the time-versus-cost Pareto front marked.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "recommend/recommender.h"
#include "util/seen_set.h"

namespace cloudfit {

namespace {

double Score(const RecommendContext& ctx, const Candidate& c) {
  switch (ctx.options.objective) {
    case Objective::kCheapest:
      return c.total_cost.value_or(1e300);
    case Objective::kFastest:
      // A service runs for its whole period on any hardware, so its hours tell nothing: its
      // speed is what a request sees, the time per output token at the planned load.
      if (ctx.priced_per_period() && c.estimate && c.estimate->serving) {
        return c.estimate->serving->tpot_s;
      }
      return c.hours;
    case Objective::kBalanced:
      // Equal weight to time and cost: their product (geometric balance).
      return c.hours * c.total_cost.value_or(1e300);
  }
  return 0;
}

// The instance type, pricing mode and node count of an offer as one key.
uint64_t OfferKindKey(const Candidate& c) {
  // Instance types are 8-byte aligned objects in user space (below 2^47), node counts are at
  // most kMaxRecommendNodes (1,024) and there are five pricing modes: the three fit in 64 bits
  // exactly.
  auto type = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c.instance)) >> 3;
  return type << 19 | static_cast<uint64_t>(c.mode) << 16 | static_cast<uint64_t>(c.nodes);
}

// Keeps the first (best) offer of each instance type, pricing mode and node count among the
// places in `order`, and says how many region offers it left out.
void FoldRegions(const std::vector<Candidate>& v, std::vector<size_t>* order, Recommendation* out) {
  SeenSet seen(order->size());
  size_t kept = 0;
  for (size_t i : *order) {
    const Candidate& c = v[i];
    if (seen.Insert(OfferKindKey(c))) (*order)[kept++] = i;
  }
  size_t dropped = order->size() - kept;
  order->resize(kept);
  if (dropped > 0) {
    out->notes.push_back(
        fmt::format("{} more region offers of the same types rank at or below "
                    "these (--all-regions lists them)",
                    dropped));
  }
}

// A candidate is on the front when no other is at least as fast and as cheap and better in one.
// Sorted by hours, a running minimum of cost finds it.
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

void RankCandidates(const RecommendContext& ctx, Recommendation* out) {
  std::vector<Candidate>& v = out->ranked;
  // Ties are broken by time, then cost (the cheaper of two equally fast offers first), then by
  // provider, type and region (one type at one price in many regions), then by the order the
  // offers were priced in, so the order is total and the sort need not be stable. The sort
  // moves small keys, not candidates; names are compared only on exact ties.
  struct Key {
    double score;
    double hours;
    double cost;
    const InstanceType* type;
    const RegionPrice* region;
    size_t index;
  };
  std::vector<Key> keys(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    keys[i] = {Score(ctx, v[i]), v[i].hours,  v[i].total_cost.value_or(1e300),
               v[i].instance,    v[i].region, i};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
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
  });
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = keys[i].index;
  // Regions folded before anything moves: the offers left out are never moved.
  if (!ctx.options.all_regions) FoldRegions(v, &order, out);
  std::vector<Candidate> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(v[i]));
  v = std::move(sorted);
  MarkParetoFront(&out->ranked);
}

void DescribeShown(const RecommendContext& ctx, Recommendation* out) {
  const RecommendOptions& o = ctx.options;
  for (size_t i = 0; i < out->ranked.size(); ++i) {
    Candidate& c = out->ranked[i];
    bool named = !o.describe_instances.empty() && AnyOf(o.describe_instances, c.instance->name);
    if (o.top == 0 || i < o.top || c.pareto || named) {
      DescribeCandidate(ctx, &c);
    }
  }
  // --why-not asks about a type: its priced offers that were rejected get their bill too.
  if (o.describe_instances.empty()) return;
  for (Candidate& c : out->rejected) {
    if (AnyOf(o.describe_instances, c.instance->name)) DescribeCandidate(ctx, &c);
  }
}

}  // namespace cloudfit
