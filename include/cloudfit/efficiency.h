// Efficiency factors: the fraction of a datasheet peak that real software reaches, and the
// memory traffic per FLOP of each class of workload. They live in data/efficiency.csv, each row
// with the public measurements it was fitted to, and are looked up from the most specific row.
#ifndef CLOUDFIT_EFFICIENCY_H_
#define CLOUDFIT_EFFICIENCY_H_

#include <string>
#include <string_view>
#include <vector>

namespace cloudfit {

struct EfficiencyFactor {
  std::string parameter;       // e.g. compute_efficiency
  std::string architecture;    // CUDA compute capability ("8.0"), "cpu", or "*"
  std::string precision;       // fp32, tf32, fp16, bf16, fp8, int8, or "*"
  std::string workload_class;  // transformer, cnn, rnn, flow, recsys, llm_decode, ... or "*"
  double value = 0;
  std::string fitted_to;  // the calibration rows (or source) behind the value
  std::string source;
};

class EfficiencyTable {
 public:
  EfficiencyTable() = default;
  explicit EfficiencyTable(std::vector<EfficiencyFactor> rows) : rows_(std::move(rows)) {}

  // The value of the most specific row matching the keys ("*" rows match anything): the workload
  // class first, then the architecture (exact, then its nearest calibrated relative, see
  // NearestCalibratedArchitecture, then "*"), then the precision. `found` tells which row
  // matched (nullptr: none, and `fallback` is returned).
  double Lookup(std::string_view parameter, std::string_view architecture,
                std::string_view precision, std::string_view workload_class, double fallback,
                const EfficiencyFactor** found = nullptr) const;

  const std::vector<EfficiencyFactor>& rows() const { return rows_; }
  std::vector<EfficiencyFactor>& mutable_rows() { return rows_; }

 private:
  std::vector<EfficiencyFactor> rows_;
};

// Compute capabilities with no calibration rows map to the nearest that has them: Ada (8.9) and
// Ampere GA10x (8.6) share an SM design; Blackwell (10.x, 12.x) is taken as Hopper (9.0);
// Pascal and older as Volta (7.0).
std::string NearestCalibratedArchitecture(std::string_view compute_capability);

}  // namespace cloudfit

#endif  // CLOUDFIT_EFFICIENCY_H_
