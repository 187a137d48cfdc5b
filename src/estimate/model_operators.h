// The forward operators of a model that its transformer shape does not describe: its rows of
// data/operators.csv, or, for a model given only by its FLOPs, a generic convolutional mix
// (and a note saying so).
#ifndef CLOUDFIT_ESTIMATE_MODEL_OPERATORS_H_
#define CLOUDFIT_ESTIMATE_MODEL_OPERATORS_H_

#include <string>
#include <vector>

#include "cloudfit/model.h"

namespace cloudfit {

std::vector<Operator> DataModelOperators(const Model& m, std::vector<std::string>* notes);

// The operators a run executes: training keeps dropout and the loss; a fused attention kernel
// drops the score matrix's unfused softmax.
std::vector<Operator> OperatorsForRun(const std::vector<Operator>& ops, bool training,
                                      bool flash_attention);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_MODEL_OPERATORS_H_
