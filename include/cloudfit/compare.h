// Compare: two to five hardware choices side by side for one workload, each with its time,
// memory, bottleneck, cost in every pricing mode (cheapest region), interruption risk, and the
// differences between them stated in words.
#ifndef CLOUDFIT_COMPARE_H_
#define CLOUDFIT_COMPARE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cloudfit/recommend.h"

namespace cloudfit {

struct CompareChoice {
  std::string label;                 // as given: "p4d.24xlarge", "p4d.24xlarge:2", "4xH100"
  const InstanceType* instance = nullptr;  // nullptr: bare GPUs, estimated but not priced
  int nodes = 1;
  std::string resolution;            // how a GPU count became an instance type, if it did
};

struct ModeOffer {
  PricingMode mode = PricingMode::kOnDemand;
  std::optional<Candidate> best;  // the cheapest feasible region
  std::string rejection;          // why none, when none
};

struct CompareEntry {
  CompareChoice choice;
  std::shared_ptr<const Estimate> estimate;  // null when it could not be estimated
  std::string rejection;                     // why it cannot run at all ("" when it can)
  std::vector<ModeOffer> offers;             // one per pricing mode asked for
  const Candidate* cheapest() const;         // the cheapest feasible offer, or nullptr
};

struct Comparison {
  std::vector<CompareEntry> entries;
  std::vector<std::string> differences;  // in words, each against the first runnable choice
};

// Parses "TYPE", "TYPE:NODES", "NxGPU" or "GPU:N" against the catalog. A GPU count becomes the
// cheapest instance type (on-demand, any region, the options' providers) with exactly that many
// of that GPU, or bare GPUs when none exists.
Status ParseCompareChoice(const Catalog& catalog, const RecommendOptions& options,
                          const std::string& text, CompareChoice* out);

// 2 to 5 choices; the workload must be finalized. Each instance is priced with the options
// (every pricing mode unless options.pricing was narrowed).
Status Compare(const Catalog& catalog, const Workload& workload, const RecommendOptions& options,
               const std::vector<std::string>& choices, Comparison* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_COMPARE_H_
