// The ranking stage: feasible candidates ordered by the objective, regions of one instance type
// folded into the best one, and the time-versus-cost Pareto front marked.
#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "recommend/recommender.h"

namespace cloudfit {

namespace {

double Score(Objective objective, const Candidate& c) {
  switch (objective) {
    case Objective::kCheapest: return c.total_cost.value_or(1e300);
    case Objective::kFastest: return c.hours;
    case Objective::kBalanced:
      // Equal weight to time and cost: their product (geometric balance).
      return c.hours * c.total_cost.value_or(1e300);
  }
  return 0;
}

void FoldRegions(Recommendation* out) {
  auto& v = out->ranked;
  std::set<std::tuple<const InstanceType*, PricingMode, int>> seen;
  std::vector<Candidate> kept;
  int dropped = 0;
  for (Candidate& c : v) {
    if (seen.insert({c.instance, c.mode, c.nodes}).second) kept.push_back(std::move(c));
    else ++dropped;
  }
  v = std::move(kept);
  if (dropped > 0) {
    out->notes.push_back(fmt::format("{} more region offers of the same types rank at or below "
                                     "these (--all-regions lists them)",
                                     dropped));
  }
}

// A candidate is on the front when no other is at least as fast and as cheap and better in one.
// Sorted by hours, a running minimum of cost finds it.
void MarkParetoFront(std::vector<Candidate>* candidates) {
  auto& v = *candidates;
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (v[a].hours != v[b].hours) return v[a].hours < v[b].hours;
    return *v[a].total_cost < *v[b].total_cost;
  });
  double best_cost = 1e300;
  for (size_t i : order) {
    if (*v[i].total_cost < best_cost) {
      v[i].pareto = true;
      best_cost = *v[i].total_cost;
    }
  }
}

}  // namespace

void RankCandidates(const RecommendContext& ctx, Recommendation* out) {
  Objective objective = ctx.options.objective;
  // Candidates are large: sort their places, then move each once.
  std::vector<Candidate>& v = out->ranked;
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t ia, size_t ib) {
    const Candidate& a = v[ia];
    const Candidate& b = v[ib];
    double sa = Score(objective, a), sb = Score(objective, b);
    if (sa != sb) return sa < sb;
    if (a.hours != b.hours) return a.hours < b.hours;
    return std::tie(a.instance->provider, a.instance->name, a.region->region) <
           std::tie(b.instance->provider, b.instance->name, b.region->region);
  });
  std::vector<Candidate> sorted;
  sorted.reserve(v.size());
  for (size_t i : order) sorted.push_back(std::move(v[i]));
  v = std::move(sorted);
  if (!ctx.options.all_regions) FoldRegions(out);
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
}

}  // namespace cloudfit
