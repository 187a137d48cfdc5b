// What an EstimateScratch holds (cloudfit/estimate.h): the training estimator's operator lists
// and pass times, shared between the estimates of one workload.
#ifndef CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_
#define CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cloudfit/estimate.h"
#include "cloudfit/operators.h"
#include "estimate/op_timing.h"
#include "estimate/training_plan.h"

namespace cloudfit {

struct EstimateScratch::Tables {
  // The forward operators of one sample, by (tensor parallel, pipeline parallel).
  std::map<std::pair<int, int>, std::shared_ptr<const std::vector<Operator>>> operators;

  // A pass's time depends on the operators, the micro-batch and the device model; a GPU's device
  // model depends on the GPU alone (and the workload's precision, stack and calibration, which
  // a scratch keeps fixed), never on the instance around it: not on the share of its memory an
  // instance gives (fractional GPUs), which only decides what fits.
  enum class PassKind { kForward, kBackward, kSelectiveRecompute };
  using PassKey = std::tuple<const Accelerator*, int /*tensor*/, int /*pipeline*/,
                             double /*micro-batch*/, PassKind>;
  std::map<PassKey, PassTime> passes;

  // The passes of one micro-batch added up, by the same key without the pass (the workload's
  // recomputation fixes which passes there are).
  using MicroBatchKey =
      std::tuple<const Accelerator*, int /*tensor*/, int /*pipeline*/, double /*micro-batch*/>;
  std::map<MicroBatchKey, std::shared_ptr<const MicroBatchTime>> micro_batches;

  // Activation bytes of a training layout by (tensor parallel, micro-batch): TrainingSetup.
  std::map<std::pair<int, int>, double> activation_bytes;

  // A GPU's device model under the workload's precision, calibration and toolkit, by (GPU,
  // memory per GPU): all that BuildDeviceModel and ApplySoftwareToolkit read of a GPU instance.
  std::map<std::pair<const Accelerator*, double>, DeviceModel> devices;

  // Communication models by the links they are built from: BuildCommunicationModel reads of
  // the hardware only its GPUs per node, nodes and links.
  using LinksKey = std::tuple<int /*GPUs per node*/, int /*nodes*/, IntraNodeLink, double,
                              std::string /*intra-node link*/, Interconnect, double,
                              bool /*inter-node assumed*/>;
  std::map<LinksKey, CommunicationModel> links;

  // Stack profiles by (stack, unit class): CachedStackProfile.
  std::vector<StackProfile> stacks;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_ESTIMATE_SCRATCH_H_
