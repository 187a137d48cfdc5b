// The seed guides' decision tree (training or inference, model size, data size, precision,
// latency, cost), walked with the numbers of one workload: at each step, which way it goes and
// why.
#ifndef CLOUDFIT_DECISION_TREE_H_
#define CLOUDFIT_DECISION_TREE_H_

#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"

namespace cloudfit {

struct DecisionStep {
  std::string question;  // "training or inference?"
  std::string answer;    // which way this workload goes
  std::string because;   // the numbers behind it
};

// The workload must be finalized.
std::vector<DecisionStep> WalkDecisionTree(const Catalog& catalog, const Workload& w);

}  // namespace cloudfit

#endif  // CLOUDFIT_DECISION_TREE_H_
