#include "cloudfit/efficiency.h"

#include <cstdlib>

#include "catalog/loaders.h"
#include "util/strings.h"

namespace cloudfit {

std::string NearestCalibratedArchitecture(std::string_view cc) {
  double v = std::atof(std::string(cc).c_str());
  if (v <= 0) return std::string(cc);
  if (v < 7.0) return "7.0";
  if (v < 7.5) return "7.0";
  if (v < 8.0) return "7.5";
  if (v < 8.6) return "8.0";
  if (v < 9.0) return "8.6";
  return "9.0";
}

double EfficiencyTable::Lookup(std::string_view parameter, std::string_view architecture,
                               std::string_view precision, std::string_view workload_class,
                               double fallback, const EfficiencyFactor** found) const {
  // Tiers, most specific first: the workload class outranks the architecture (a decode row of a
  // neighbouring GPU says more about decoding than a training row of this one), the exact
  // architecture outranks its nearest calibrated relative, which outranks "*"; within a tier an
  // exact precision outranks "*".
  std::string nearest = NearestCalibratedArchitecture(architecture);
  const std::string classes[] = {std::string(workload_class), "*"};
  const std::string archs[] = {std::string(architecture), nearest, "*"};
  for (const std::string& cls : classes) {
    for (size_t a = 0; a < 3; ++a) {
      if (a == 1 && nearest == architecture) continue;
      const EfficiencyFactor* best = nullptr;
      for (const EfficiencyFactor& row : rows_) {
        if (row.parameter != parameter || row.workload_class != cls ||
            row.architecture != archs[a]) {
          continue;
        }
        if (row.precision == precision) {
          best = &row;
          break;
        }
        if (row.precision == "*" && best == nullptr) best = &row;
      }
      if (best != nullptr) {
        if (found) *found = best;
        return best->value;
      }
    }
  }
  if (found) *found = nullptr;
  return fallback;
}

Status ParseEfficiency(const CsvTable& table, std::vector<EfficiencyFactor>* out) {
  Status s = table.RequireColumns({"parameter", "architecture", "precision", "workload_class",
                                   "value", "fitted_to", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    EfficiencyFactor f;
    f.parameter = r.RequiredText("parameter");
    f.architecture = r.RequiredText("architecture");
    f.precision = r.RequiredText("precision");
    f.workload_class = r.RequiredText("workload_class");
    f.value = r.Number("value", 1e-9, 1e9);
    f.fitted_to = r.RequiredText("fitted_to");
    f.source = r.RequiredText("source");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(f));
  }
  return Status::OK();
}

}  // namespace cloudfit
