// cloudfit recommend: which instances to rent for a workload, ranked, with reasons. The flags
// become the same JSON request a workload file, a JSON Lines line or POST /v1/recommend makes,
// and go through the same decoder (cloudfit/request.h).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "cli/cli_common.h"
#include "cli/request_flags.h"
#include "cli/terminal.h"
#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
#include "cloudfit/request.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

struct RecommendFlags {
  WorkloadFlags workload;
  CalibrationFlags calibration;
  OptionFlags options;
  bool explain = false;
  std::string why_not;
  std::string plot;
  std::string jsonl;
  FormatOptions format;
  TaskFlags task;
  RecommendHooks hooks;
};

void WritePlot(const std::string& path, const std::string& svg) {
  Status s = WriteFileAtomically(path, svg);
  if (!s.ok()) throw CliError{"--plot: " + s.message()};
}

void PrintCosts(const Candidate& c, const std::string& currency, bool explain) {
  if (!explain) {
    std::vector<std::string> parts;
    for (const CostLine& line : c.costs) {
      if (line.amount && *line.amount == 0) continue;
      parts.push_back(line.name + " " + (line.amount ? Amount(*line.amount, currency) : "unknown"));
    }
    std::cout << "  bill: " << Join(parts, " + ") << " = " << Amount(*c.total_cost, currency)
              << "\n";
    return;
  }
  std::cout << "  bill (" << currency << "):\n";
  for (const CostLine& line : c.costs) {
    std::cout << fmt::format("    {:<9} {:>12}  {}\n", line.name,
                             line.amount ? FormatNumber(*line.amount, 2) : "unknown", line.detail);
    if (!line.source.empty())
      std::cout << fmt::format("    {:<9} {:>12}  source: {}\n", "", "", line.source);
  }
  std::cout << fmt::format("    {:<9} {:>12}\n", "total", FormatNumber(*c.total_cost, 2));
}

void PrintText(const Workload& w, const RecommendOptions& o, const Recommendation& r,
               const FormatOptions& format, bool explain) {
  PrintNote(fmt::format("recommend: {} {} ({}), objective {}; {} hardware choices estimated, {} "
                        "priced offers feasible",
                        w.model.name.empty() ? "-" : w.model.name, WorkloadKindName(w.kind),
                        NumericFormatName(w.precision), ObjectiveName(o.objective),
                        r.candidates_considered, r.ranked.size()),
            format);
  if (format.format() == OutputFormat::kTable && !w.assumptions.empty()) {
    std::cout << "assumptions (give the field to change one):\n";
    for (const Assumption& a : w.assumptions) {
      std::cout << fmt::format("  {} = {}: {}\n", a.field, a.value, a.why);
    }
  }
  std::vector<std::string> table_warnings;
  Table table = RecommendationTable(r, o.currency, o.top, &table_warnings);
  // The recommender's note on old prices (src/recommend/explanations.cc, "stale prices: ...")
  // concerns every price in the table: it is said above it, with the other shared warnings.
  std::vector<std::string> notes;
  for (const std::string& n : r.notes) {
    if (n.rfind("stale prices:", 0) == 0)
      table_warnings.push_back(n);
    else
      notes.push_back(n);
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
    PrintCosts(best, o.currency, explain);
    if (best.autoscaling) {
      const AutoscalingPolicy& a = *best.autoscaling;
      std::cout << fmt::format(
          "  autoscaling: {} to {} replicas; out above {:.0f}% GPU utilisation, in below {:.0f}%; "
          "{:.0f}% utilised at {} requests/s\n",
          a.min_replicas, a.max_replicas, 100 * a.scale_out_utilisation,
          100 * a.scale_in_utilisation, 100 * a.utilisation_at_rate,
          FormatNumber(w.request_rate, 2));
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

// One JSON Lines request: the line's fields and options over the command line's options. The
// answer's line (without its line break) is appended to `text`; returns whether it succeeded.
bool RunLine(const Catalog& catalog, const nlohmann::json& base_options, const std::string& line,
             EstimateCache* cache, std::string* text) {
  auto fail = [&](const nlohmann::json& id, const std::string& error) {
    nlohmann::json out = nlohmann::json::object();
    if (!id.is_discarded()) out["id"] = id;
    out["ok"] = false;
    out["error"] = error;
    text->append(DumpJson(out));
    return false;
  };
  const nlohmann::json no_id(nlohmann::json::value_t::discarded);
  nlohmann::json in;
  Status parsed = ParseJson("line", line, kMaxJsonlLineBytes, &in);
  if (!parsed.ok()) return fail(no_id, parsed.message());
  if (!in.is_object()) return fail(no_id, "each line must be a JSON object");
  const nlohmann::json& id = in.contains("id") ? in["id"] : no_id;
  nlohmann::json request = MergeOptions(in, base_options);
  RecommendRequest decoded;
  Status s = DecodeRecommendRequest(catalog, request, &decoded);
  Recommendation r;
  if (s.ok()) {
    s = WithRequestOptionPath(decoded, Recommend(catalog, decoded.workload, decoded.options, &r,
                                                 cache->For(decoded.workload_key).get()));
  }
  if (!s.ok()) return fail(id, s.message());
  // {"id":..,"ok":true,"recommendation":{..}}: the members in the order a document keeps them.
  text->append("{");
  if (!id.is_discarded()) {
    text->append("\"id\":");
    text->append(DumpJson(id));
    text->append(",");
  }
  text->append("\"ok\":true,\"recommendation\":");
  RecommendationJsonOptions how;
  how.top = decoded.options.top;
  AppendRecommendationJson(decoded.workload, decoded.options, r, how, text);
  text->append("}");
  return true;
}

void Run(const GlobalOptions& global, const RecommendFlags& f) {
  if (f.hooks.instead && f.hooks.instead()) return;
  const Catalog& catalog = LoadKeptCatalogOrThrow(global);
  nlohmann::json options = f.options.ToJson();
  if (!f.jsonl.empty()) {
    if (!f.task.file.empty()) throw CliError{"--task goes with one request, not with --jsonl"};
    std::ifstream file;
    std::istream* in = &std::cin;
    if (f.jsonl != "-") {
      file.open(f.jsonl);
      if (!file) throw CliError{"--jsonl: " + f.jsonl + ": cannot open for reading"};
      in = &file;
    }
    int failures = 0;
    // A batch often repeats a workload under other options: its estimates are made once.
    EstimateCache cache;
    std::string answer;
    for (std::string line; std::getline(*in, line);) {
      if (Trim(line).empty()) continue;
      answer.clear();
      failures += RunLine(catalog, options, line, &cache, &answer) ? 0 : 1;
      answer.push_back('\n');
      std::cout.write(answer.data(), static_cast<std::streamsize>(answer.size()));
    }
    if (failures > 0) throw CliError{fmt::format("{} request(s) failed", failures)};
    return;
  }
  // The flat form (a JSON Lines line's): errors name fields as the flags do, without a prefix.
  nlohmann::json request = MergeOptions(WorkloadJson(f.workload), options);
  nlohmann::json calibration = CalibrationJson(f.calibration);
  if (!calibration.empty()) request["calibration"] = calibration;
  RecommendRequest decoded;
  ThrowIfError(WithFlagNames(DecodeRecommendRequest(catalog, request, &decoded)));
  const Workload& w = decoded.workload;
  RecommendOptions& o = decoded.options;
  // --task (a SkyPilot task file) narrows the choice; its use_spot sets the pricing unless the
  // user chose it.
  ApplyTaskFlags(catalog, f.task, options.contains("pricing") || options.contains("spot"), &o);
  Recommendation r;
  if (!f.why_not.empty()) o.describe_instances.push_back(f.why_not);
  ThrowIfError(WithFlagNames(Recommend(catalog, w, o, &r)));
  if (f.hooks.consume) return f.hooks.consume(catalog, w, o, r);
  if (!f.plot.empty()) WritePlot(f.plot, ParetoSvg(r, o.currency));
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
    RecommendationJsonOptions how;
    how.top = o.top;
    how.indent = 2;  // as PrintJson writes documents
    std::string text;
    AppendRecommendationJson(w, o, r, how, &text);
    text.push_back('\n');
    std::cout << text;
    return;
  }
  PrintText(w, o, r, f.format, f.explain);
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
  AddRecommendOptionFlags(c, &f->options);
  c->add_flag("--explain", f->explain,
              "Show every line of #1's bill with its quantities and source");
  c->add_option("--why-not", f->why_not, "Explain where an instance type went");
  c->add_option("--plot", f->plot, "Write the time-versus-cost Pareto front as SVG");
  c->add_option("--jsonl", f->jsonl, "Read requests from JSON Lines ('-' for stdin)");
  AddFormatFlags(c, &f->format);
  c->callback([global, f]() { Run(*global, *f); });
  return c;
}

}  // namespace cloudfit::cli
