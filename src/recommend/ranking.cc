// The ranking stage: feasible candidates ordered by the objective, regions of one instance type
// folded into the best one, and the time-versus-cost Pareto front marked.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "recommend/recommender.h"

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

// Keeps the first (best) offer of each instance type, pricing mode and node count among the
// places in `order`, and says how many region offers it left out.
void FoldRegions(const std::vector<Candidate>& v, std::vector<size_t>* order, Recommendation* out) {
  struct Key {
    const InstanceType* instance;
    PricingMode mode;
    int nodes;
    bool operator==(const Key& o) const {
      return instance == o.instance && mode == o.mode && nodes == o.nodes;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.instance) ^ (static_cast<size_t>(k.mode) << 20) ^
             (static_cast<size_t>(k.nodes) << 24);
    }
  };
  std::unordered_set<Key, KeyHash> seen;
  seen.reserve(order->size());
  size_t kept = 0;
  for (size_t i : *order) {
    const Candidate& c = v[i];
    if (seen.insert({c.instance, c.mode, c.nodes}).second) (*order)[kept++] = i;
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
  std::vector<Candidate>& v = out->ranked;
  // Ties are broken by time, then cost (the cheaper of two equally fast offers first), then by
  // provider, type and region (one type at one price in many regions). The
  // types are put in that order once, so most ties compare two integers, not three strings.
  std::vector<const InstanceType*> types;
  types.reserve(v.size());
  for (const Candidate& c : v) types.push_back(c.instance);
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  std::vector<const InstanceType*> by_name = types;
  std::sort(by_name.begin(), by_name.end(), [](const InstanceType* a, const InstanceType* b) {
    return std::tie(a->provider, a->name) < std::tie(b->provider, b->name);
  });
  std::unordered_map<const InstanceType*, int> type_rank;
  type_rank.reserve(by_name.size());
  for (size_t i = 0; i < by_name.size(); ++i) type_rank[by_name[i]] = static_cast<int>(i);
  struct Key {
    double score;
    double hours;
    double cost;
    int type_rank;
  };
  std::vector<Key> keys(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    keys[i] = {Score(ctx, v[i]), v[i].hours, v[i].total_cost.value_or(1e300),
               type_rank[v[i].instance]};
  }
  // Candidates are large: sort their places, then move each once.
  std::vector<size_t> order(v.size());
  for (size_t i = 0; i < v.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t ia, size_t ib) {
    const Key& a = keys[ia];
    const Key& b = keys[ib];
    if (a.score != b.score) return a.score < b.score;
    if (a.hours != b.hours) return a.hours < b.hours;
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.type_rank != b.type_rank) return a.type_rank < b.type_rank;
    return v[ia].region->region < v[ib].region->region;
  });
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
