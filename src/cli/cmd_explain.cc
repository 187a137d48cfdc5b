// cloudfit explain: the seed guides' decision tree, walked with this workload's numbers.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/decision_tree.h"
#include "cloudfit/estimate_json.h"

namespace cloudfit::cli {

namespace {

struct ExplainFlags {
  WorkloadFlags workload;
  FormatOptions format;
};

void Run(const GlobalOptions& global, const ExplainFlags& f) {
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  Workload w = BuildWorkload(f.workload);
  ThrowIfError(FinalizeWorkload(catalog, &w));
  std::vector<DecisionStep> steps = WalkDecisionTree(catalog, w);
  if (f.format.format() == OutputFormat::kCsv || f.format.format() == OutputFormat::kMarkdown) {
    Table table({{"step", "#", true},
                 {"question", "question"},
                 {"answer", "answer"},
                 {"because", "because"}});
    int n = 1;
    for (const DecisionStep& s : steps) {
      table.AddRow({std::to_string(n++), s.question, s.answer, s.because});
    }
    PrintTable(table, f.format);
    return;
  }
  if (f.format.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const DecisionStep& s : steps) {
      list.push_back({{"question", s.question}, {"answer", s.answer}, {"because", s.because}});
    }
    PrintJson({{"schema", "cloudfit.explain/v1"},
               {"assumptions", AssumptionsToJson(w)},
               {"steps", list}});
    return;
  }
  if (!w.assumptions.empty()) {
    std::cout << "assumptions (give the field to change one):\n";
    for (const Assumption& a : w.assumptions) {
      std::cout << fmt::format("  {} = {}: {}\n", a.field, a.value, a.why);
    }
  }
  int n = 1;
  for (const DecisionStep& s : steps) {
    std::cout << fmt::format("{}. {}\n   -> {}\n      {}\n", n++, s.question, s.answer, s.because);
  }
  std::cout << "\nNext: cloudfit recommend with the same flags ranks the instances.\n";
}

}  // namespace

void AddExplainCommand(CLI::App* app, const GlobalOptions* global) {
  auto f = std::make_shared<ExplainFlags>();
  CLI::App* c = app->add_subcommand(
      "explain", "Walk a workload through the selection decision tree, with the numbers");
  AddWorkloadFlags(c, &f->workload);
  AddFormatFlags(c, &f->format);
  c->callback([global, f]() { Run(*global, *f); });
}

}  // namespace cloudfit::cli
