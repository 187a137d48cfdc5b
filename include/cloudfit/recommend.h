// Recommend: every instance type, region, node count and pricing mode of the catalog as a
// candidate for a workload, each kept or rejected with the reason, priced with the expected cost
// of spot interruptions and commitments, ranked by the objective, with the time-versus-cost
// Pareto front, reasons and warnings computed from the numbers.
#ifndef CLOUDFIT_RECOMMEND_H_
#define CLOUDFIT_RECOMMEND_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cloudfit/cost.h"
#include "cloudfit/estimate.h"

namespace cloudfit {

enum class Objective { kCheapest, kFastest, kBalanced };
bool ParseObjective(std::string_view name, Objective* out);
std::string_view ObjectiveName(Objective objective);

struct RecommendOptions {
  std::vector<std::string> providers;  // empty = all
  std::vector<std::string> regions;
  std::vector<std::string> gpus;          // GPU models to include (names or aliases)
  std::vector<std::string> exclude_gpus;  // GPU models to leave out
  std::vector<std::string> instances;     // only these instance types
  std::optional<double> deadline_hours;
  std::optional<double> budget;    // in `currency`, for the whole job (serving: per month)
  std::optional<double> min_gpus;  // per candidate (all nodes)
  std::optional<double> max_gpus;
  std::vector<PricingMode> pricing = {PricingMode::kOnDemand, PricingMode::kSpot};
  bool include_cpu = true;  // CPU-only instances where the workload can run on them
  int max_nodes = 1;        // multi-node candidates for training, rendering, preprocessing
  std::string currency = "USD";
  Objective objective = Objective::kCheapest;
  double serving_hours = 730;  // serving is priced per month of operation
  // Price a fixed number of hours of use instead of the job's estimated duration (an always-on
  // machine, a year of experiments: the on-demand versus reserved question).
  std::optional<double> fixed_hours;
  bool allow_scale_to_zero = false;
  // Keep every region of an instance type and pricing mode; by default only the best one
  // (the same type in 17 regions at one price tells a user nothing new).
  bool all_regions = false;
  size_t top = 10;  // candidates listed in the answer (0 = all)
  // Instance types whose every priced offer, ranked or rejected, is described (--why-not),
  // beyond the first `top`.
  std::vector<std::string> describe_instances;
  // Cost lines left out of the bill: egress, storage, startup, billing, licences.
  std::vector<std::string> excluded_costs;
  // Multi-node training only on instances with an RDMA fabric (EFA, InfiniBand, RoCE) or
  // GPUDirect-TCPX; by default a TCP/Ethernet cluster is kept when its all-reduce costs less
  // than half of each step, and priced with that cost.
  bool require_rdma = false;
  // Spot for a tightly coupled (synchronous) job on more nodes than this is rejected: every
  // reclaim stops all of them, and that many spot nodes at once are not guaranteed. AWS advises
  // against spot for workloads tightly coupled between instance nodes (Spot best practices);
  // the limit of 4 nodes (32 GPUs) is a judgement, not a published figure.
  int max_spot_nodes = 4;
};

// The autoscaling plan for a serving candidate.
struct AutoscalingPolicy {
  int min_replicas = 1;
  int max_replicas = 1;
  double scale_out_utilisation = 0.7;  // add a replica above this GPU utilisation
  double scale_in_utilisation = 0.3;   // remove one below it (the seeds' rule of thumb)
  double utilisation_at_rate = 0;      // at the requested rate with the planned replicas
};

// What can stop a job before it finishes, and its expected cost in time: spot capacity
// reclaimed (per provider and GPU class) and GPU failures (every pricing mode). A synchronous
// multi-node job stops when any node does, so the rates add up over nodes and GPUs.
struct JobRisk {
  int nodes = 1;
  double mtbf_hours = 0;  // the whole job's mean time between interruptions (0 = none expected)
  double spot_interruptions_per_month = 0;  // per instance, from data (0 when not spot)
  std::string rate_basis;                   // where the spot rate comes from
  double hardware_mtbf_hours = 0;           // GPU failures over all the job's GPUs
  double checkpoint_seconds = 0;            // writing the state once
  double checkpoint_interval_hours = 0;     // Young/Daly; 0 = run without checkpoints
  double restart_hours = 0;                 // interruption to running again (MTTR)
  double overhead_fraction = 0;             // expected extra time over an uninterrupted run
  double expected_interruptions = 0;
  double probability_interrupted = 0;  // at least once during the run
  bool synchronous = true;             // one node's interruption stops every node
  bool assumed_rate = false;           // the rate is an assumption, not a published figure
};
using SpotRisk = JobRisk;

// The JSON text of a described candidate kept with a candidate pass, shared by the copies the
// answers that show the same offer make of it (Candidate::text). Each text is kept with what an
// answer may change after the offer was described (the Pareto mark, reasons and warnings that
// compare it with the other offers shown, the estimate behind it) and the currency, and is
// written again only when one of them differs. Thread-safe.
struct CandidateText {
  struct Kept {
    std::shared_ptr<const Estimate> estimate;  // held, so that its address is not reused
    bool pareto = false;
    std::string currency;
    std::vector<std::string> reasons;
    std::vector<std::string> warnings;
    std::string json;
  };
  static constexpr size_t kMaxKept = 4;
  std::mutex mutex;
  std::vector<Kept> kept;
  // The answer's best_estimate when this offer ranks first: the estimate behind it, written
  // with the workload of the pass (the same for every answer that shares the pass).
  std::shared_ptr<const Estimate> best_estimate;
  std::string best_estimate_json;
};

struct Candidate {
  const InstanceType* instance = nullptr;
  const RegionPrice* region = nullptr;
  PricingMode mode = PricingMode::kOnDemand;
  int nodes = 1;
  int replicas = 1;  // serving
  std::shared_ptr<const Estimate> estimate;
  // All in the options' currency. Unknown prices stay nullopt and are never ranked as free.
  std::optional<double> price_per_hour;  // the whole fleet: nodes x replicas
  double hours = 0;                      // expected wall-clock hours, interruptions included
  std::optional<double> total_cost;
  std::optional<double> cost_per_unit;
  std::string unit;             // "1M tokens", "epoch", "1k images", "frame", "GB", ...
  std::optional<JobRisk> spot;  // spot candidates: the risk priced into hours and cost
  std::optional<JobRisk> risk;  // every job candidate: interruptions of any kind
  std::vector<CostLine> costs;  // the bill when `described`; total_cost is the sum of known lines
  std::optional<AutoscalingPolicy> autoscaling;
  std::optional<double> break_even_utilisation;  // reserved: share of the term worth paying for
  std::string rejection;                         // empty when feasible
  std::vector<std::string> reasons;
  std::vector<std::string> warnings;
  bool pareto = false;
  // Whether reasons, warnings and the bill (`costs`, line by line with details and sources)
  // were made. Recommend makes them for the offers an answer shows: the first `top` ranked, the
  // Pareto front and every priced offer of `describe_instances`; the rest carry their numbers
  // (hours, price, total, cost per unit, risk) and, if rejected, why.
  bool described = false;
  // Its JSON as answers wrote it, when it is a described offer of a kept candidate pass.
  std::shared_ptr<CandidateText> text;

  bool feasible() const { return rejection.empty(); }
  double total_gpus() const;
};

// When nothing is feasible: one change to the request that would make something feasible, as
// the workload fields and options to set (named as a request or workload file names them), so
// a program or the web page can apply it. `note` says it in words (it is in `notes` too).
struct FitHint {
  std::string note;
  std::vector<std::pair<std::string, std::string>> workload;  // field -> value
  std::vector<std::pair<std::string, std::string>> options;   // option -> value
};

// Candidates that copy in constant time: copies share the elements until one of them is changed
// (copy on write). A batch or a server gives every request of a repeated workload the same ~500
// ranked offers and ~1,000 rejections, and an answer changes only the few it shows (their
// reasons, warnings and bill). Reading is as a vector's; changing one element goes through
// Change(i), which keeps a copy of that element for this list alone while the rest stays
// shared; changing the list (push_back, reserve, Mutable()) first makes every element this
// list's own. Copies may be read from several threads at once.
class CandidateList {
 public:
  using value_type = Candidate;

  // Walks the shared elements and, in step, the ones this list changed.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Candidate;
    using difference_type = std::ptrdiff_t;
    using pointer = const Candidate*;
    using reference = const Candidate&;

    const_iterator() = default;
    reference operator*() const {
      return next_ != changed_end_ && next_->first == index_ ? next_->second : items_[index_];
    }
    pointer operator->() const { return &**this; }
    const_iterator& operator++() {
      if (next_ != changed_end_ && next_->first == index_) ++next_;
      ++index_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator& o) const { return index_ == o.index_; }
    bool operator!=(const const_iterator& o) const { return index_ != o.index_; }

   private:
    friend class CandidateList;
    using Changed = std::map<size_t, Candidate>::const_iterator;
    const_iterator(const Candidate* items, size_t index, Changed next, Changed changed_end)
        : items_(items), index_(index), next_(next), changed_end_(changed_end) {}
    const Candidate* items_ = nullptr;
    size_t index_ = 0;
    Changed next_, changed_end_;
  };

  const_iterator begin() const {
    return const_iterator(shared_ ? shared_->items.data() : nullptr, 0, changed_.begin(),
                          changed_.end());
  }
  const_iterator end() const {
    return const_iterator(nullptr, size(), changed_.end(), changed_.end());
  }
  size_t size() const { return shared_ ? shared_->items.size() : 0; }
  bool empty() const { return size() == 0; }
  const Candidate& operator[](size_t i) const {
    if (!changed_.empty()) {
      if (auto it = changed_.find(i); it != changed_.end()) return it->second;
    }
    return shared_->items[i];
  }
  const Candidate& front() const { return (*this)[0]; }
  const Candidate& back() const { return (*this)[size() - 1]; }

  // Element i, this list's own to change: in place when no other list shares the elements,
  // else a copy kept beside them. The reference stays valid until the list itself changes.
  Candidate& Change(size_t i) {
    if (auto it = changed_.find(i); it != changed_.end()) return it->second;
    if (shared_.use_count() == 1) {
      shared_->kept_text.reset();
      return shared_->items[i];
    }
    return changed_.emplace(i, shared_->items[i]).first->second;
  }

  void push_back(Candidate c) { Mutable().push_back(std::move(c)); }
  void reserve(size_t n) { Mutable().reserve(n); }
  // The elements, this list's own (copied first when shared, the changed ones in place).
  std::vector<Candidate>& Mutable() {
    if (!shared_) {
      shared_ = std::make_shared<Shared>();
    } else if (shared_.use_count() > 1) {
      auto own = std::make_shared<Shared>();
      own->items = shared_->items;
      shared_ = std::move(own);
    }
    shared_->kept_text.reset();
    for (auto& [i, c] : changed_) shared_->items[i] = std::move(c);
    changed_.clear();
    return shared_->items;
  }

  // Text about the shared elements, made by `make(elements)` the first time a copy asks and
  // kept with them for the other copies (the server's plot points, ~60 KB for each answer of a
  // kept ranking). `make` sees the elements as shared, without this list's changed ones: it
  // may read only what Change leaves as it was (an answer changes the words, the bill and the
  // estimate's terms of the offers it shows, never their numbers or Pareto marks). One text per
  // list; `make` must always be the same function.
  template <typename Make>
  std::shared_ptr<const std::string> KeptText(const Make& make) const {
    if (!shared_) return std::make_shared<const std::string>(make(std::vector<Candidate>()));
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (!shared_->kept_text) {
      shared_->kept_text = std::make_shared<const std::string>(make(shared_->items));
    }
    return shared_->kept_text;
  }

 private:
  struct Shared {
    std::vector<Candidate> items;
    std::mutex mutex;  // guards kept_text
    std::shared_ptr<const std::string> kept_text;
  };
  std::shared_ptr<Shared> shared_;       // null when empty
  std::map<size_t, Candidate> changed_;  // by index: elements changed here alone
};

struct Recommendation {
  CandidateList ranked;    // feasible, best first
  CandidateList rejected;  // with reasons
  int candidates_considered = 0;
  std::vector<std::string> notes;  // about the whole request (catalog age, what would fit)
  std::vector<FitHint> hints;      // what would fit, when nothing does
};

// The offers of one workload priced under one set of pricing options (src/recommend): opaque
// here.
struct CandidatePass;

// The estimates of one workload, by instance type and node count, kept for the next
// recommendation of the same workload: an estimate is a function of the catalog, the workload
// and the hardware alone, so a repeated workload costs pricing and ranking only. Failures are
// kept too. So are the last few candidate passes (every offer priced, every rejection), each
// a function of the workload and the options that price, so a request that differs from an
// earlier one only in how the answer ranks or shows the offers (objective, top, --all-regions,
// --why-not) costs ranking only. Thread-safe.
class WorkloadEstimates {
 public:
  struct Entry {
    Status status;
    std::shared_ptr<const Estimate> estimate;  // when status is OK; without terms
    // The same estimate with its terms, once an answer has shown it (the first-ranked offer).
    std::shared_ptr<const Estimate> explained;
    // Why the estimate rules its hardware out whatever the options (it does not fit in
    // memory), worded once for every request of the workload; empty when it fits.
    std::string unfit;
  };
  // Whether (type, nodes) was estimated; if so, *out is what it gave.
  bool Find(const InstanceType* type, int nodes, Entry* out) const;
  // Keeps `entry` for (type, nodes), replacing what was kept.
  void Insert(const InstanceType* type, int nodes, Entry entry);

  // The candidate pass kept for options whose pricing fields give `pricing_key`, or null.
  std::shared_ptr<const CandidatePass> FindPass(const std::string& pricing_key) const;
  // Keeps `pass` for `pricing_key`, dropping the least recently kept beyond kMaxPasses.
  void KeepPass(const std::string& pricing_key, std::shared_ptr<const CandidatePass> pass);
  // A pass of the built-in catalog holds ~2,000 offers and rejections (~1 MB): a few per
  // workload cover a user varying the ranking, and bound a server's memory.
  static constexpr size_t kMaxPasses = 4;

 private:
  struct KeyHash {
    size_t operator()(const std::pair<const InstanceType*, int>& k) const {
      return std::hash<const void*>()(k.first) ^ (static_cast<size_t>(k.second) << 24);
    }
  };
  mutable std::mutex mutex_;
  std::unordered_map<std::pair<const InstanceType*, int>, Entry, KeyHash> entries_;
  // Most recently kept last.
  std::vector<std::pair<std::string, std::shared_ptr<const CandidatePass>>> passes_;
};

// WorkloadEstimates of the workloads recommended on recently, for a JSON Lines batch or a
// server. Tied to the one catalog its estimates were made on; thread-safe; holds at most
// `max_workloads`, dropping the least recently used.
class EstimateCache {
 public:
  explicit EstimateCache(size_t max_workloads = 32);
  // The estimates of the workload decoded from `workload_key` (RecommendRequest::workload_key),
  // empty the first time it is asked for.
  std::shared_ptr<WorkloadEstimates> For(const std::string& workload_key);

 private:
  const size_t max_workloads_;
  std::mutex mutex_;
  uint64_t clock_ = 0;
  struct Slot {
    std::shared_ptr<WorkloadEstimates> estimates;
    uint64_t last_used = 0;
  };
  std::unordered_map<std::string, Slot> workloads_;
};

// The workload must be finalized (FinalizeWorkload). With `estimates`, which must be the same
// workload's on the same catalog, estimates already made are reused and new ones kept.
Status Recommend(const Catalog& catalog, const Workload& workload, const RecommendOptions& options,
                 Recommendation* out, WorkloadEstimates* estimates = nullptr);

// One instance type at exactly `nodes` nodes, priced in every region and pricing mode the
// options allow, best region first (cloudfit compare).
Status RecommendOn(const Catalog& catalog, const Workload& workload,
                   const RecommendOptions& options, const InstanceType& instance, int nodes,
                   Recommendation* out);

// Why an instance type was rejected (or where it ranks), for --why-not.
std::vector<std::string> ExplainInstance(const Recommendation& r, const std::string& instance);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_H_
