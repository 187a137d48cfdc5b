// Requests of one workload share their candidate pass (every offer priced, every rejection) when
// they differ only in how the answer ranks or shows the offers: the shared answers must be the
// fresh ones, byte for byte, and options that price must never share a pass.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
#include "recommend/recommender.h"
#include "test_support.h"

namespace cloudfit {
namespace {

Workload Finalized(const std::vector<std::pair<std::string, std::string>>& fields) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  EXPECT_TRUE(FinalizeWorkload(testing::BuiltInCatalog(), &w).ok());
  return w;
}

std::string AnswerJson(const Workload& w, const RecommendOptions& o, WorkloadEstimates* shared) {
  Recommendation r;
  Status s = Recommend(testing::BuiltInCatalog(), w, o, &r, shared);
  EXPECT_TRUE(s.ok()) << s.ToString();
  RecommendationJsonOptions how;
  how.top = o.top;
  how.points = true;  // every feasible offer, not only those shown
  std::string text;
  AppendRecommendationJson(w, o, r, how, &text);
  // Every rejection with its reason, which the JSON only counts.
  for (const Candidate& c : r.rejected) text += "\n" + c.instance->name + ": " + c.rejection;
  return text;
}

// Variations of the options, each applied to the defaults, in an order where a request that
// prices differently follows one that prices the same workload otherwise.
std::vector<std::function<void(RecommendOptions*)>> Variations() {
  return {
      [](RecommendOptions*) {},
      [](RecommendOptions* o) { o->objective = Objective::kFastest; },
      [](RecommendOptions* o) { o->objective = Objective::kBalanced; },
      [](RecommendOptions* o) { o->top = 1; },
      [](RecommendOptions* o) { o->all_regions = true; },
      [](RecommendOptions* o) { o->describe_instances = {"p5.48xlarge"}; },
      [](RecommendOptions* o) { o->budget = 40; },
      [](RecommendOptions* o) { o->deadline_hours = 6; },
      [](RecommendOptions* o) { o->pricing = {PricingMode::kOnDemand}; },
      [](RecommendOptions* o) {
        o->pricing = {PricingMode::kSpot, PricingMode::kOnDemand};
      },
      [](RecommendOptions* o) { o->currency = "CNY"; },
      [](RecommendOptions* o) { o->providers = {"aws"}; },
      [](RecommendOptions* o) { o->regions = {"us-east-1"}; },
      [](RecommendOptions* o) { o->gpus = {"H100"}; },
      [](RecommendOptions* o) { o->exclude_gpus = {"H100"}; },
      [](RecommendOptions* o) { o->min_gpus = 4; },
      [](RecommendOptions* o) { o->max_gpus = 2; },
      [](RecommendOptions* o) { o->include_cpu = false; },
      [](RecommendOptions* o) { o->max_nodes = 4; },
      [](RecommendOptions* o) { o->fixed_hours = 100; },
      [](RecommendOptions* o) { o->excluded_costs = {"egress"}; },
      [](RecommendOptions* o) { o->require_rdma = true; },
      [](RecommendOptions* o) {
        o->max_nodes = 8;
        o->max_spot_nodes = 1;
      },
  };
}

TEST(SharedPassTest, SharedAnswersAreTheFreshOnesByteForByte) {
  const Workload workloads[] = {
      Finalized({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}}),
      Finalized({{"kind", "train"}, {"model", "ResNet-50"}, {"samples", "1.28e7"}}),
      Finalized({{"kind", "serve"}, {"model", "Llama-2-13B"}, {"request_rate", "30"}}),
  };
  for (const Workload& w : workloads) {
    WorkloadEstimates shared;
    int i = 0;
    for (const auto& vary : Variations()) {
      RecommendOptions o;
      vary(&o);
      if (w.kind == WorkloadKind::kServing) o.serving_hours = 100;
      EXPECT_EQ(AnswerJson(w, o, &shared), AnswerJson(w, o, nullptr))
          << w.model.name << ", variation " << i;
      ++i;
    }
  }
}

TEST(SharedPassTest, OnlyRankingOptionsShareAKey) {
  RecommendOptions base;
  const std::string key = PricingOptionsKey(base);
  int i = 0;
  for (const auto& vary : Variations()) {
    RecommendOptions o;
    vary(&o);
    bool ranks_only = o.objective != base.objective || o.top != base.top ||
                      o.all_regions != base.all_regions ||
                      o.describe_instances != base.describe_instances;
    if (i > 0) {
      EXPECT_EQ(PricingOptionsKey(o) == key, ranks_only) << "variation " << i;
    }
    ++i;
  }
  // Strings carry their length: two lists that join to the same text differ.
  RecommendOptions a, b;
  a.providers = {"aw", "s"};
  b.providers = {"a", "ws"};
  EXPECT_NE(PricingOptionsKey(a), PricingOptionsKey(b));
}

TEST(SharedPassTest, KeepsTheMostRecentPasses) {
  WorkloadEstimates estimates;
  std::vector<std::shared_ptr<const CandidatePass>> kept;
  for (size_t i = 0; i <= WorkloadEstimates::kMaxPasses; ++i) {
    kept.push_back(std::make_shared<CandidatePass>());
  }
  for (size_t i = 0; i <= WorkloadEstimates::kMaxPasses; ++i) {
    estimates.KeepPass(std::to_string(i), kept[i]);
  }
  EXPECT_EQ(estimates.FindPass("0"), nullptr) << "the oldest is dropped";
  for (size_t i = 1; i <= WorkloadEstimates::kMaxPasses; ++i) {
    EXPECT_EQ(estimates.FindPass(std::to_string(i)).get(), kept[i].get()) << i;
  }
}

// What a pass keeps per way of ranking it is found only by the same objective, all_regions and
// (for the stale-price note, which counts days) the same day.
TEST(SharedPassTest, KeptRankingsAndNotesAreFoundOnlyTheWayTheyWereMade) {
  CandidatePass pass;
  auto ranking = std::make_shared<CandidatePass::Ranking>();
  ranking->ranked.push_back(Candidate());
  pass.KeepRanking(Objective::kFastest, false, ranking);
  EXPECT_EQ(pass.FindRanking(Objective::kFastest, false), ranking);
  EXPECT_EQ(pass.FindRanking(Objective::kCheapest, false), nullptr);
  EXPECT_EQ(pass.FindRanking(Objective::kBalanced, false), nullptr);
  EXPECT_EQ(pass.FindRanking(Objective::kFastest, true), nullptr);

  pass.KeepStaleNote(Objective::kCheapest, true, 20000, "stale prices: x");
  std::string note;
  EXPECT_TRUE(pass.FindStaleNote(Objective::kCheapest, true, 20000, &note));
  EXPECT_EQ(note, "stale prices: x");
  EXPECT_FALSE(pass.FindStaleNote(Objective::kCheapest, true, 20001, &note)) << "another day";
  EXPECT_FALSE(pass.FindStaleNote(Objective::kFastest, true, 20000, &note));
  EXPECT_FALSE(pass.FindStaleNote(Objective::kCheapest, false, 20000, &note));
  pass.KeepStaleNote(Objective::kCheapest, false, 20000, "");
  EXPECT_TRUE(pass.FindStaleNote(Objective::kCheapest, false, 20000, &note)) << "no note is kept";
  EXPECT_EQ(note, "");
}

// A pass keeps the rankings made last, up to a number of candidates in all (each ranking holds
// its candidates): older ones are dropped, and one over the budget alone is not kept.
TEST(SharedPassTest, APassKeepsTheRankingsMadeLast) {
  auto ranking_of = [](size_t candidates) {
    auto r = std::make_shared<CandidatePass::Ranking>();
    r->ranked.Mutable().resize(candidates);
    return r;
  };
  const size_t third = CandidatePass::kMaxKeptCandidates / 3;
  CandidatePass pass;
  auto cheapest = ranking_of(third), fastest = ranking_of(third), balanced = ranking_of(third);
  pass.KeepRanking(Objective::kCheapest, false, cheapest);
  pass.KeepRanking(Objective::kFastest, false, fastest);
  pass.KeepRanking(Objective::kCheapest, false, cheapest);  // made again: the most recent now
  pass.KeepRanking(Objective::kBalanced, false, balanced);
  EXPECT_EQ(pass.FindRanking(Objective::kFastest, false), fastest) << "three fit";
  auto all_regions = ranking_of(2 * third);
  pass.KeepRanking(Objective::kCheapest, true, all_regions);
  EXPECT_EQ(pass.FindRanking(Objective::kFastest, false), nullptr) << "the oldest is dropped";
  EXPECT_EQ(pass.FindRanking(Objective::kCheapest, false), nullptr) << "and the next";
  EXPECT_EQ(pass.FindRanking(Objective::kBalanced, false), balanced);
  EXPECT_EQ(pass.FindRanking(Objective::kCheapest, true), all_regions);
  pass.KeepRanking(Objective::kFastest, true, ranking_of(CandidatePass::kMaxKeptCandidates + 1));
  EXPECT_EQ(pass.FindRanking(Objective::kFastest, true), nullptr) << "too large to keep";
  EXPECT_EQ(pass.FindRanking(Objective::kBalanced, false), balanced) << "and drops nothing";
}

TEST(CandidateListTest, CopiesShareUntilOneIsChanged) {
  CandidateList a;
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.begin(), a.end());
  Candidate c;
  c.rejection = "over budget";
  a.push_back(c);
  CandidateList b = a;
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(&a[0], &b[0]) << "a copy shares the elements";
  b.Mutable()[0].rejection = "misses the deadline";
  EXPECT_EQ(a[0].rejection, "over budget") << "changing a copy leaves the original as it was";
  EXPECT_EQ(b[0].rejection, "misses the deadline");
  b.push_back(c);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 2u);
}

TEST(CandidateListTest, ChangingOneSharedElementCopiesThatElementAlone) {
  CandidateList a;
  for (const char* why : {"first", "second", "third", "fourth"}) {
    Candidate c;
    c.rejection = why;
    a.push_back(c);
  }
  CandidateList b = a;
  b.Change(1).rejection = "changed second";
  b.Change(3).rejection = "changed fourth";
  b.Change(1).reasons.push_back("changed twice");
  EXPECT_EQ(&a[0], &b[0]) << "the elements not changed stay shared";
  EXPECT_EQ(&a[2], &b[2]);
  EXPECT_EQ(a[1].rejection, "second") << "the original is as it was";
  EXPECT_EQ(a[3].rejection, "fourth");
  EXPECT_EQ(b[1].rejection, "changed second");
  EXPECT_EQ(b[1].reasons.size(), 1u) << "a second change finds the first's copy";
  EXPECT_EQ(b.back().rejection, "changed fourth");
  // Iteration sees the changed elements in their places.
  std::vector<std::string> seen;
  for (const Candidate& c : b) seen.push_back(c.rejection);
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "changed second", "third", "changed fourth"}));
  seen.clear();
  for (const Candidate& c : a) seen.push_back(c.rejection);
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "second", "third", "fourth"}));
  // Changing the list makes every element its own, the changed ones included.
  std::vector<Candidate>& own = b.Mutable();
  ASSERT_EQ(own.size(), 4u);
  EXPECT_EQ(own[1].rejection, "changed second");
  EXPECT_EQ(own[3].rejection, "changed fourth");
  EXPECT_NE(&a[0], &b[0]);
  EXPECT_EQ(a[1].rejection, "second");
  // A list no other shares is changed in place.
  Candidate& in_place = b.Change(2);
  EXPECT_EQ(&in_place, &b[2]);
}

// An answer shows a few offers of a ranking the next answer shares: describing them (reasons,
// warnings, bill) changes that answer's copies, never the kept ranking.
TEST(SharedPassTest, ShowingOffersLeavesTheKeptRankingUndescribed) {
  Workload w = Finalized({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}});
  WorkloadEstimates shared;
  RecommendOptions o;
  o.top = 10;
  Recommendation first, second;
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &first, &shared).ok());
  o.top = 1;
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &second, &shared).ok());
  ASSERT_GT(second.ranked.size(), 10u);
  // An offer the first answer showed for its rank alone, and one neither answer shows.
  size_t shown_once = 0, hidden = 0;
  for (size_t i = 1; i < second.ranked.size(); ++i) {
    const Candidate& c = second.ranked[i];
    if (c.pareto || c.estimate == second.ranked[0].estimate) continue;
    if (i < 10 && shown_once == 0) shown_once = i;
    if (i >= 10 && hidden == 0) hidden = i;
  }
  ASSERT_GT(shown_once, 0u) << "the test needs an offer among the first ten off the Pareto front";
  ASSERT_GT(hidden, 0u);
  EXPECT_TRUE(first.ranked[shown_once].described);
  EXPECT_FALSE(second.ranked[shown_once].described)
      << "offer " << shown_once << " was described for the first answer alone";
  EXPECT_TRUE(second.ranked[0].described);
  EXPECT_EQ(&first.ranked[hidden], &second.ranked[hidden]) << "offers neither shows are shared";
  EXPECT_EQ(first.ranked[0].reasons, second.ranked[0].reasons);
}

// The plot's points of an answer that shares a kept ranking are kept text: they must read
// as a fresh answer's do, whatever the answers sharing the ranking showed before.
TEST(SharedPassTest, AnswersOfAKeptRankingWriteTheSamePointsAsAFreshAnswer) {
  Workload w = Finalized({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}});
  RecommendOptions o;
  o.top = 3;
  RecommendationJsonOptions how;
  how.top = 3;
  how.points = true;
  Recommendation fresh;
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &fresh, nullptr).ok());
  std::string expected;
  AppendRecommendationJson(w, o, fresh, how, &expected);
  ASSERT_NE(expected.find("\"points\":[{"), std::string::npos);
  WorkloadEstimates shared;
  for (size_t top : {10, 3, 3}) {
    o.top = top;
    Recommendation r;
    ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &r, &shared).ok());
    if (top != 3) continue;
    std::string text;
    AppendRecommendationJson(w, o, r, how, &text);
    EXPECT_EQ(text, expected);
  }
}

// --why-not words the bills of a type's rejected offers: in the answer that asked, never in the
// pass the next request shares.
TEST(SharedPassTest, DescribingRejectionsLeavesTheSharedPassAsItWas) {
  Workload w = Finalized({{"kind", "lora"}, {"model", "Llama-3.1-8B"}, {"tokens", "5e7"}});
  WorkloadEstimates shared;
  RecommendOptions o;
  o.budget = 1;
  o.describe_instances = {"p5.48xlarge"};
  Recommendation asked, next;
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &asked, &shared).ok());
  o.describe_instances.clear();
  ASSERT_TRUE(Recommend(testing::BuiltInCatalog(), w, o, &next, &shared).ok());
  int described_asked = 0, described_next = 0;
  for (const Candidate& c : asked.rejected) described_asked += c.described;
  for (const Candidate& c : next.rejected) described_next += c.described;
  EXPECT_GT(described_asked, 0) << "every offer is over a 1 USD budget";
  EXPECT_EQ(described_next, 0);
}

}  // namespace
}  // namespace cloudfit
