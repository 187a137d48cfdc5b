// cloudfit recommend: which instances to rent for a workload, ranked, with reasons.
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/cli_common.h"
#include "cli/terminal.h"
#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
#include "util/file.h"
#include "util/strings.h"

namespace cloudfit::cli {

namespace {

struct RecommendFlags {
  WorkloadFlags workload;
  CalibrationFlags calibration;
  RecommendOptions options;
  std::vector<std::string> pricing = {"ondemand", "spot"};
  std::string objective = "cheapest";
  bool no_cpu = false;
  bool pricing_given = false;
  size_t top = 10;
  std::string why_not;
  std::string plot;
  std::string jsonl;
  FormatOptions format;
  TaskFlags task;
  RecommendHooks hooks;
};

void ParseChoices(RecommendFlags& f, bool pricing_given, WorkloadKind kind) {
  // Serving and streaming keep users waiting when spot capacity is reclaimed: unless asked,
  // they are priced on demand only.
  if (!pricing_given && (kind == WorkloadKind::kServing || kind == WorkloadKind::kRealtimeRender ||
                         kind == WorkloadKind::kCad)) {
    f.pricing = {"ondemand"};
  }
  f.options.pricing.clear();
  for (const std::string& p : f.pricing) {
    PricingMode mode;
    if (!ParsePricingMode(p, &mode)) {
      throw CliError{"--pricing: '" + p + "' is not one of ondemand, spot, reserved-1y, reserved-3y"};
    }
    f.options.pricing.push_back(mode);
  }
  if (!ParseObjective(f.objective, &f.options.objective)) {
    throw CliError{"--objective: '" + f.objective + "' is not one of cheapest, fastest, balanced"};
  }
  f.options.include_cpu = !f.no_cpu;
}

void WritePlot(const std::string& path, const std::string& svg) {
  Status s = WriteFileAtomically(path, svg);
  if (!s.ok()) throw CliError{"--plot: " + s.message()};
}

void PrintText(const Workload& w, const RecommendFlags& f, const Recommendation& r) {
  const RecommendOptions& o = f.options;
  const FormatOptions& format = f.format;
  PrintNote(fmt::format("recommend: {} {} ({}), objective {}; {} hardware choices estimated, {} "
                        "priced offers feasible",
                        w.model.name.empty() ? "-" : w.model.name, WorkloadKindName(w.kind),
                        NumericFormatName(w.precision), ObjectiveName(o.objective),
                        r.candidates_considered, r.ranked.size()),
            format);
  std::vector<std::string> table_warnings;
  Table table = RecommendationTable(r, o.currency, f.top, &table_warnings);
  // The recommender's note on old prices (src/recommend/explanations.cc, "stale prices: ...")
  // concerns every price in the table: it is said above it, with the other shared warnings.
  std::vector<std::string> notes;
  for (const std::string& n : r.notes) {
    if (n.rfind("stale prices:", 0) == 0) table_warnings.push_back(n);
    else notes.push_back(n);
  }
  // A program reading CSV gets every warning in each row; people get the shared ones once.
  for (const std::string& warning : table_warnings) PrintTableWarning(warning, format);
  PrintTable(table, format);
  if (format.format() != OutputFormat::kTable) {
    for (const std::string& n : notes) PrintNote("note: " + n, format);
    return;
  }
  if (!r.ranked.empty()) {
    const Candidate& best = r.ranked.front();
    std::cout << "\nwhy #1:\n";
    for (const std::string& reason : best.reasons) std::cout << "  " << reason << "\n";
    for (const std::string& warning : best.warnings) {
      std::cout << "  " << Styled("warning: " + warning, "33", format.colour()) << "\n";
    }
    if (best.autoscaling) {
      const AutoscalingPolicy& a = *best.autoscaling;
      std::cout << fmt::format(
          "  autoscaling: {} to {} replicas; out above {:.0f}% GPU utilisation, in below {:.0f}%; "
          "{:.0f}% utilised at {} requests/s\n",
          a.min_replicas, a.max_replicas, 100 * a.scale_out_utilisation,
          100 * a.scale_in_utilisation, 100 * a.utilisation_at_rate, FormatNumber(w.request_rate, 2));
    }
  }
  std::map<std::string, int> rejected;
  for (const Candidate& c : r.rejected) ++rejected[c.rejection.substr(0, c.rejection.find(':'))];
  if (!rejected.empty()) {
    std::cout << "\nrejected:";
    for (const auto& [reason, count] : rejected) std::cout << fmt::format(" {} {};", count, reason);
    std::cout << "\n('*' marks the time-versus-cost Pareto front; --why-not TYPE explains one)\n";
  }
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
}

// One JSON Lines request: workload fields plus recommend options; one result per line.
nlohmann::json RunLine(const Catalog& catalog, const RecommendFlags& base, const std::string& line) {
  nlohmann::json in;
  try {
    in = nlohmann::json::parse(line);
  } catch (const nlohmann::json::exception& e) {
    return {{"ok", false}, {"error", std::string("malformed JSON: ") + e.what()}};
  }
  if (!in.is_object()) return {{"ok", false}, {"error", "each line must be a JSON object"}};
  nlohmann::json out = nlohmann::json::object();
  if (in.contains("id")) out["id"] = in["id"];
  Workload w;
  RecommendOptions o = base.options;
  size_t top = 3;
  for (const auto& [key, value] : in.items()) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    double number = 0;
    bool numeric = ParseDouble(text, &number);
    Status s;
    if (key == "id") continue;
    if (key == "deadline_hours" && numeric) o.deadline_hours = number;
    else if (key == "budget" && numeric) o.budget = number;
    else if (key == "top" && numeric) top = static_cast<size_t>(number);
    else if (key == "providers" && value.is_array()) o.providers = value.get<std::vector<std::string>>();
    else s = SetWorkloadField(&w, key, text);
    if (!s.ok()) return {{"id", out.value("id", nlohmann::json())}, {"ok", false}, {"error", s.message()}};
  }
  Status s = FinalizeWorkload(catalog, &w);
  Recommendation r;
  if (s.ok()) s = Recommend(catalog, w, o, &r);
  if (!s.ok()) {
    out["ok"] = false;
    out["error"] = s.message();
    return out;
  }
  out["ok"] = true;
  out["recommendation"] = RecommendationToJson(w, o, r, top);
  return out;
}

void Run(const GlobalOptions& global, RecommendFlags& f) {
  if (f.hooks.instead && f.hooks.instead()) return;
  Catalog catalog = LoadCatalogOrThrow(global);
  if (!f.jsonl.empty()) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (f.jsonl != "-") {
      file.open(f.jsonl);
      if (!file) throw CliError{"--jsonl: " + f.jsonl + ": cannot open for reading"};
      in = &file;
    }
    ParseChoices(f, f.pricing_given, WorkloadKind::kTrain);
    int failures = 0;
    for (std::string line; std::getline(*in, line);) {
      if (Trim(line).empty()) continue;
      nlohmann::json result = RunLine(catalog, f, line);
      failures += result.value("ok", false) ? 0 : 1;
      std::cout << result.dump() << "\n";
    }
    if (failures > 0) throw CliError{fmt::format("{} request(s) failed", failures)};
    return;
  }
  Workload w = BuildWorkload(f.workload);
  ThrowIfError(FinalizeWorkload(catalog, &w));
  ApplyCalibrationFlags(catalog, f.calibration, &w);
  ParseChoices(f, f.pricing_given, w.kind);
  ApplyTaskFlags(catalog, f.task, f.pricing_given, &f.options);
  Recommendation r;
  ThrowIfError(Recommend(catalog, w, f.options, &r));
  if (f.hooks.consume) return f.hooks.consume(catalog, w, f.options, r);
  if (!f.plot.empty()) WritePlot(f.plot, ParetoSvg(r, f.options.currency));
  if (!f.why_not.empty()) {
    std::vector<std::string> lines = ExplainInstance(r, f.why_not);
    if (lines.empty()) {
      const InstanceType* t = nullptr;
      ThrowIfError(catalog.FindInstance(f.why_not, &t));
      lines.push_back("not considered");
    }
    std::cout << f.why_not << ":\n";
    for (const std::string& line : lines) std::cout << "  " << line << "\n";
    return;
  }
  if (f.format.json) {
    PrintJson(RecommendationToJson(w, f.options, r, f.top));
    return;
  }
  PrintText(w, f, r);
}

}  // namespace

void AddRecommendCommand(CLI::App* app, const GlobalOptions* global) {
  AddRecommendLikeCommand(
      app, global, "recommend",
      "Rank every instance, region and pricing mode for a workload by time and cost", {});
}

CLI::App* AddRecommendLikeCommand(CLI::App* app, const GlobalOptions* global,
                                  const std::string& name, const std::string& description,
                                  RecommendHooks hooks) {
  auto f = std::make_shared<RecommendFlags>();
  f->hooks = std::move(hooks);
  CLI::App* c = app->add_subcommand(name, description);
  AddWorkloadFlags(c, &f->workload);
  AddTaskFlag(c, &f->task);
  AddCalibrationFlags(c, &f->calibration);
  RecommendOptions& o = f->options;
  auto filter = [c](CLI::Option* option) { return option->group(kGroupFilters); };
  auto pricing = [c](CLI::Option* option) { return option->group(kGroupPricing); };
  auto output = [c](CLI::Option* option) { return option->group(kGroupOutput); };
  filter(c->add_option("--provider", o.providers, "Providers to consider")->delimiter(','));
  filter(c->add_option("--region", o.regions, "Regions to consider")->delimiter(','));
  filter(c->add_option("--gpu", o.gpus, "Only these GPU models; A100:8 also fixes GPUs per node")
             ->delimiter(','));
  filter(c->add_option("--exclude-gpu", o.exclude_gpus, "Leave out these GPU models")
             ->delimiter(','));
  filter(c->add_option("--instance", o.instances, "Only these instance types")->delimiter(','));
  filter(c->add_option("--total-gpus-min", o.min_gpus, "Fewest GPUs per candidate, all nodes together"));
  filter(c->add_option("--total-gpus-max", o.max_gpus, "Most GPUs per candidate, all nodes together"));
  filter(c->add_flag("--no-cpu", f->no_cpu, "Leave out CPU-only instances"));
  filter(c->add_option("--nodes-max", o.max_nodes, "Nodes per candidate, up to (training, rendering)")
             ->capture_default_str());
  pricing(c->add_option("--deadline-hours", o.deadline_hours, "The job must finish within this"));
  pricing(c->add_option("--budget", o.budget,
                        "Most the job may cost, in --currency (serving: a month)"));
  pricing(c->add_option("--pricing", f->pricing,
                        "Pricing modes: ondemand, spot, reserved-1y, reserved-3y")
              ->delimiter(',')
              ->capture_default_str());
  pricing(c->add_option("--currency", o.currency, "Currency of prices and budget")
              ->capture_default_str());
  pricing(c->add_option("--objective", f->objective, "cheapest, fastest or balanced")
              ->capture_default_str());
  pricing(c->add_option("--serving-hours", o.serving_hours,
                        "Hours of serving priced (default a month)")
              ->capture_default_str());
  pricing(c->add_option("--hours", o.fixed_hours,
                        "Price this many hours of use instead of the job's estimated duration"));
  pricing(c->add_flag("--scale-to-zero", o.allow_scale_to_zero, "Serving may scale to zero replicas"));
  output(c->add_flag("--all-regions", o.all_regions, "List every region, not only each type's best"));
  output(c->add_option("--top", f->top, "Show the first N")->capture_default_str());
  output(c->add_option("--why-not", f->why_not, "Explain where an instance type went"));
  output(c->add_option("--plot", f->plot, "Write the time-versus-cost Pareto front as SVG"));
  output(c->add_option("--jsonl", f->jsonl, "Read requests from JSON Lines ('-' for stdin)"));
  AddFormatFlags(c, &f->format);
  c->callback([global, f, c]() {
    f->pricing_given = c->count("--pricing") > 0;
    Run(*global, *f);
  });
  return c;
}

}  // namespace cloudfit::cli
