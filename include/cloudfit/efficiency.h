// Efficiency factors: the fraction of what the hardware sustains that real software reaches,
// per software stack and operator group, and the few constants that shape communication. They
// live in data/efficiency.csv, each row with the public measurement it was fitted to or the
// source it was read from. There are deliberately few: what differs between GPUs comes from the
// accelerator data (sustained clocks, bandwidth, SM counts), what differs between models from
// their operator mix, and what remains is a property of the software.
#ifndef CLOUDFIT_EFFICIENCY_H_
#define CLOUDFIT_EFFICIENCY_H_

#include <string>
#include <string_view>
#include <vector>

namespace cloudfit {

struct EfficiencyFactor {
  std::string parameter;  // e.g. gemm_fraction
  std::string stack;      // pytorch, llama.cpp, vllm, tensorrt-llm, cpu, or "*"
  std::string group;      // operator group, math unit, memory type or link type, or "*"
  double value = 0;
  std::string fitted_to;  // the calibration rows (or measurement) behind the value
  std::string source;
};

class EfficiencyTable {
 public:
  EfficiencyTable() = default;
  explicit EfficiencyTable(std::vector<EfficiencyFactor> rows) : rows_(std::move(rows)) {}

  // The value of the most specific row: exact stack and group, then exact stack and "*", then
  // "*" and the exact group, then "*" and "*". `found` tells which row matched (nullptr: none,
  // and `fallback` is returned).
  double Lookup(std::string_view parameter, std::string_view stack, std::string_view group,
                double fallback, const EfficiencyFactor** found = nullptr) const;

  const std::vector<EfficiencyFactor>& rows() const { return rows_; }
  std::vector<EfficiencyFactor>& mutable_rows() { return rows_; }

 private:
  std::vector<EfficiencyFactor> rows_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_EFFICIENCY_H_
