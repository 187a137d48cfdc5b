// cloudfit export: a chosen machine as a SkyPilot task, Terraform or Kubernetes manifests.
// With --rank N it takes every flag of `recommend` and exports the N-th ranked offer; without
// it, the instance type, region and pricing mode named by --instance, --region and --pricing.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cloudfit/export.h"
#include "cloudfit/skypilot_task.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct ExportFlags {
  CLI::App* command = nullptr;
  const GlobalOptions* global = nullptr;
  std::string format;
  size_t rank = 0;
  std::string out;
  std::string name;
  int disk_gb = 256;
  int nodes = 1;
  int replicas = 1;
};

// The values of one of recommend's list options, as given on the command line.
std::vector<std::string> Values(CLI::App* c, const std::string& name) {
  CLI::Option* option = c->get_option_no_throw(name);
  if (option == nullptr || option->count() == 0) return {};
  return option->as<std::vector<std::string>>();
}

std::string One(CLI::App* c, const std::string& name, const std::string& fallback) {
  std::vector<std::string> values = Values(c, name);
  if (values.size() > 1) {
    throw CliError{name + ": export takes one value, not " + Join(values, ",") +
                   " (with --rank, the ranking chooses)"};
  }
  return values.empty() ? fallback : values.front();
}

void Emit(const ExportFlags& f, ExportTarget target) {
  ExportFormat format;
  if (!ParseExportFormat(f.format, &format)) {
    throw CliError{"--format: '" + Shown(f.format) +
                   "' is not one of skypilot, terraform, kubernetes"};
  }
  CLI::App* c = f.command;
  if (c->count("--name")) target.name = f.name;
  if (c->count("--disk-gb")) target.disk_gb = f.disk_gb;
  std::string task_file = One(c, "--task", "");
  if (!task_file.empty()) {
    TaskResources task;
    Status s = LoadSkyPilotTask(task_file, &task);
    if (!s.ok()) throw CliError{"--task: " + s.message()};
    if (task.disk_size_gb && !c->count("--disk-gb"))
      target.disk_gb = static_cast<int>(*task.disk_size_gb);
    if (format == ExportFormat::kSkyPilot)
      ThrowIfError(ReadFile(task_file, &target.base_task_yaml, kMaxDocumentBytes));
  }
  std::string text;
  ThrowIfError(Export(target, format, &text));
  if (f.out.empty()) {
    std::cout << text;
    return;
  }
  Status s = WriteFileAtomically(f.out, text);
  if (!s.ok()) throw CliError{"--out: " + s.message()};
  std::cerr << fmt::format("wrote {} ({})\n", f.out, ExportFormatName(format));
}

// Without --rank: the instance named on the command line.
bool ExportNamedInstance(const ExportFlags& f) {
  if (f.rank > 0) return false;
  CLI::App* c = f.command;
  std::string instance = One(c, "--instance", "");
  if (instance.empty()) {
    throw CliError{"export needs --rank N (with recommend's workload flags) or --instance TYPE"};
  }
  PricingMode mode = PricingMode::kOnDemand;
  std::string pricing = One(c, "--pricing", "ondemand");
  if (!ParsePricingMode(pricing, &mode)) {
    throw CliError{"--pricing: '" + Shown(pricing) +
                   "' is not one of ondemand, spot, reserved-1y, reserved-3y"};
  }
  Catalog catalog = LoadCatalogOrThrow(*f.global);
  ExportTarget target;
  ThrowIfError(ExportTargetForInstance(catalog, instance, One(c, "--region", ""), mode, &target));
  target.nodes = f.nodes;
  target.replicas = f.replicas;
  std::string kind = ToLower(One(c, "--kind", ""));
  target.serving = kind == "serve" || kind == "serving";
  Emit(f, std::move(target));
  return true;
}

void ExportRanked(const ExportFlags& f, const Workload& w, const RecommendOptions& o,
                  const Recommendation& r) {
  if (f.command->count("--nodes") + f.command->count("--replicas") > 0) {
    throw CliError{"--nodes and --replicas go with --instance; with --rank the ranking chooses"};
  }
  if (r.ranked.empty()) {
    std::string why = r.notes.empty() ? "" : " (" + Join(r.notes, "; ") + ")";
    throw CliError{"--rank: nothing is feasible for this workload, so nothing to export" + why};
  }
  if (f.rank > r.ranked.size()) {
    throw CliError{fmt::format("--rank: {} is past the last of the {} feasible offers", f.rank,
                               r.ranked.size())};
  }
  Emit(f, ExportTargetFromCandidate(w, r.ranked[f.rank - 1], o.currency));
}

}  // namespace

void AddExportCommand(CLI::App* app, const GlobalOptions* global) {
  auto f = std::make_shared<ExportFlags>();
  f->global = global;
  RecommendHooks hooks;
  hooks.instead = [f]() { return ExportNamedInstance(*f); };
  hooks.consume = [f](const Catalog&, const Workload& w, const RecommendOptions& o,
                      const Recommendation& r) { ExportRanked(*f, w, o, r); };
  CLI::App* c = AddRecommendLikeCommand(
      app, global, "export",
      "Write a chosen machine as a SkyPilot task, Terraform or Kubernetes manifests: the N-th "
      "offer of a recommendation (--rank N with recommend's flags), or --instance, --region "
      "and --pricing",
      std::move(hooks));
  f->command = c;
  // recommend's ways of printing have no meaning here.
  for (const char* name : {"--top", "--explain", "--why-not", "--plot", "--jsonl", "--json",
                           "--csv", "--markdown", "--wide", "--all-regions"}) {
    if (CLI::Option* option = c->get_option_no_throw(name)) c->remove_option(option);
  }
  c->add_option("--format", f->format, "skypilot, terraform or kubernetes")->required();
  c->add_option("--rank", f->rank, "Export the N-th ranked offer of the recommendation (1 = best)")
      ->check(WholeIn(1, 100000));
  c->add_option("--out", f->out, "Write to this file instead of standard output");
  c->add_option("--name", f->name, "Name of the task, instances and Kubernetes objects");
  c->add_option("--disk-gb", f->disk_gb, "Boot disk, GB")
      ->capture_default_str()
      ->check(WholeIn(1, 65536, "GB"));
  c->add_option("--nodes", f->nodes, "Nodes, with --instance")
      ->capture_default_str()
      ->check(WholeIn(1, 4096, "nodes"));
  c->add_option("--replicas", f->replicas, "Serving replicas, with --instance and --kind serve")
      ->capture_default_str()
      ->check(WholeIn(1, 10000, "replicas"));
  GroupOptions(c, "Export",
               {"--format", "--rank", "--out", "--name", "--disk-gb", "--nodes", "--replicas"});
}

}  // namespace cloudfit::cli
