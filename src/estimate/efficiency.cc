#include "cloudfit/efficiency.h"

#include <cstdlib>

#include "catalog/loaders.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// -1 when `row_key` does not match `key`; 1 for an exact match, 0 for a wildcard.
int Match(const std::string& row_key, std::string_view key) {
  if (row_key == "*") return 0;
  return row_key == key ? 1 : -1;
}

}  // namespace

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
  const EfficiencyFactor* best = nullptr;
  int best_score = -1;
  for (int attempt = 0; attempt < 2 && best == nullptr; ++attempt) {
    std::string arch = attempt == 0 ? std::string(architecture)
                                    : NearestCalibratedArchitecture(architecture);
    if (attempt == 1 && arch == architecture) break;
    for (const EfficiencyFactor& row : rows_) {
      if (row.parameter != parameter) continue;
      int a = Match(row.architecture, arch);
      int p = Match(row.precision, precision);
      int c = Match(row.workload_class, workload_class);
      if (a < 0 || p < 0 || c < 0) continue;
      // An exact architecture outranks anything else; then workload class, then precision.
      int score = a * 4 + c * 2 + p;
      // A wildcard architecture only counts on the second attempt if nothing specific matched.
      if (attempt == 0 && a == 0 && arch != "*") score -= 0;
      if (score > best_score) {
        best = &row;
        best_score = score;
      }
    }
    // On the first attempt, only accept a row that names the architecture; otherwise look at
    // the nearest calibrated one before settling for a wildcard.
    if (attempt == 0 && best != nullptr && best->architecture == "*" &&
        NearestCalibratedArchitecture(architecture) != architecture) {
      const EfficiencyFactor* wildcard = best;
      best = nullptr;
      best_score = -1;
      std::string nearest = NearestCalibratedArchitecture(architecture);
      for (const EfficiencyFactor& row : rows_) {
        if (row.parameter != parameter || row.architecture != nearest) continue;
        int p = Match(row.precision, precision);
        int c = Match(row.workload_class, workload_class);
        if (p < 0 || c < 0) continue;
        int score = c * 2 + p;
        if (score > best_score) {
          best = &row;
          best_score = score;
        }
      }
      if (best == nullptr) best = wildcard;
      break;
    }
  }
  if (found) *found = best;
  return best ? best->value : fallback;
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
