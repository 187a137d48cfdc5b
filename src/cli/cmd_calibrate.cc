// cloudfit calibrate: score the estimates against public measurements (shared/calibration), and
// refit the efficiency factors from them.
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/calibration.h"
#include "cloudfit/calibration_fit.h"
#include "cloudfit/calibration_transfer.h"
#include "util/file.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct CalibrateOptions {
  std::string dir = "../shared/calibration";
  std::vector<std::string> extra;  // tests/calibration tables: scored, never fitted
  bool cases = false;
  FormatOptions format;
  bool cross_validate = false;
  int passes = 9;
  std::string out;
};

std::vector<CalibrationCase> LoadCases(const Catalog& catalog, const CalibrateOptions& o,
                                       std::vector<SkippedRow>* skipped) {
  std::vector<CalibrationCase> cases;
  ThrowIfError(LoadCalibrationCases(catalog, o.dir, &cases, skipped));
  for (const std::string& path : o.extra) {
    ThrowIfError(LoadExtraCases(catalog, path, &cases, skipped));
  }
  return cases;
}

nlohmann::json StatsJson(const std::map<std::string, ErrorStats>& stats) {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [key, s] : stats) {
    groups[key] = {{"cases", s.cases}, {"median_ape", s.median_ape}, {"p90_ape", s.p90_ape}};
  }
  return groups;
}

std::string StatsTable(const std::map<std::string, ErrorStats>& stats, const std::string& title) {
  Table table({{"group", title},
               {"cases", "cases", true},
               {"median", "median error", true},
               {"p90", "p90 error", true}});
  for (const auto& [key, s] : stats) {
    table.AddRow({key, std::to_string(s.cases), FormatNumber(100 * s.median_ape, 1) + "%",
                  FormatNumber(100 * s.p90_ape, 1) + "%"});
  }
  return table.Render(OutputFormat::kTable);
}

// Every case with its prediction and error; with cross-validation, also its error when its GPU,
// then its model, was left out of the fit: the rows that make the cross-validated figures.
Table CasesTable(const Catalog& catalog, const std::vector<CalibrationCase>& cases,
                 const std::vector<CrossValidation>& validations) {
  // Errors twice, as the group table has them: "12.3%" for people, 12.3 for machines.
  std::vector<Table::Column> columns = {{"id", "row"},
                                        {"metric", "metric"},
                                        {"gpu", "gpu"},
                                        {"model", "model"},
                                        {"measured", "measured", true},
                                        {"predicted", "predicted", true},
                                        {"error", "error", true, 0, Audience::kPeople},
                                        {"error_percent", "", true, 0, Audience::kMachines}};
  std::vector<std::map<const CalibrationCase*, double>> left_out;
  for (const CrossValidation& cv : validations) {
    std::string what(HoldoutName(cv.holdout));
    columns.push_back(
        {"error_" + what + "_out", "error, " + what + " left out", true, 0, Audience::kPeople});
    columns.push_back({"error_" + what + "_out_percent", "", true, 0, Audience::kMachines});
    auto& predicted = left_out.emplace_back();
    for (const CrossValidation::Row& r : cv.rows) predicted[r.c] = r.predicted;
  }
  Table rows(columns);
  // The error of prediction p in both forms; unknown where the case has no error to give.
  auto add_error = [](const CalibrationCase& c, double p, std::vector<TableCell>* row) {
    if (c.measured <= 0 || c.family == MetricFamily::kFits) {
      row->push_back(TableCell::Unknown());
      row->push_back(TableCell::Unknown());
      return;
    }
    std::string percent = FormatNumber(100 * (p - c.measured) / c.measured, 1);
    row->push_back(percent + "%");
    row->push_back(percent);
  };
  for (const CalibrationCase& c : cases) {
    double p = 0;
    Status s = PredictCase(catalog, c, &p);
    std::vector<TableCell> row = {c.id,
                                  std::string(MetricFamilyName(c.family)),
                                  fmt::format("{}x {}", c.num_gpus, c.gpu),
                                  c.workload.model.name,
                                  FormatNumber(c.measured, 3),
                                  s.ok() ? TableCell(FormatNumber(p, 3)) : TableCell::Unknown()};
    if (s.ok()) {
      add_error(c, p, &row);
    } else {
      row.push_back(s.message());
      row.push_back(TableCell::Unknown());
    }
    for (const auto& predicted : left_out) {
      // Not left out (a held-out row, or a fits row): unknown. Left out and not estimated:
      // "failed", which the figures count as a 100% error.
      auto it = predicted.find(&c);
      if (it != predicted.end() && it->second > 0) {
        add_error(c, it->second, &row);
      } else {
        row.push_back(it == predicted.end() ? TableCell::Unknown() : TableCell("failed"));
        row.push_back(TableCell::Unknown());
      }
    }
    rows.AddRow(row);
  }
  return rows;
}

void RunReport(const GlobalOptions& global, const CalibrateOptions& o) {
  Catalog catalog = LoadCatalogOrThrow(global);
  std::vector<SkippedRow> skipped;
  std::vector<CalibrationCase> cases = LoadCases(catalog, o, &skipped);
  std::map<std::string, ErrorStats> stats = ScoreCases(catalog, cases);
  std::map<std::string, TransferStats> transfer = ScoreCalibrationTransfer(catalog, cases);
  std::vector<CrossValidation> validations;
  if (o.cross_validate) {
    FitOptions fit;
    fit.passes = o.passes;
    for (Holdout holdout : {Holdout::kGpu, Holdout::kModel}) {
      CrossValidation cv;
      ThrowIfError(CrossValidate(&catalog, cases, holdout, fit, &cv));
      validations.push_back(std::move(cv));
    }
  }
  if (o.format.json) {
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [key, s] : stats) {
      groups[key] = {{"cases", s.cases},
                     {"median_ape", s.median_ape},
                     {"p90_ape", s.p90_ape},
                     {"agreement", s.agreement}};
    }
    nlohmann::json skip = nlohmann::json::array();
    for (const SkippedRow& r : skipped) skip.push_back({{"row", r.id}, {"reason", r.reason}});
    nlohmann::json transfers = nlohmann::json::object();
    for (const auto& [family, t] : transfer) {
      transfers[family] = {{"groups", t.groups},
                           {"pairs", t.pairs},
                           {"median_ape_before", t.median_ape_before},
                           {"median_ape_after", t.median_ape_after},
                           {"p90_ape_before", t.p90_ape_before},
                           {"p90_ape_after", t.p90_ape_after},
                           {"far_pairs", t.far_pairs},
                           {"far_median_ape_before", t.far_median_ape_before},
                           {"far_median_ape_after", t.far_median_ape_after}};
    }
    nlohmann::json cross = nlohmann::json::object();
    for (const CrossValidation& cv : validations) {
      cross[std::string("leave_one_") + std::string(HoldoutName(cv.holdout)) + "_out"] =
          StatsJson(cv.stats);
    }
    PrintJson({{"schema", "cloudfit.calibration/v1"},
               {"groups", groups},
               {"cross_validation", cross},
               {"measured_transfer", transfers},
               {"skipped", skip}});
    return;
  }
  // Errors are percentages: numbers for machines, "12.3%" for people; "-" where not defined.
  auto percent = [](double fraction, int digits, bool applies) {
    return applies ? TableCell(FormatNumber(100 * fraction, digits)) : TableCell::Unknown();
  };
  auto percent_text = [](double fraction, int digits, bool applies) {
    return applies ? TableCell(FormatNumber(100 * fraction, digits) + "%") : TableCell::Unknown();
  };
  Table table({{"group", "metric / GPU"},
               {"cases", "cases", true},
               {"median", "median error", true, 0, Audience::kPeople},
               {"median_error_percent", "", true, 0, Audience::kMachines},
               {"p90", "p90 error", true, 0, Audience::kPeople},
               {"p90_error_percent", "", true, 0, Audience::kMachines},
               {"agreement", "fits agreement", true, 0, Audience::kPeople},
               {"fits_agreement_percent", "", true, 0, Audience::kMachines}});
  for (const auto& [key, s] : stats) {
    bool fits = key.rfind("fits", 0) == 0;
    table.AddRow({key, std::to_string(s.cases), percent_text(s.median_ape, 1, !fits),
                  percent(s.median_ape, 3, !fits), percent_text(s.p90_ape, 1, !fits),
                  percent(s.p90_ape, 3, !fits), percent_text(s.agreement, 0, fits),
                  percent(s.agreement, 3, fits)});
  }
  // CSV is one table: the cases with --cases, else the errors per group.
  if (o.format.format() == OutputFormat::kCsv) {
    PrintTable(o.cases ? CasesTable(catalog, cases, validations) : table, o.format);
    return;
  }
  std::cout << fmt::format("{} cases from {}, {} rows not modelled\n\n", cases.size(), o.dir,
                           skipped.size());
  PrintTable(table, o.format);
  Table moved({{"family", "calibrated on one GPU, predicting the others"},
               {"pairs", "pairs", true},
               {"before", "median error", true},
               {"after", "calibrated", true},
               {"far", "model off by >25%: pairs", true},
               {"far_before", "median error", true},
               {"far_after", "calibrated", true}});
  for (const auto& [family, t] : transfer) {
    moved.AddRow({family, std::to_string(t.pairs), FormatNumber(100 * t.median_ape_before, 1) + "%",
                  FormatNumber(100 * t.median_ape_after, 1) + "%", std::to_string(t.far_pairs),
                  FormatNumber(100 * t.far_median_ape_before, 1) + "%",
                  FormatNumber(100 * t.far_median_ape_after, 1) + "%"});
  }
  std::cout << "\n--measured, checked: each workload measured on several GPUs is calibrated on one "
               "and predicted on the others\n"
            << moved.Render(o.format.format(), o.format.layout());
  for (const CrossValidation& cv : validations) {
    std::string what(HoldoutName(cv.holdout));
    std::cout << "\ncross-validated, leave one " << what << " out: each " << what
              << "'s rows predicted by a fit that never saw them\n"
              << StatsTable(cv.stats, "metric / held-out " + what);
  }
  if (o.cases) {
    std::cout << "\n";
    PrintTable(CasesTable(catalog, cases, validations), o.format);
  }
  if (!skipped.empty()) {
    std::cout << "\nnot modelled:\n";
    // Row ids carry a file name a user chose: shown escaped, as every echoed value is.
    for (const SkippedRow& r : skipped) {
      std::cout << "  " << Shown(r.id, 200) << ": " << r.reason << "\n";
    }
  }
}

void RunFit(const GlobalOptions& global, const CalibrateOptions& o) {
  Catalog catalog = LoadCatalogOrThrow(global);
  std::vector<SkippedRow> skipped;
  std::vector<CalibrationCase> cases = LoadCases(catalog, o, &skipped);
  FitReport report;
  FitOptions fit;
  fit.passes = o.passes;
  ThrowIfError(FitEfficiency(&catalog, cases, fit, &report));
  std::string text = FormatEfficiencyCsv(catalog.efficiency());
  Status written = WriteFileAtomically(o.out, text);
  if (!written.ok()) throw CliError{"--out: " + written.message()};
  std::cout << fmt::format("fitted {} factors to {} cases: objective {:.3f} -> {:.3f}; wrote {}\n",
                           report.parameters, report.cases, report.objective_before,
                           report.objective_after, o.out);
}

}  // namespace

void AddCalibrateCommand(CLI::App* app, const GlobalOptions* global) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* c = app->add_subcommand(
      "calibrate", "Score estimates against public measurements, or refit efficiency factors");
  c->require_subcommand(1);
  CLI::App* report = c->add_subcommand("report", "Median and p90 error per metric and GPU");
  report->add_option("--cases-dir", options->dir, "Directory of calibration CSVs")
      ->capture_default_str();
  report->add_option("--extra", options->extra,
                     "Also score held-out public figures (any table of tests/calibration/; "
                     "repeatable), never fitted");
  report->add_flag("--cases", options->cases, "List every case with its error")
      ->group(kGroupOutput);
  report->add_flag("--cross-validate", options->cross_validate,
                   "Also refit without each GPU, then without each model, and score the rows "
                   "left out (leave-one-out cross-validation)");
  report
      ->add_option("--passes", options->passes,
                   "Coordinate-descent passes of each cross-validation fit (1-9)")
      ->check(CLI::Range(1, 9))
      ->capture_default_str();
  AddFormatFlags(report, &options->format);
  report->callback([global, options]() { RunReport(*global, *options); });
  CLI::App* fit = c->add_subcommand("fit", "Fit data/efficiency.csv to the calibration cases");
  fit->add_option("--cases-dir", options->dir, "Directory of calibration CSVs")
      ->capture_default_str();
  fit->add_option("--extra", options->extra,
                  "Held-out tables (tests/calibration/): loaded for the report, never fitted");
  fit->add_option("--out", options->out, "Where to write the fitted efficiency.csv")->required();
  fit->add_option("--passes", options->passes, "Coordinate-descent passes (1-9)")
      ->check(CLI::Range(1, 9))
      ->capture_default_str();
  fit->callback([global, options]() { RunFit(*global, *options); });
}

}  // namespace cloudfit::cli
