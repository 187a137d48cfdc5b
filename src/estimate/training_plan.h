// Training internals shared by the estimator's files: the memory each device holds for a
// layout (training_memory.cc) and the time of one optimizer step (training.cc).
#ifndef CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_
#define CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_

#include <string>
#include <vector>

#include "cloudfit/estimate.h"
#include "estimate/communication.h"
#include "estimate/device_model.h"
#include "estimate/op_timing.h"

namespace cloudfit {

// What a training step is made of, on one device, before any layout is chosen.
struct TrainingSetup {
  const Workload* workload = nullptr;
  const Hardware* hardware = nullptr;
  DeviceModel device;
  StackProfile stack;
  CommunicationModel comm;
  bool transformer = false;  // operators from the shape (else from data/operators.csv)
  bool lora = false;
  int seq = 1;               // tokens per sample (1 for non-sequence models)
  double spatial_scale = 1;  // (resolution / the model's)^2 for spatial operators
  std::vector<std::string> notes;

  // The model's parameters, or its adapters' under LoRA: counted once, asked at every layout.
  double TrainableParams() const;

 private:
  mutable double trainable_params_ = -1;
};

// Memory per device for a layout, by component (training_memory.cc).
MemoryBreakdown TrainingMemory(const TrainingSetup& s, const Layout& l);
// Activation bytes a device keeps for the backward pass of one micro-batch.
double TrainingActivationBytes(const TrainingSetup& s, const Layout& l);
// Bytes of the 16-bit or fp32 gradients one device holds of the trainable parameters.
double GradientBytesPerParam(const Workload& w, bool lora);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_
