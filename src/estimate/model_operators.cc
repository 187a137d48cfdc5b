#include "estimate/model_operators.h"

#include <algorithm>
#include <cmath>

namespace cloudfit {

std::vector<Operator> DataModelOperators(const Model& m, std::vector<std::string>* notes) {
  if (!m.operators.empty()) return m.operators;
  // A generic convolutional network of the model's FLOPs: one matrix group over a 56 x 56
  // feature map, then normalisation, activation and residual traffic of 0.0015 elements read
  // and as many written per FLOP (about ResNet-50's ratio).
  notes->push_back(m.name + " has no operator list (data/operators.csv): a generic "
                            "convolutional mix of its FLOPs is assumed");
  double flops = m.gflops_per_sample.value_or(0) * 1e9;
  Operator conv;
  conv.label = "convolutions (generic)";
  conv.kind = OpKind::kConv;
  conv.m = 3136;
  conv.n = conv.k = std::sqrt(std::max(1.0, flops / (2 * conv.m)));
  conv.spatial = true;
  Operator traffic;
  traffic.label = "normalisation, activation and residual traffic (generic)";
  traffic.kind = OpKind::kElementwise;
  traffic.read_elements = traffic.written_elements = flops * 0.0015;
  traffic.spatial = true;
  return {conv, traffic};
}

std::vector<Operator> OperatorsForRun(const std::vector<Operator>& ops, bool training,
                                      bool flash_attention) {
  std::vector<Operator> out;
  out.reserve(ops.size());
  for (const Operator& op : ops) {
    if (op.when == OpWhen::kTraining && !training) continue;
    if (op.when == OpWhen::kUnfusedAttention && flash_attention) continue;
    out.push_back(op);
  }
  return out;
}

}  // namespace cloudfit
