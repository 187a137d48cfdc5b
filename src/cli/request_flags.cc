#include "cli/request_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cloudfit/request.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit::cli {

namespace {

void List(CLI::App* c, OptionFlags* f, const std::string& flag, const std::string& name,
          const std::string& help) {
  c->add_option_function<std::vector<std::string>>(
       flag, [f, name](const std::vector<std::string>& v) { f->values[name] = v; }, help)
      ->delimiter(',');
}

void Value(CLI::App* c, OptionFlags* f, const std::string& flag, const std::string& name,
           const std::string& help) {
  c->add_option_function<std::string>(
      flag, [f, name](const std::string& v) { f->values[name] = v; }, help);
}

void Flag(CLI::App* c, OptionFlags* f, const std::string& flag, const std::string& name, bool value,
          const std::string& help) {
  c->add_flag_function(
      flag, [f, name, value](std::int64_t) { f->values[name] = value; }, help);
}

void AddCostFlags(CLI::App* c, OptionFlags* f) {
  Value(c, f, "--max-spot-nodes", "max_spot_nodes",
        "Most nodes of a tightly coupled job priced on spot (default 4)");
  List(c, f, "--exclude-cost", "exclude_costs",
       "Leave lines out of the bill: egress, storage, startup, billing, licences");
  Flag(c, f, "--require-rdma", "require_rdma", true,
       "Multi-node training only on instances with EFA, InfiniBand, RoCE or GPUDirect-TCPX");
}

}  // namespace

void AddRecommendOptionFlags(CLI::App* c, OptionFlags* f, bool ranking) {
  List(c, f, "--provider", "providers", "Providers to consider");
  List(c, f, "--region", "regions", "Regions to consider");
  if (ranking) {
    List(c, f, "--gpu", "gpus", "Only these GPU models; A100:8 also fixes GPUs per node");
    List(c, f, "--exclude-gpu", "exclude_gpus", "Leave out these GPU models");
    List(c, f, "--instance", "instances", "Only these instance types");
  }
  Value(c, f, "--deadline-hours", "deadline_hours", "The job must finish within this");
  Value(c, f, "--budget", "budget", "Most the job may cost, in --currency (serving: a month)");
  if (ranking) {
    Value(c, f, "--total-gpus-min", "min_gpus", "Fewest GPUs per candidate, all nodes together");
    Value(c, f, "--total-gpus-max", "max_gpus", "Most GPUs per candidate, all nodes together");
  }
  List(c, f, "--pricing", "pricing",
       ranking ? "Pricing modes: ondemand, spot, reserved-1y, reserved-3y (default ondemand,spot; "
                 "serving and streaming ondemand)"
               : "Pricing modes (default all four)");
  if (ranking) Flag(c, f, "--no-cpu", "include_cpu", false, "Leave out CPU-only instances");
  Flag(c, f, "--no-spot", "spot", false, "Leave out spot pricing");
  if (ranking) {
    Value(c, f, "--nodes-max", "max_nodes",
          "Nodes per candidate, up to (training, rendering; default 1)");
  }
  Value(c, f, "--currency", "currency", "Currency of prices and budget (default USD)");
  if (ranking) Value(c, f, "--objective", "objective", "cheapest (default), fastest or balanced");
  Value(c, f, "--serving-hours", "serving_hours", "Hours of serving priced (default 730, a month)");
  Value(c, f, "--hours", "hours",
        "Price this many hours of use instead of the job's estimated duration");
  Flag(c, f, "--scale-to-zero", "scale_to_zero", true, "Serving may scale to zero replicas");
  if (ranking) {
    Flag(c, f, "--all-regions", "all_regions", true,
         "List every region, not only each type's best");
    Value(c, f, "--top", "top", "Show the first N (default 10; 0 = all)");
  }
  AddCostFlags(c, f);
  // One --help vocabulary: what narrows the candidates, and what prices and ranks them.
  std::vector<std::string> filters = {"--provider", "--region", "--no-spot"};
  if (ranking) {
    for (const char* name : {"--gpu", "--exclude-gpu", "--instance", "--total-gpus-min",
                             "--total-gpus-max", "--no-cpu", "--nodes-max", "--require-rdma"}) {
      filters.push_back(name);
    }
  }
  std::vector<std::string> pricing = {"--deadline-hours", "--budget",         "--pricing",
                                      "--currency",       "--serving-hours",  "--hours",
                                      "--scale-to-zero",  "--max-spot-nodes", "--exclude-cost"};
  if (ranking) {
    for (const char* name : {"--objective", "--all-regions", "--top"}) pricing.push_back(name);
  }
  GroupOptions(c, kGroupFilters, filters);
  GroupOptions(c, kGroupPricing, pricing);
}

nlohmann::json WorkloadJson(const WorkloadFlags& o) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (!o.file.empty()) ThrowIfError(LoadWorkloadFile(o.file, &fields));
  for (const std::string& set : o.sets) {
    size_t eq = set.find('=');
    if (eq == std::string::npos) throw CliError{"--set: '" + set + "' is not key=value"};
    fields.emplace_back(set.substr(0, eq), set.substr(eq + 1));
  }
  for (const auto& [k, v] : o.fields) fields.emplace_back(k, v);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [k, v] : fields) {
    std::string key = ToLower(std::string(Trim(k)));
    for (char& ch : key) {
      if (ch == '-') ch = '_';
    }
    out[key] = v;
  }
  return out;
}

nlohmann::json CalibrationJson(const CalibrationFlags& flags) {
  nlohmann::json out = nlohmann::json::object();
  if (!flags.probe_file.empty()) {
    std::string text;
    Status s = ReadFile(flags.probe_file, &text);
    if (!s.ok()) throw CliError{"--calibration: " + s.message()};
    nlohmann::json probe;
    s = ParseJson("--calibration: " + flags.probe_file, text, kMaxDocumentBytes, &probe);
    if (!s.ok()) throw CliError{s.message()};
    out["probe"] = probe;
  }
  if (!flags.measured.empty()) out["measured"] = flags.measured;
  return out;
}

nlohmann::json MergeOptions(const nlohmann::json& line, const nlohmann::json& options) {
  nlohmann::json out = line;
  if (line.contains("workload")) {
    nlohmann::json merged = options;
    if (line.contains("options") && line["options"].is_object()) {
      for (const auto& [k, v] : line["options"].items()) merged[k] = v;
    }
    out["options"] = merged;
    return out;
  }
  for (const auto& [k, v] : options.items()) {
    if (!out.contains(k)) out[k] = v;
  }
  return out;
}

Status WithFlagNames(const Status& status) {
  if (status.ok()) return status;
  static const std::map<std::string, std::string> kFlags = {{"providers", "--provider"},
                                                            {"regions", "--region"},
                                                            {"gpus", "--gpu"},
                                                            {"exclude_gpus", "--exclude-gpu"},
                                                            {"instances", "--instance"},
                                                            {"exclude_costs", "--exclude-cost"},
                                                            {"include_cpu", "--no-cpu"},
                                                            {"spot", "--no-spot"},
                                                            {"scale_to_zero", "--scale-to-zero"},
                                                            {"min_gpus", "--total-gpus-min"},
                                                            {"max_gpus", "--total-gpus-max"},
                                                            {"max_nodes", "--nodes-max"}};
  const std::string& m = status.message();
  size_t colon = m.find(':');
  if (colon == std::string::npos) return status;
  std::string name = m.substr(0, colon);
  const std::vector<std::string>& options = RecommendOptionNames();
  if (std::find(options.begin(), options.end(), name) == options.end()) return status;
  auto it = kFlags.find(name);
  std::string flag = it != kFlags.end() ? it->second : "--" + name;
  for (char& ch : flag) {
    if (ch == '_') ch = '-';
  }
  return Status::InvalidArgument(flag + m.substr(colon));
}

std::string Amount(double amount, const std::string& currency) {
  if (amount > 0 && amount < 0.1) return fmt::format("{:.2g} {}", amount, currency);
  return fmt::format("{} {}", FormatNumber(amount, amount < 10 ? 2 : 0), currency);
}

}  // namespace cloudfit::cli
