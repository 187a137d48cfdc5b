// What an EstimateScratch holds (cloudfit/estimate.h): the training estimator's operator lists
// and pass times, shared between the estimates of one workload.
#ifndef CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_
#define CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_

#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "cloudfit/estimate.h"
#include "cloudfit/operators.h"
#include "estimate/op_timing.h"

namespace cloudfit {

struct EstimateScratch::Tables {
  // The forward operators of one sample, by (tensor parallel, pipeline parallel).
  std::map<std::pair<int, int>, std::shared_ptr<const std::vector<Operator>>> operators;

  // A pass's time depends on the operators, the micro-batch and the device model; a GPU's device
  // model depends on the GPU alone (and the workload's precision, stack and calibration, which
  // a scratch keeps fixed), never on the instance around it.
  enum class PassKind { kForward, kBackward, kSelectiveRecompute };
  using PassKey = std::tuple<const Accelerator*, double /*GPU memory*/, int /*tensor*/,
                             int /*pipeline*/, double /*micro-batch*/, PassKind>;
  std::map<PassKey, PassTime> passes;

  // Stack profiles by (stack, unit class): CachedStackProfile.
  std::vector<StackProfile> stacks;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_
