#include "cloudfit/calibration_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "estimate/device_model.h"
#include "util/csv.h"

namespace cloudfit {

namespace {

// One fitted row of data/efficiency.csv and the cases it shapes.
struct FitParameter {
  const char* parameter;
  const char* stack;
  const char* group;
  double min, max;  // search range
  std::function<bool(const CalibrationCase&, const std::string& math_unit)> applies;
};

std::string Software(const CalibrationCase& c) {
  return c.workload.software.empty() ? "pytorch" : c.workload.software;
}

bool PytorchTraining(const CalibrationCase& c) {
  return c.family == MetricFamily::kTrainingThroughput && Software(c) == "pytorch";
}

// Whether the model has convolutions over feature maps (`spatial`) or over sequences.
bool HasConv(const CalibrationCase& c, bool spatial) {
  for (const Operator& op : c.workload.model.operators) {
    if (op.kind == OpKind::kConv && op.spatial == spatial) return true;
  }
  return false;
}

bool Tensor(const std::string& unit) { return unit.rfind("tensor", 0) == 0; }

// The parameters a fit adjusts. Everything else in data/efficiency.csv is read from a source.
const std::vector<FitParameter>& Parameters() {
  static const std::vector<FitParameter> params = {
      {"gemm_fraction", "pytorch", "tensor", 0.2, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && Tensor(u);
       }},
      {"gemm_fraction", "pytorch", "simt", 0.2, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && !Tensor(u);
       }},
      {"conv_fraction", "pytorch", "tensor", 0.1, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && Tensor(u) && HasConv(c, true);
       }},
      {"conv_fraction", "pytorch", "simt", 0.1, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && !Tensor(u) && HasConv(c, true);
       }},
      {"conv_fraction", "pytorch", "tensor-1d", 0.1, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && Tensor(u) && HasConv(c, false);
       }},
      {"conv_fraction", "pytorch", "simt-1d", 0.1, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return PytorchTraining(c) && !Tensor(u) && HasConv(c, false);
       }},
      {"gemm_k_half", "pytorch", "gpu", 1, 4096,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      {"stream_fraction", "pytorch", "*", 0.2, 1.0,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      {"reduction_fraction", "pytorch", "*", 0.1, 1.0,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      // Launch gaps between back-to-back kernels are a few microseconds on every CUDA GPU, and
      // PyTorch's eager dispatch tens at most: the ranges keep the fit from using either as
      // slack for effects they are not.
      {"kernel_gap_us", "pytorch", "gpu", 1, 8,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      {"dispatch_us", "pytorch", "gpu", 5, 40,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      {"sm_bandwidth_gbps", "pytorch", "gpu", 2, 60,
       [](const CalibrationCase& c, const std::string&) { return PytorchTraining(c); }},
      {"sm_bandwidth_gbps", "llama.cpp", "gpu", 2, 60,
       [](const CalibrationCase& c, const std::string&) {
         return c.family == MetricFamily::kLlmDecode && Software(c) == "llama.cpp";
       }},
      {"bus_bandwidth_gbps", "*", "host-staged", 0.5, 50,
       [](const CalibrationCase& c, const std::string&) {
         return c.num_gpus > 1 && c.hardware.peer_to_peer == false;
       }},
      {"gemm_fraction", "llama.cpp", "tensor", 0.05, 1.0,
       [](const CalibrationCase& c, const std::string& u) {
         return c.family == MetricFamily::kLlmPrefill && Software(c) == "llama.cpp" &&
                u == "tensor-fp16";
       }},
      {"stream_fraction", "llama.cpp", "*", 0.2, 1.0,
       [](const CalibrationCase& c, const std::string&) {
         return c.family == MetricFamily::kLlmDecode && Software(c) == "llama.cpp";
       }},
      {"kernel_gap_us", "llama.cpp", "gpu", 1, 8,
       [](const CalibrationCase& c, const std::string&) {
         return c.family == MetricFamily::kLlmDecode && Software(c) == "llama.cpp";
       }},
      // ggml launches every node from one C++ loop: a few microseconds of host time per
      // kernel (cudaLaunchKernel alone is 2-5), more with its per-node bookkeeping.
      {"dispatch_us", "llama.cpp", "gpu", 1, 20,
       [](const CalibrationCase& c, const std::string&) {
         return c.family == MetricFamily::kLlmDecode && Software(c) == "llama.cpp";
       }},
      {"layer_split_hop_us", "llama.cpp", "*", 1, 5000,
       [](const CalibrationCase& c, const std::string&) {
         return Software(c) == "llama.cpp" && c.num_gpus > 1 &&
                c.family == MetricFamily::kLlmDecode;
       }},
  };
  return params;
}

double CaseLogError(const Catalog& catalog, const CalibrationCase& c) {
  double predicted = 0;
  if (!PredictCase(catalog, c, &predicted).ok() || predicted <= 0 || c.measured <= 0) return 3;
  return std::abs(std::log(predicted / c.measured));
}

// The objective: the mean over (metric family, GPU) groups of the group's mean Cauchy loss
// log(1 + (e / 0.1)^2) of the log errors e. Groups weigh each GPU equally, so no GPU can be
// sacrificed to the others; the Cauchy loss behaves like squared error for small errors and
// like log |e| for outliers, so a few rows the model cannot describe do not drag the rest, and
// unlike a median it is smooth enough for coordinate descent to settle.
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

EfficiencyFactor* Row(EfficiencyTable* table, const FitParameter& p) {
  for (EfficiencyFactor& row : table->mutable_rows()) {
    if (row.parameter == p.parameter && row.stack == p.stack && row.group == p.group) return &row;
  }
  EfficiencyFactor row;
  row.parameter = p.parameter;
  row.stack = p.stack;
  row.group = p.group;
  row.value = std::sqrt(p.min * p.max);
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
    out += fmt::format("{}{} rows of {}", out.empty() ? "" : " + ", n, file);
  }
  std::string gpu_list;
  for (const std::string& g : gpus) gpu_list += (gpu_list.empty() ? "" : ", ") + g;
  return out + " (" + gpu_list + ")";
}

// The math unit a case's matrix multiplies run on (tensor-fp16, tensor-tf32, simt-fp32, ...).
std::string MathUnit(const Catalog& catalog, const CalibrationCase& c) {
  Hardware hw;
  if (!ResolveHardware(catalog, c.hardware, &hw).ok() || !hw.has_gpu()) return "cpu";
  return BuildDeviceModel(catalog.efficiency(), hw, c.workload.precision, RateScale()).math_unit;
}

}  // namespace

Status FitEfficiency(Catalog* catalog, const std::vector<CalibrationCase>& cases,
                     const FitOptions& options, FitReport* report,
                     const std::vector<size_t>& which) {
  std::vector<size_t> pool = which;
  if (pool.empty()) {
    for (size_t i = 0; i < cases.size(); ++i) pool.push_back(i);
  }
  std::vector<std::string> units(cases.size());
  for (size_t i : pool) units[i] = MathUnit(*catalog, cases[i]);
  struct Active {
    const FitParameter* param;
    std::vector<size_t> cases;
  };
  std::vector<Active> active;
  std::set<size_t> scored;
  for (const FitParameter& p : Parameters()) {
    Active a{&p, {}};
    for (size_t i : pool) {
      if (cases[i].fitted && p.applies(cases[i], units[i])) a.cases.push_back(i);
    }
    if (a.cases.empty()) continue;
    scored.insert(a.cases.begin(), a.cases.end());
    active.push_back(std::move(a));
  }
  EfficiencyTable& table = catalog->mutable_efficiency();
  // A fitted parameter without evidence in this fit leaves the table: the estimator then falls
  // back to a more general row or its default, and a cross-validation fold cannot borrow a
  // value fitted on the rows it left out.
  auto& all_rows = table.mutable_rows();
  all_rows.erase(std::remove_if(all_rows.begin(), all_rows.end(),
                                [&](const EfficiencyFactor& r) {
                                  for (const FitParameter& p : Parameters()) {
                                    if (r.parameter != p.parameter || r.stack != p.stack ||
                                        r.group != p.group) {
                                      continue;
                                    }
                                    for (const Active& a : active) {
                                      if (a.param == &p) return false;
                                    }
                                    return true;
                                  }
                                  return false;
                                }),
                 all_rows.end());
  // Create every row first: adding rows moves the table, so pointers are taken afterwards.
  for (const Active& a : active) Row(&table, *a.param);
  std::vector<std::pair<const Active*, EfficiencyFactor*>> rows;
  for (const Active& a : active) {
    EfficiencyFactor* row = Row(&table, *a.param);
    // Every fit starts from the same place, whatever the table held, so it is reproducible.
    row->value = std::sqrt(a.param->min * a.param->max);
    rows.push_back({&a, row});
  }
  std::vector<size_t> all(scored.begin(), scored.end());
  report->parameters = static_cast<int>(rows.size());
  report->cases = static_cast<int>(all.size());
  report->objective_before = Objective(*catalog, cases, all);
  // Coordinate descent: the first passes scan each factor's whole range, later ones a shrinking
  // window around its current value, so factors that trade off against each other settle.
  const double kWindows[] = {0, 0, 0, 4, 2, 1.5, 1.25, 1.1, 1.05};
  int passes = std::clamp(options.passes, 1, 9);
  for (int pass = 0; pass < passes; ++pass) {
    // Shorter schedules keep the wide scans and the last, finest window.
    int index = passes >= 9 ? pass : pass < passes - 1 ? std::min(pass, 2) : 8;
    double window = kWindows[index];
    for (auto& [a, row] : rows) {
      double lo = a->param->min, hi = a->param->max;
      if (window > 0) {
        lo = std::max(lo, row->value / window);
        hi = std::min(hi, row->value * window);
      }
      double best_value = row->value;
      double best_error = Objective(*catalog, cases, a->cases);
      const int kSteps = window > 0 ? 12 : 24;
      for (int s = 0; s <= kSteps; ++s) {
        double v = lo * std::pow(hi / lo, static_cast<double>(s) / kSteps);
        row->value = v;
        double err = Objective(*catalog, cases, a->cases);
        if (err < best_error - 1e-12) {
          best_error = err;
          best_value = v;
        }
      }
      row->value = best_value;
    }
  }
  for (auto& [a, row] : rows) {
    // Three significant figures: the data file should not pretend to more.
    row->value = std::stod(fmt::format("{:.3g}", row->value));
    row->fitted_to = Describe(cases, a->cases);
    row->source = "fitted by cloudfit calibrate fit (per-GPU Cauchy loss of log error)";
  }
  report->objective_after = Objective(*catalog, cases, all);
  return Status::OK();
}

std::string_view HoldoutName(Holdout holdout) { return holdout == Holdout::kGpu ? "gpu" : "model"; }

Status CrossValidate(Catalog* catalog, const std::vector<CalibrationCase>& cases, Holdout holdout,
                     const FitOptions& options, CrossValidation* out) {
  out->holdout = holdout;
  out->stats.clear();
  out->rows.clear();
  out->fitted.clear();
  auto key = [&](const CalibrationCase& c) {
    return holdout == Holdout::kGpu ? c.gpu : c.workload.model.name;
  };
  std::set<std::string> groups;
  for (const CalibrationCase& c : cases) {
    if (c.family != MetricFamily::kFits && c.family != MetricFamily::kLargeModelTraining &&
        !c.held_out) {
      groups.insert(key(c));
    }
  }
  const std::vector<EfficiencyFactor> saved = catalog->efficiency().rows();
  // Every error below comes from a fit that never saw the case's group.
  std::map<std::string, std::vector<double>> errors;
  for (const std::string& group : groups) {
    std::vector<size_t> train;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (key(cases[i]) != group) train.push_back(i);
    }
    catalog->mutable_efficiency().mutable_rows() = saved;
    FitReport report;
    Status s = FitEfficiency(catalog, cases, options, &report, train);
    if (!s.ok()) {
      catalog->mutable_efficiency().mutable_rows() = saved;
      return s;
    }
    std::string& fitted = out->fitted[group];
    for (const EfficiencyFactor& r : catalog->efficiency().rows()) {
      if (r.source.find("cloudfit calibrate fit") == std::string::npos) continue;
      fitted += fmt::format("{}{}/{}/{} = {}", fitted.empty() ? "" : ", ", r.parameter, r.stack,
                            r.group, r.value);
    }
    for (const CalibrationCase& c : cases) {
      if (key(c) != group || c.family == MetricFamily::kFits || c.measured <= 0 || c.held_out) {
        continue;
      }
      double p = 0;
      bool ok = PredictCase(*catalog, c, &p).ok() && p > 0;
      out->rows.push_back({&c, ok ? p : 0});
      double ape = ok ? std::abs(p - c.measured) / c.measured : 1;
      std::string family(MetricFamilyName(c.family));
      errors[family].push_back(ape);
      errors[family + "/" + group].push_back(ape);
    }
  }
  catalog->mutable_efficiency().mutable_rows() = saved;
  for (const auto& [k, v] : errors) {
    out->stats[k] = {static_cast<int>(v.size()), Percentile(v, 0.5), Percentile(v, 0.9), 0};
  }
  return Status::OK();
}

std::string FormatEfficiencyCsv(const EfficiencyTable& table) {
  std::string out =
      "# Efficiency factors: what real software reaches of what the hardware sustains, per "
      "software\n# stack and operator group, and the constants of memory and links. Hardware "
      "differences live in\n# accelerators.csv (sustained clocks, measured bandwidth, SM "
      "counts), model differences in each\n# model's operators; the few fractions left here "
      "are properties of the software. Rows whose\n# fitted_to names calibration rows are "
      "produced by `cloudfit calibrate fit`; the others are read\n# from the cited source. See "
      "docs/estimation.md.\n"
      "parameter,stack,group,value,fitted_to,source\n";
  for (const EfficiencyFactor& r : table.rows()) {
    out += fmt::format("{},{},{},{},{},{}\n", CsvEscape(r.parameter), CsvEscape(r.stack),
                       CsvEscape(r.group), r.value, CsvEscape(r.fitted_to), CsvEscape(r.source));
  }
  return out;
}

}  // namespace cloudfit
