// cloudfit compare: two to five instance types (or GPU counts) side by side for one workload.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/request_flags.h"
#include "cloudfit/compare.h"
#include "cloudfit/compare_report.h"
#include "cloudfit/request.h"

namespace cloudfit::cli {

namespace {

struct CompareFlags {
  WorkloadFlags workload;
  CalibrationFlags calibration;
  OptionFlags options;
  std::vector<std::string> choices;
  FormatOptions format;
};

void Run(const GlobalOptions& global, const CompareFlags& f) {
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  nlohmann::json options = f.options.ToJson();
  // Compare shows every pricing mode unless told otherwise.
  if (!options.contains("pricing")) options["pricing"] = "ondemand,spot,reserved-1y,reserved-3y";
  options["all_regions"] = false;
  nlohmann::json request = MergeOptions(WorkloadJson(f.workload), options);
  nlohmann::json calibration = CalibrationJson(f.calibration);
  if (!calibration.empty()) request["calibration"] = calibration;
  RecommendRequest decoded;
  ThrowIfError(WithFlagNames(DecodeRecommendRequest(catalog, request, &decoded)));
  const Workload& w = decoded.workload;
  const RecommendOptions& o = decoded.options;
  Comparison c;
  ThrowIfError(WithFlagNames(Compare(catalog, w, o, f.choices, &c)));
  if (f.format.json) {
    PrintJson(ComparisonToJson(w, o, c));
    return;
  }
  if (f.format.format() == OutputFormat::kTable) {
    std::cout << fmt::format("compare: {} {} ({}) on {} choices\n",
                             w.model.name.empty() ? "-" : w.model.name, WorkloadKindName(w.kind),
                             NumericFormatName(w.precision), c.entries.size());
    if (!w.assumptions.empty()) {
      std::cout << "assumptions (give the field to change one):\n";
      for (const Assumption& a : w.assumptions) {
        std::cout << fmt::format("  {} = {}: {}\n", a.field, a.value, a.why);
      }
    }
  }
  std::cout << ComparisonTable(c, o).Render(f.format.format());
  if (f.format.format() != OutputFormat::kTable) return;
  for (const CompareEntry& e : c.entries) {
    if (!e.choice.resolution.empty()) std::cout << "note: " << e.choice.resolution << "\n";
  }
  std::cout << "\ndifferences:\n";
  for (const std::string& d : c.differences) std::cout << "  " << d << "\n";
}

}  // namespace

void AddCompareCommand(CLI::App* app, const GlobalOptions* global) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* c = app->add_subcommand(
      "compare", "Two to five instance types or GPU counts side by side for one workload");
  c->add_option(
       "choices", f->choices,
       "Instance types (p4d.24xlarge, p4d.24xlarge:2 for two nodes) or GPU counts (4xH100)")
      ->required();
  AddWorkloadFlags(c, &f->workload);
  AddCalibrationFlags(c, &f->calibration);
  AddRecommendOptionFlags(c, &f->options, /*ranking=*/false);
  AddFormatFlags(c, &f->format);
  c->callback([global, f]() { Run(*global, *f); });
}

}  // namespace cloudfit::cli
