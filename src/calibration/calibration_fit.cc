#include "cloudfit/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "estimate/estimate_internal.h"
#include "util/csv.h"

namespace cloudfit {

namespace {

struct Parameter {
  EfficiencyFactor key;           // parameter, architecture, precision, workload_class
  std::vector<size_t> cases;      // the cases whose prediction it shapes
  double min = 0, max = 0;        // search range
};

double CaseLogError(const Catalog& catalog, const CalibrationCase& c) {
  double predicted = 0;
  if (!PredictCase(catalog, c, &predicted).ok() || predicted <= 0 || c.measured <= 0) return 3;
  return std::abs(std::log(predicted / c.measured));
}

// The objective: the mean over (metric family, GPU) groups of the group's mean Cauchy loss
// log(1 + (e / 0.1)^2) of the log errors e. Groups weigh each GPU equally, so no GPU can be
// sacrificed to the others; the Cauchy loss behaves like squared error for small errors and
// like log |e| for outliers, so a few rows the model cannot describe (Tacotron's recurrence,
// Transformer-XL's adaptive softmax) do not drag the rest, and unlike a median it is smooth
// enough for coordinate descent to settle.
double Objective(const Catalog& catalog, const std::vector<CalibrationCase>& cases,
                 const std::vector<size_t>& which) {
  std::map<std::string, std::pair<double, int>> groups;
  for (size_t i : which) {
    double e = CaseLogError(catalog, cases[i]) / 0.1;
    auto& g = groups[std::string(MetricFamilyName(cases[i].family)) + "/" + cases[i].gpu];
    g.first += std::log1p(e * e);
    g.second += 1;
  }
  if (groups.empty()) return 0;
  double total = 0;
  for (const auto& [key, g] : groups) total += g.first / g.second;
  return total / groups.size();
}

EfficiencyFactor* Row(EfficiencyTable* table, const EfficiencyFactor& key, double initial) {
  for (EfficiencyFactor& row : table->mutable_rows()) {
    if (row.parameter == key.parameter && row.architecture == key.architecture &&
        row.precision == key.precision && row.workload_class == key.workload_class) {
      return &row;
    }
  }
  EfficiencyFactor row = key;
  row.value = initial;
  row.source = "fitted by cloudfit calibrate fit";
  table->mutable_rows().push_back(row);
  return &table->mutable_rows().back();
}

std::string Describe(const std::vector<CalibrationCase>& cases, const std::vector<size_t>& which) {
  std::map<std::string, int> per_file;
  std::set<std::string> gpus;
  for (size_t i : which) {
    std::string id = cases[i].id;
    ++per_file[id.substr(0, id.find(':'))];
    gpus.insert(cases[i].gpu);
  }
  std::string out;
  for (const auto& [file, n] : per_file) {
    std::string folder = file == "large_model_training.csv" ? "tests/calibration/"
                                                             : "shared/calibration/";
    out += fmt::format("{}{} rows of {}{}", out.empty() ? "" : " + ", n, folder, file);
  }
  std::string gpu_list;
  for (const std::string& g : gpus) gpu_list += (gpu_list.empty() ? "" : ", ") + g;
  return out + " (" + gpu_list + ")";
}

}  // namespace

Status FitEfficiency(Catalog* catalog, const std::vector<CalibrationCase>& cases,
                     FitReport* report) {
  // Group cases by the factors that shape them.
  std::map<std::string, Parameter> params;
  auto add = [&](const std::string& parameter, const std::string& arch, const std::string& prec,
                 const std::string& cls, size_t i, double min, double max) {
    std::string k = parameter + "|" + arch + "|" + prec + "|" + cls;
    Parameter& p = params[k];
    p.key.parameter = parameter;
    p.key.architecture = arch;
    p.key.precision = prec;
    p.key.workload_class = cls;
    p.min = min;
    p.max = max;
    p.cases.push_back(i);
  };
  std::vector<size_t> scored;
  for (size_t i = 0; i < cases.size(); ++i) {
    const CalibrationCase& c = cases[i];
    if (c.family == MetricFamily::kFits || c.family == MetricFamily::kMemory) continue;
    if (c.family == MetricFamily::kLargeModelTraining) {
      // Only MosaicML's single-node rows inform the fit, and only the GEMM-size term (the
      // shared rows have no model above 3B); the multi-node rows and the papers' rows stay a
      // held-out check of generality.
      if (c.source.find("llm-foundry") == std::string::npos || c.num_gpus > 8) continue;
      scored.push_back(i);
      add("gemm_half_size", "*", "*", "transformer", i, 16, 8192);
      continue;
    }
    const Accelerator* gpu = nullptr;
    if (!catalog->FindAccelerator(c.gpu, &gpu).ok()) continue;
    scored.push_back(i);
    DeviceRates rates = GpuRates(*gpu, c.workload.precision);
    std::string cls = ComputeClass(c.workload.model);
    if (c.family == MetricFamily::kTrainingThroughput) {
      add("compute_efficiency", rates.architecture, rates.precision_key, "*", i, 0.05, 1.0);
      add("bandwidth_efficiency", rates.architecture, "*", "*", i, 0.3, 1.0);
      add("class_compute_factor", "*", "*", cls, i, 0.2, 3.0);
      if (c.workload.model.layers > 0) {
        add("activation_traffic", "*", "*", cls, i, 0.1, 50);
        if (cls == "transformer") add("gemm_half_size", "*", "*", cls, i, 16, 8192);
      }
      else add("flops_per_byte", "*", "*", cls, i, 1, 100000);
      if (c.num_gpus > 1) add("sync_seconds_per_doubling", "*", "*", "*", i, 1e-5, 0.1);
    } else if (c.family == MetricFamily::kLlmDecode) {
      add("bandwidth_efficiency", rates.architecture, rates.precision_key, "llm_decode", i, 0.2,
          1.0);
      if (c.num_gpus > 1) add("layer_split_hop_s", "*", "*", "*", i, 1e-6, 5e-3);
    } else if (c.family == MetricFamily::kLlmPrefill) {
      add("compute_efficiency", rates.architecture, rates.precision_key, "llm_prefill", i, 0.05,
          1.0);
      if (c.num_gpus > 1) add("layer_split_hop_s", "*", "*", "*", i, 1e-6, 5e-3);
    }
  }
  // A per-architecture efficiency needs evidence from several models; fitted to one model's
  // rows it would describe that software stack, not the hardware (the PEFT rows, one model
  // under Hugging Face's trainer, are all there is for Ada). Such architectures borrow the
  // nearest calibrated one's efficiency instead (NearestCalibratedArchitecture).
  for (auto it = params.begin(); it != params.end();) {
    std::set<std::string> models;
    for (size_t i : it->second.cases) models.insert(cases[i].workload.model.name);
    bool per_architecture = (it->second.key.parameter == "compute_efficiency" ||
                             it->second.key.parameter == "bandwidth_efficiency") &&
                            it->second.key.workload_class == "*";
    it = per_architecture && models.size() < 3 ? params.erase(it) : std::next(it);
  }
  EfficiencyTable& table = catalog->mutable_efficiency();
  // Rows an earlier fit wrote but this one does not fit are dropped, so the table says only
  // what the current evidence supports.
  auto& all = table.mutable_rows();
  all.erase(std::remove_if(all.begin(), all.end(),
                           [&](const EfficiencyFactor& r) {
                             if (r.source.rfind("fitted by cloudfit", 0) != 0) return false;
                             std::string k = r.parameter + "|" + r.architecture + "|" +
                                             r.precision + "|" + r.workload_class;
                             return params.count(k) == 0;
                           }),
            all.end());
  // Create every row first: adding rows moves the table, so pointers are taken afterwards.
  for (auto& [k, p] : params) {
    double initial = std::sqrt(p.min * p.max);
    if (p.key.parameter == "allreduce_overlap") initial = 0.7;
    Row(&table, p.key, initial);
  }
  // Every fit starts from the same place, whatever the table held, so it is reproducible.
  std::vector<std::pair<Parameter*, EfficiencyFactor*>> rows;
  for (auto& [k, p] : params) {
    EfficiencyFactor* row = Row(&table, p.key, 0);
    row->value = p.key.parameter == "allreduce_overlap"      ? 0.7
                 : p.key.parameter == "class_compute_factor" ? 1.0
                                                              : std::sqrt(p.min * p.max);
    rows.push_back({&p, row});
  }
  report->parameters = static_cast<int>(rows.size());
  report->cases = static_cast<int>(scored.size());
  report->objective_before = Objective(*catalog, cases, scored);
  // Coordinate descent: the first passes scan each factor's whole range, later ones a shrinking
  // window around its current value, so factors that trade off against each other settle.
  const double kWindows[] = {0, 0, 0, 4, 2, 1.5, 1.25, 1.1, 1.05};
  for (double window : kWindows) {
    for (auto& [p, row] : rows) {
      double lo = p->min, hi = p->max;
      if (window > 0) {
        lo = std::max(p->min, row->value / window);
        hi = std::min(p->max, row->value * window);
      }
      double best_value = row->value;
      double best_error = Objective(*catalog, cases, p->cases);
      const int kSteps = window > 0 ? 16 : 40;
      for (int s = 0; s <= kSteps; ++s) {
        double v = lo * std::pow(hi / lo, static_cast<double>(s) / kSteps);
        row->value = v;
        double err = Objective(*catalog, cases, p->cases);
        if (err < best_error - 1e-12) {
          best_error = err;
          best_value = v;
        }
      }
      row->value = best_value;
    }
  }
  for (auto& [p, row] : rows) {
    // Three significant figures: the data file should not pretend to more.
    row->value = std::stod(fmt::format("{:.3g}", row->value));
    row->fitted_to = Describe(cases, p->cases);
    row->source = "fitted by cloudfit calibrate fit (per-GPU Cauchy loss of log error)";
  }
  report->objective_after = Objective(*catalog, cases, scored);
  return Status::OK();
}

std::string FormatEfficiencyCsv(const EfficiencyTable& table) {
  std::string out =
      "# Efficiency factors: the fraction of datasheet peaks that real software reaches, and "
      "the\n# memory traffic of each workload class. Rows with fitted_to naming shared/calibration "
      "rows\n# are produced by `cloudfit calibrate fit --calibration ../shared/calibration`; the "
      "others\n# are set by hand from the cited source. See docs/estimation.md.\n"
      "parameter,architecture,precision,workload_class,value,fitted_to,source\n";
  for (const EfficiencyFactor& r : table.rows()) {
    out += fmt::format("{},{},{},{},{},{},{}\n", CsvEscape(r.parameter), CsvEscape(r.architecture),
                       CsvEscape(r.precision), CsvEscape(r.workload_class), r.value,
                       CsvEscape(r.fitted_to), CsvEscape(r.source));
  }
  return out;
}

}  // namespace cloudfit
