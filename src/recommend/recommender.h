// The recommender's stages and the context they share. Each stage lives in its own file:
//   candidates.cc    options checked, instance types x node counts filtered and estimated
//   pricing.cc       each feasible estimate priced per region and pricing mode, constraints
//   ranking.cc       ordering by the objective, region folding, the Pareto front
//   explanations.cc  reasons, warnings and notes computed from the numbers
// recommend.cc runs them in that order.
#ifndef CLOUDFIT_RECOMMEND_RECOMMENDER_H_
#define CLOUDFIT_RECOMMEND_RECOMMENDER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "cloudfit/hardware.h"
#include "cloudfit/recommend.h"

namespace cloudfit {

inline constexpr double kGiB = 1024.0 * 1024 * 1024;
inline constexpr double kHoursPerYear = 8760;
// The most nodes a recommendation or comparison prices a job on.
inline constexpr int kMaxRecommendNodes = 1024;

// What an estimate reads of an instance type's Hardware: all of it but the names. Types that
// agree on it (the same GPUs, vCPUs, memory and links under another name or provider) get the
// same estimate. A field added to Hardware must be added here.
struct HardwareShape {
  const Accelerator* gpu = nullptr;
  double gpus_per_node = 0;
  int nodes = 1;
  double gpu_memory_bytes = 0;
  int vcpus_per_node = 0;
  double host_memory_bytes_per_node = 0;
  const CpuGeneration* cpu = nullptr;
  IntraNodeLink intra_link = IntraNodeLink::kNone;
  double intra_node_bytes_per_s = 0;
  double inter_node_bytes_per_s = 0;
  Interconnect interconnect = Interconnect::kUnknown;
  bool inter_node_assumed = false;
  std::string intra_node_link;
  double network_override_bits_per_s = 0;
  std::optional<bool> peer_to_peer;

  bool operator<(const HardwareShape& o) const {
    auto tied = [](const HardwareShape& s) {
      return std::tie(s.gpu, s.gpus_per_node, s.nodes, s.gpu_memory_bytes, s.vcpus_per_node,
                      s.host_memory_bytes_per_node, s.cpu, s.intra_link, s.intra_node_bytes_per_s,
                      s.inter_node_bytes_per_s, s.interconnect, s.inter_node_assumed,
                      s.intra_node_link, s.network_override_bits_per_s, s.peer_to_peer);
    };
    return tied(*this) < tied(o);
  }
};
HardwareShape ShapeOf(const Hardware& hw);

// What one unit of work is and how many there are, for cost per unit.
struct WorkUnits {
  std::string unit;
  double per_hour = 0;  // units produced per hour by the candidate
};

// Replicas and hours priced for an estimate: a service's period, a fixed number of hours, or
// the job's own duration.
struct PricedRun {
  int replicas = 1;
  double hours = 0;
};

struct RecommendContext;

// What the offers of one estimate (an instance type at a node count) have in common, worked out
// once rather than for every region and pricing mode (pricing.cc).
struct OfferBasis {
  OfferBasis(const RecommendContext& ctx, const InstanceType& type, int node_count,
             const std::shared_ptr<const Estimate>& e);

  // The risk of the run in `mode`, numbers only: the same for every region, and for every mode
  // but spot.
  const JobRisk& Risk(const RecommendContext& ctx, PricingMode mode);
  // The risk Risk worked out for an offer priced in `mode`: an offer's candidate reads it
  // without changing the basis, which a CandidatePass shares between threads.
  const JobRisk& PricedRisk(PricingMode mode) const {
    return mode == PricingMode::kSpot ? *spot_risk : *other_risk;
  }

  const InstanceType& t;
  int nodes;
  std::shared_ptr<const Estimate> estimate;
  PricedRun run;
  StartupTime startup;
  double startup_hours = 0;
  double checkpoint_bytes = 0;
  WorkUnits units;
  std::string missing_licence;
  bool sustained_use = false;  // GCP's sustained-use discount applies on demand
  BillRows rows;               // the provider's cost rows, for every offer's bill
  std::optional<JobRisk> spot_risk, other_risk;
  // The bill's amounts but the node price's share, per pricing mode: the same in every region.
  std::optional<JobCostParts> cost_parts[kPricingModeCount];
};

// Which constraint a priced offer fails; its words are made only for offers an answer keeps.
enum class OfferRejection : uint8_t { kNone, kMissingLicence, kSpotNodes, kDeadline, kBudget };

// One offer (a basis's instance type and node count in one region and pricing mode) priced as
// numbers: all that ranking, region folding and the constraints read. Thousands are priced per
// recommendation and a few hundred kept, so a Candidate, with its estimate, risks and words, is
// made only for those (MakeCandidate).
struct PricedOffer {
  OfferBasis* basis = nullptr;
  const RegionPrice* region = nullptr;
  PricingMode mode = PricingMode::kOnDemand;
  OfferRejection rejection = OfferRejection::kNone;
  double unit_price = 0;       // one node, in the options' currency
  double price_per_hour = 0;   // the whole fleet: nodes x replicas
  double compute_hours = 0;    // the run's hours with the expected interruptions
  double expected_starts = 1;  // node starts per node
  double hours = 0;            // wall-clock hours the user waits (Candidate::hours)
  double compute = 0;          // the compute line of the bill
  double total = 0;            // the whole bill
  std::optional<double> cost_per_unit;
  std::optional<double> break_even_utilisation;  // reserved modes

  bool feasible() const { return rejection == OfferRejection::kNone; }
};

// The feasible offers of a request in the order they were priced, and the bases they point to
// (a deque, so that pointers stay valid as it grows).
struct PricedOffers {
  std::deque<OfferBasis> bases;
  std::vector<PricedOffer> feasible;
};

// What the candidate and pricing stages leave for ranking: a function of the catalog, the
// workload and the options' pricing fields (PricingOptionsKey), not of how the answer ranks or
// shows the offers. A batch or a server keeps it with the workload's estimates for the next
// request that differs only there (WorkloadEstimates::FindPass). Read-only once made: the risks
// and bill parts its offers' candidates read were all worked out while pricing.
struct CandidatePass {
  PricedOffers offers;
  CandidateList rejected;  // shared with each answer (copy on write)
  int candidates_considered = 0;
  std::vector<const InstanceType*> memory_rejects;  // RecommendContext::memory_rejects

  // The described candidates (reasons, warnings, worded bill) of the offers answers showed,
  // for the next answer that shows them: like the rest of the pass, a function of the offer,
  // the workload and the options' pricing fields. Thread-safe; at most kMaxDescribed.
  struct OfferKey {
    const InstanceType* type;
    const RegionPrice* region;
    const Estimate* estimate;  // kept alive by the described candidate
    int nodes;
    PricingMode mode;
    bool operator<(const OfferKey& o) const {
      return std::tie(type, region, estimate, nodes, mode) <
             std::tie(o.type, o.region, o.estimate, o.nodes, o.mode);
    }
  };
  static constexpr size_t kMaxDescribed = 64;
  std::shared_ptr<const Candidate> FindDescribed(const OfferKey& key) const;
  void KeepDescribed(const OfferKey& key, const Candidate& described) const;

  // How an objective ranks the offers (ranking.cc): the candidates of the offers kept, best
  // first (one per type, node count and mode unless all regions are listed), with their
  // numbers and Pareto marks but not described. A function of the pass, the objective and
  // all_regions, kept for the next answer that ranks the pass the same way, which shares the
  // elements (CandidateList) and copies only those it shows. Thread-safe.
  struct Ranking {
    CandidateList ranked;
  };
  // A ranking holds its candidates (~0.6 KB each: 300-600 over the built-in catalog, ~1,600
  // with all regions listed) and, once served, the plot's points (~150 bytes each). A pass
  // keeps the rankings made last up to kMaxKeptCandidates in all (over the built-in catalog,
  // the last one or two objectives asked for without all regions, which is what repeated
  // requests ask); one over the budget alone is not kept. It bounds what a server keeps
  // (EstimateCache: 32 workloads x 4 passes, ~0.8 MB of rankings each at most).
  static constexpr size_t kMaxKeptCandidates = 1000;
  std::shared_ptr<const Ranking> FindRanking(Objective objective, bool all_regions) const;
  void KeepRanking(Objective objective, bool all_regions,
                   std::shared_ptr<const Ranking> ranking) const;

  // The stale-price note of the offers an answer of this pass ranks (explanations.cc; empty
  // when none is stale): a function of the pass, the objective and all_regions (which pick the
  // region offers kept) and the day it is made on.
  bool FindStaleNote(Objective objective, bool all_regions, int today_days,
                     std::string* note) const;
  void KeepStaleNote(Objective objective, bool all_regions, int today_days,
                     const std::string& note) const;

 private:
  mutable std::mutex described_mutex_;
  mutable std::map<OfferKey, std::shared_ptr<const Candidate>> described_;
  // By RankingSlot(objective, all_regions).
  mutable std::shared_ptr<const Ranking> rankings_[2 * 3];
  mutable std::vector<size_t> ranking_recency_;  // slots kept, the most recent last
  struct StaleNote {
    int today_days = -1;  // none kept
    std::string note;
  };
  mutable StaleNote stale_notes_[2 * 3];  // as rankings_
};

// Where a candidate pass keeps what an objective and all_regions make of it.
inline size_t RankingSlot(Objective objective, bool all_regions) {
  return static_cast<size_t>(objective) * 2 + (all_regions ? 1 : 0);
}

// The options that change a candidate pass, as a key: all but the objective, `top`,
// `all_regions` and `describe_instances`, which only rank and show its offers.
std::string PricingOptionsKey(const RecommendOptions& options);

// What every stage reads, and what the candidate stage leaves for the notes.
struct RecommendContext {
  RecommendContext(const Catalog& c, const Workload& w, const RecommendOptions& o)
      : catalog(c), workload(w), options(o), request_currency(c.FindCurrency(o.currency)) {}

  const Catalog& catalog;
  const Workload& workload;
  const RecommendOptions& options;
  const CurrencyRate* request_currency;  // the options' currency; null when it has no rate
  CostData costs;  // egress, storage, licences, billing and spot rates (data/costs/)
  std::set<const Accelerator*> include_gpus;  // resolved --gpu
  std::set<const Accelerator*> exclude_gpus;  // resolved --exclude-gpu
  // Instance types rejected because the workload does not fit, for "what would fit" notes.
  std::vector<const InstanceType*> memory_rejects;
  WorkloadEstimates* estimates = nullptr;  // kept across requests of this workload, or none
  const CandidatePass* pass = nullptr;     // the kept pass this request ranks, or none
  EstimateScratch scratch;  // operator lists and pass times shared by this request's estimates
  // This request's estimates by hardware shape, for the types that share one.
  std::map<HardwareShape, std::shared_ptr<const WorkloadEstimates::Entry>> shapes;
  PricedOffers offers;        // the pricing stage's output, for the ranking stage
  bool describe_all = false;  // every priced offer gets its words at once (compare)
  int today_days = 0;
  int only_nodes = 0;  // compare: this node count only (0 = 1, 2, 4, ... up to max_nodes)
  unsigned excluded_cost_lines = 0;  // options.excluded_costs as bits (ExcludedCostLines)

  // Serving and streaming are priced for a period of operation rather than a job.
  bool priced_per_period() const { return workload.is_service(); }

  // `amount` in currency `from` in the options' currency (Catalog::Convert); 0 when a currency
  // has no rate.
  double ToRequestCurrency(double amount, const std::string& from) const;

  // The cost rows of `provider`'s bills in the options' currency (FindBillRows), found on first
  // use and kept for the request: a catalog has a handful of providers and thousands of offers.
  const BillRows& BillRowsFor(const std::string& provider) const;
  // pricing.cc: why an offer with none of the options' pricing modes is rejected, made once.
  const std::string& PriceUnknownReason() const;

 private:
  mutable std::vector<std::pair<std::string, BillRows>> bill_rows_;
  mutable std::string price_unknown_reason_;
  // The last currency converted from, and its rate: prices come in one or two currencies.
  mutable std::string last_currency_;
  mutable const CurrencyRate* last_currency_rate_ = nullptr;
};

// "12.34 USD" or "1,234 USD".
std::string Money(double amount, const std::string& currency);
// Whether `value` is among `wanted` (case-insensitive); an empty list wants everything.
bool AnyOf(const std::vector<std::string>& wanted, const std::string& value);

// candidates.cc: checks the options against the catalog and resolves GPU names.
Status ValidateRecommendOptions(RecommendContext* ctx);
// candidates.cc: every instance type and node count, rejected with a reason or estimated and
// handed to PriceCandidates.
void EnumerateCandidates(RecommendContext* ctx, Recommendation* out);

// candidates.cc: whether collectives between nodes of this fabric bypass the TCP stack (EFA,
// InfiniBand, RoCE, GPUDirect-TCPX).
bool HasRdma(Interconnect interconnect);

// candidates.cc: one instance type at every node count the context allows, rejected with a
// reason or estimated and priced.
void ConsiderInstance(RecommendContext* ctx, const InstanceType& t, Recommendation* out);

// candidates.cc: gives the first-ranked offer an estimate with its terms (the answer shows
// them; the candidate pass estimates without).
void ExplainBestEstimate(RecommendContext* ctx, Recommendation* out);

// candidates.cc: records a rejected candidate with its reason.
void AddRejection(Recommendation* out, const InstanceType& t, const RegionPrice* region, int nodes,
                  std::string reason, std::shared_ptr<const Estimate> estimate = nullptr);

// pricing.cc: one estimate priced in every region and pricing mode the options allow; the
// feasible offers go to `offers`, the rejected ones (with their reasons) to `out->rejected`.
void PriceCandidates(const RecommendContext& ctx, const InstanceType& t, int nodes,
                     const std::shared_ptr<const Estimate>& e, PricedOffers* offers,
                     Recommendation* out);
// pricing.cc: the candidate of a priced offer: its numbers, and with `describe` its reasons,
// warnings and worded bill.
Candidate MakeCandidate(const RecommendContext& ctx, const PricedOffer& offer, bool describe);
// pricing.cc: MakeCandidate into a default-constructed candidate where it is to stay (ranking
// makes hundreds: a move and a destruction each are worth saving).
void MakeCandidateIn(const RecommendContext& ctx, const PricedOffer& offer, bool describe,
                     Candidate* c);

// pricing.cc: a priced offer's reasons, warnings and bill wording, made from the same numbers
// as its pricing; nothing when it has them already or was rejected before pricing.
void DescribeCandidate(const RecommendContext& ctx, Candidate* c);
// ranking.cc: describes the offers an answer shows (Candidate::described).
void DescribeShown(const RecommendContext& ctx, Recommendation* out);

// serving_plan.cc: a serving candidate's autoscaling policy and, with `describe`, how its
// replicas were sized.
void PlanServing(const RecommendContext& ctx, const Estimate& e, bool describe, Candidate* c);
// serving_plan.cc: notes on the answer when quantised weights or another multi-GPU split serve
// the rate cheaper than the first choice.
void ProposeServingAlternatives(const RecommendContext& ctx, Recommendation* out);

// ranking.cc: orders the feasible offers, folds regions, makes the candidates of the offers
// kept (`out->ranked`) and marks the Pareto front. Returns whether the candidates are those of
// a ranking the pass kept (KeepRanking), which shares them.
bool RankCandidates(const RecommendContext& ctx, const PricedOffers& offers, Recommendation* out);
// ranking.cc: keeps the answer's ranked candidates, not yet described, with the pass (if any)
// for the next answer that ranks it the same way.
void KeepRanking(const RecommendContext& ctx, const Recommendation& answer);

// explanations.cc: the reasons and warnings of one priced candidate.
void ExplainCandidate(const RecommendContext& ctx, const InstanceType& t, const RegionPrice& r,
                      const Estimate& e, Candidate* c);
// explanations.cc: reasons that compare candidates (margin to the next, old generations).
void ExplainRanking(const RecommendContext& ctx, Recommendation* out);
// explanations.cc: notes about the whole request (what would fit when nothing does).
void AddRequestNotes(const RecommendContext& ctx, Recommendation* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_RECOMMENDER_H_
