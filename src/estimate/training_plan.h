// Training internals shared by the estimator's files: the memory each device holds for a
// layout (training_memory.cc) and the time of one optimizer step (training.cc).
#ifndef CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_
#define CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_

#include <map>
#include <string>
#include <utility>
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
  // Activation bytes by (tensor parallel, micro-batch): they depend on the workload alone, so a
  // scratch keeps them for all of its estimates (null: computed each time).
  std::map<std::pair<int, int>, double>* activation_bytes = nullptr;

  // The model's parameters, or its adapters' under LoRA: counted once, asked at every layout.
  double TrainableParams() const;

 private:
  mutable double trainable_params_ = -1;
};

// One micro-batch of a layout on one device: its forward, backward and recomputed passes added
// up (`all`), and each pass's seconds. The same for every layout of a (GPU, split, micro-batch),
// so a scratch keeps it: the layout search reads it for every layout it weighs.
struct MicroBatchTime {
  PassTime all;
  double forward_s = 0;
  double backward_s = 0;
  double recompute_s = 0;
};

// Memory per device for a layout, by component (training_memory.cc).
MemoryBreakdown TrainingMemory(const TrainingSetup& s, const Layout& l);
// Activation bytes a device keeps for the backward pass of one micro-batch.
double TrainingActivationBytes(const TrainingSetup& s, const Layout& l);
// Of a model with an operator list, per sample: the elements of the outputs autograd keeps for
// backward (every operator's but those written in place, freed, views and attention score
// products), the bytes of the indices kept beside them (max pooling's int64), and the largest
// output, whose gradients backward holds beside them.
struct KeptOutputs {
  double elements = 0;
  double index_bytes = 0;
  double largest = 0;
};
KeptOutputs OperatorListOutputs(const Model& m, bool flash_attention, double spatial_scale);
// Bytes of the 16-bit or fp32 gradients one device holds of the trainable parameters.
double GradientBytesPerParam(const Workload& w, bool lora);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_TRAINING_PLAN_H_
