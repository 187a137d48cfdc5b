#include "cloudfit/recommend_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cloudfit/estimate_json.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json RiskToJson(const JobRisk& r) {
  return {{"nodes", r.nodes},
          {"synchronous", r.synchronous},
          {"mtbf_hours", r.mtbf_hours},
          {"spot_interruptions_per_month", r.spot_interruptions_per_month},
          {"rate_basis", r.rate_basis},
          {"hardware_mtbf_hours", r.hardware_mtbf_hours},
          {"checkpoint_seconds", r.checkpoint_seconds},
          {"checkpoint_interval_hours", r.checkpoint_interval_hours},
          {"restart_hours", r.restart_hours},
          {"overhead_fraction", r.overhead_fraction},
          {"expected_interruptions", r.expected_interruptions},
          {"probability_interrupted", r.probability_interrupted},
          {"assumed_rate", r.assumed_rate}};
}

}  // namespace

nlohmann::json CandidateToJson(const Candidate& c, const std::string& currency) {
  const Estimate& e = *c.estimate;
  nlohmann::json j = {
      {"instance_type", c.instance->name},
      {"provider", c.instance->provider},
      {"region", c.region ? nlohmann::json(c.region->region) : nlohmann::json(nullptr)},
      {"pricing", PricingModeName(c.mode)},
      {"nodes", c.nodes},
      {"replicas", c.replicas},
      {"gpu",
       c.instance->has_gpu() ? nlohmann::json(c.instance->gpu_name()) : nlohmann::json(nullptr)},
      {"gpus", c.total_gpus()},
      {"hours", c.hours},
      {"price_per_hour", Optional(c.price_per_hour)},
      {"total_cost", Optional(c.total_cost)},
      {"cost_per_unit", Optional(c.cost_per_unit)},
      {"unit", c.unit},
      {"currency", currency},
      {"throughput", e.throughput},
      {"throughput_unit", e.throughput_unit},
      {"memory_used_gib", e.memory.total_bytes() / kGiB},
      {"memory_capacity_gib", e.memory.capacity_bytes / kGiB},
      {"bottleneck", e.bottleneck},
      {"pareto", c.pareto},
      {"reasons", c.reasons},
      {"warnings", c.warnings},
      {"price_as_of", c.region && c.region->as_of_known()
                          ? nlohmann::json(FormatIsoDate(c.region->as_of_days))
                          : nlohmann::json(nullptr)}};
  // The breakdowns of the estimate behind the candidate (cloudfit.estimate/v1's fields).
  j["memory"] = MemoryToJson(e.memory);
  j["time"] = TimeToJson(e.time);
  if (c.spot) j["spot"] = RiskToJson(*c.spot);
  if (c.risk) j["risk"] = RiskToJson(*c.risk);
  nlohmann::json costs = nlohmann::json::array();
  for (const CostLine& line : c.costs) {
    costs.push_back({{"name", line.name},
                     {"amount", Optional(line.amount)},
                     {"detail", line.detail},
                     {"source", line.source}});
  }
  j["costs"] = costs;
  if (c.autoscaling) {
    j["autoscaling"] = {{"min_replicas", c.autoscaling->min_replicas},
                        {"max_replicas", c.autoscaling->max_replicas},
                        {"scale_out_utilisation", c.autoscaling->scale_out_utilisation},
                        {"scale_in_utilisation", c.autoscaling->scale_in_utilisation},
                        {"utilisation_at_rate", c.autoscaling->utilisation_at_rate}};
  }
  if (c.break_even_utilisation) j["break_even_utilisation"] = *c.break_even_utilisation;
  if (!c.rejection.empty()) j["rejection"] = c.rejection;
  return j;
}

nlohmann::json RecommendationToJson(const Workload& w, const RecommendOptions& o,
                                    const Recommendation& r, size_t top) {
  nlohmann::json ranked = nlohmann::json::array();
  for (size_t i = 0; i < r.ranked.size() && (top == 0 || i < top); ++i) {
    ranked.push_back(CandidateToJson(r.ranked[i], o.currency));
  }
  nlohmann::json pareto = nlohmann::json::array();
  for (const Candidate& c : r.ranked) {
    if (c.pareto) pareto.push_back(CandidateToJson(c, o.currency));
  }
  std::map<std::string, int> rejected;
  for (const Candidate& c : r.rejected) {
    // Group by the kind of reason, without the numbers that differ per candidate.
    std::string key = c.rejection.substr(0, c.rejection.find(':'));
    ++rejected[key];
  }
  nlohmann::json best =
      r.ranked.empty() ? nlohmann::json(nullptr) : EstimateToJson(w, *r.ranked.front().estimate);
  nlohmann::json options = {{"pricing", nlohmann::json::array()},
                            {"max_nodes", o.max_nodes},
                            {"excluded_costs", o.excluded_costs},
                            {"require_rdma", o.require_rdma}};
  for (PricingMode m : o.pricing) options["pricing"].push_back(PricingModeName(m));
  if (w.is_service()) options["serving_hours"] = o.serving_hours;
  if (o.fixed_hours) options["hours"] = *o.fixed_hours;
  nlohmann::json document = {{"schema", "cloudfit.recommend/v2"},
                             {"workload",
                              {{"kind", WorkloadKindName(w.kind)},
                               {"model", w.model.name},
                               {"precision", NumericFormatName(w.precision)}}},
                             {"assumptions", AssumptionsToJson(w)},
                             {"options", options},
                             {"objective", ObjectiveName(o.objective)},
                             {"currency", o.currency},
                             {"candidates_considered", r.candidates_considered},
                             {"feasible", r.ranked.size()},
                             {"ranked", ranked},
                             {"pareto", pareto},
                             {"rejected", rejected},
                             {"best_estimate", best},
                             {"notes", r.notes}};
  if (w.calibration.active()) document["calibrated_from"] = w.calibration.basis;
  if (!r.hints.empty()) {
    // Only when nothing is feasible: each hint with the fields and options that apply it.
    nlohmann::json hints = nlohmann::json::array();
    for (const FitHint& h : r.hints) {
      nlohmann::json workload = nlohmann::json::object(), options = nlohmann::json::object();
      for (const auto& [k, v] : h.workload) workload[k] = v;
      for (const auto& [k, v] : h.options) options[k] = v;
      hints.push_back({{"note", h.note}, {"workload", workload}, {"options", options}});
    }
    document["hints"] = hints;
  }
  return document;
}

Table RecommendationTable(const Recommendation& r, const std::string& currency, size_t top,
                          std::vector<std::string>* table_warnings) {
  std::string cur = ToLower(currency);
  Table table({{"rank", "#", true, 0, Audience::kPeople},
               {"rank", "rank", true, 0, Audience::kMachines},
               {"pareto", "pareto", false, 0, Audience::kMachines},
               {"instance_type", "instance"},
               {"provider", "provider", false, 3},
               {"region", "region", false, 2},
               {"pricing", "pricing"},
               {"gpus", "gpus", false, 0, Audience::kPeople},
               {"gpu", "gpu", false, 0, Audience::kMachines},
               {"gpus", "gpus", true, 0, Audience::kMachines},
               {"nodes", "nodes", true, 0, Audience::kMachines},
               {"replicas", "replicas", true, 0, Audience::kMachines},
               {"hours", "time h", true},
               {"throughput", "throughput", true, 5, Audience::kPeople},
               {"throughput", "throughput", true, 0, Audience::kMachines},
               {"throughput_unit", "throughput unit", false, 0, Audience::kMachines},
               {"memory", "mem GiB", true, 4, Audience::kPeople},
               {"memory_used_gib", "memory used GiB", true, 0, Audience::kMachines},
               {"memory_capacity_gib", "memory capacity GiB", true, 0, Audience::kMachines},
               {"price_" + cur + "_per_hour", currency + "/h", true},
               {"total_cost_" + cur, "total " + currency, true},
               {"per_unit", "per unit", true, 6, Audience::kPeople},
               {"cost_per_unit_" + cur, "cost per unit", true, 0, Audience::kMachines},
               {"unit", "unit", false, 0, Audience::kMachines},
               {"bottleneck", "bottleneck", false, 8},
               {"price_as_of", "price as of", false, 7},
               {"warnings", "warnings", false, 1, Audience::kPeople},
               {"warnings", "warnings", false, 0, Audience::kMachines}});
  size_t shown = 0;
  for (size_t i = 0; i < r.ranked.size() && (top == 0 || i < top); ++i) ++shown;
  // Warnings every shown row carries (when more than one row is shown).
  std::vector<std::string> common;
  if (shown > 1) {
    for (const std::string& w : r.ranked[0].warnings) {
      bool everywhere = true;
      for (size_t i = 1; i < shown && everywhere; ++i) {
        const auto& ws = r.ranked[i].warnings;
        everywhere = std::find(ws.begin(), ws.end(), w) != ws.end();
      }
      if (everywhere && std::find(common.begin(), common.end(), w) == common.end()) {
        common.push_back(w);
      }
    }
  }
  if (table_warnings != nullptr) *table_warnings = common;
  for (size_t i = 0; i < shown; ++i) {
    const Candidate& c = r.ranked[i];
    const Estimate& e = *c.estimate;
    std::string gpus = c.instance->has_gpu()
                           ? FormatNumber(c.total_gpus(), 2) + "x " + c.instance->gpu_name()
                           : "cpu";
    if (c.nodes > 1) gpus += fmt::format(" ({} nodes)", c.nodes);
    if (c.replicas > 1) gpus += fmt::format(" ({} replicas)", c.replicas);
    std::vector<std::string> row_warnings;
    for (const std::string& w : c.warnings) {
      bool hoisted =
          table_warnings != nullptr && std::find(common.begin(), common.end(), w) != common.end();
      if (!hoisted) row_warnings.push_back(w);
    }
    std::string warnings = row_warnings.empty() ? "" : row_warnings.front();
    if (row_warnings.size() > 1) warnings += fmt::format(" (+{})", row_warnings.size() - 1);
    auto number = [](const std::optional<double>& v, int digits) {
      return v ? TableCell(FormatNumber(*v, digits)) : TableCell::Unknown();
    };
    table.AddRow({std::to_string(i + 1) + (c.pareto ? "*" : ""), std::to_string(i + 1),
                  c.pareto ? "true" : "false", c.instance->name, c.instance->provider,
                  c.region->region, std::string(PricingModeName(c.mode)), gpus,
                  c.instance->has_gpu() ? TableCell(c.instance->gpu_name()) : TableCell::Unknown(),
                  FormatNumber(c.total_gpus(), 3), std::to_string(c.nodes),
                  std::to_string(c.replicas), FormatNumber(c.hours, 2),
                  FormatNumber(e.throughput, 1) + " " + e.throughput_unit,
                  FormatNumber(e.throughput, 3), e.throughput_unit,
                  fmt::format("{:.1f}/{:.1f}", e.memory.total_bytes() / kGiB,
                              e.memory.capacity_bytes / kGiB),
                  FormatNumber(e.memory.total_bytes() / kGiB, 3),
                  FormatNumber(e.memory.capacity_bytes / kGiB, 3), number(c.price_per_hour, 3),
                  c.total_cost && *c.total_cost > 0 && *c.total_cost < 0.1
                      ? TableCell(fmt::format("{:.2g}", *c.total_cost))
                      : number(c.total_cost, 2),
                  c.cost_per_unit ? TableCell((*c.cost_per_unit > 0 && *c.cost_per_unit < 0.001
                                                   ? fmt::format("{:.2g}", *c.cost_per_unit)
                                                   : FormatNumber(*c.cost_per_unit, 4)) +
                                              "/" + c.unit)
                                  : TableCell::Unknown(),
                  number(c.cost_per_unit, 6), c.unit, e.bottleneck,
                  c.region->as_of_known() ? TableCell(FormatIsoDate(c.region->as_of_days))
                                          : TableCell::Unknown(),
                  // People read the first warning not said above the table; machines get all.
                  warnings, Join(c.warnings, "; ")});
  }
  return table;
}

std::string ParetoSvg(const Recommendation& r, const std::string& currency) {
  const double width = 720, height = 480, left = 80, right = 20, top = 30, bottom = 60;
  std::vector<const Candidate*> points;
  for (const Candidate& c : r.ranked) points.push_back(&c);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      width, height, width, height);
  if (points.empty()) {
    return svg + "<text x=\"20\" y=\"40\">No feasible candidate.</text>\n</svg>\n";
  }
  double min_h = 1e300, max_h = 0, min_c = 1e300, max_c = 0;
  for (const Candidate* c : points) {
    min_h = std::min(min_h, c->hours);
    max_h = std::max(max_h, c->hours);
    min_c = std::min(min_c, *c->total_cost);
    max_c = std::max(max_c, *c->total_cost);
  }
  auto span = [](double lo, double hi) {
    double a = std::log10(std::max(lo, 1e-9)), b = std::log10(std::max(hi, 1e-9));
    if (b - a < 0.3) {
      a -= 0.15;
      b += 0.15;
    }
    return std::pair{a, b};
  };
  // Plain variables, not structured bindings: lambdas below capture them (clang 14 cannot).
  const std::pair<double, double> hours_span = span(min_h, max_h);
  const std::pair<double, double> cost_span = span(min_c, max_c);
  const double hx0 = hours_span.first, hx1 = hours_span.second;
  const double cy0 = cost_span.first, cy1 = cost_span.second;
  auto x = [&](double h) {
    return left + (std::log10(h) - hx0) / (hx1 - hx0) * (width - left - right);
  };
  auto y = [&](double c) {
    return height - bottom - (std::log10(c) - cy0) / (cy1 - cy0) * (height - top - bottom);
  };
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", left,
                     height - bottom, width - right, height - bottom);
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", left,
                     top, left, height - bottom);
  for (int k = static_cast<int>(std::floor(hx0)); k <= static_cast<int>(std::ceil(hx1)); ++k) {
    double v = std::pow(10.0, k);
    if (std::log10(v) < hx0 || std::log10(v) > hx1) continue;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x(v),
                       height - bottom + 18, FormatNumber(v, 3));
  }
  for (int k = static_cast<int>(std::floor(cy0)); k <= static_cast<int>(std::ceil(cy1)); ++k) {
    double v = std::pow(10.0, k);
    if (std::log10(v) < cy0 || std::log10(v) > cy1) continue;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6,
                       y(v) + 4, FormatNumber(v, 2));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">time (hours, log)</text>\n",
                     (left + width - right) / 2, height - 20);
  svg += fmt::format(
      "<text x=\"16\" y=\"{}\" transform=\"rotate(-90 16 {})\" text-anchor=\"middle\">total "
      "cost ({}, log)</text>\n",
      (top + height - bottom) / 2, (top + height - bottom) / 2, XmlEscape(currency));
  for (const Candidate* c : points) {
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" opacity=\"0.6\"><title>{} {} {}: "
        "{:.2f} h, {:.2f} {}</title></circle>\n",
        x(c->hours), y(*c->total_cost), c->pareto ? "#d95f02" : "#7570b3",
        XmlEscape(c->instance->name), XmlEscape(c->region->region), PricingModeName(c->mode),
        c->hours, *c->total_cost, XmlEscape(currency));
  }
  std::vector<const Candidate*> front;
  for (const Candidate* c : points) {
    if (c->pareto) front.push_back(c);
  }
  std::sort(front.begin(), front.end(),
            [](const Candidate* a, const Candidate* b) { return a->hours < b->hours; });
  std::string path;
  for (const Candidate* c : front) {
    path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x(c->hours), y(*c->total_cost));
  }
  svg += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#d95f02\" "
      "stroke-width=\"1.5\"/>\n",
      path);
  const Candidate& best = r.ranked.front();
  svg += fmt::format(
      "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7\" fill=\"none\" stroke=\"#1b9e77\" "
      "stroke-width=\"2.5\"/>\n<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#1b9e77\">chosen: {} {} "
      "{}</text>\n",
      x(best.hours), y(*best.total_cost), x(best.hours) + 10, y(*best.total_cost) - 10,
      XmlEscape(best.instance->name), XmlEscape(best.region->region), PricingModeName(best.mode));
  svg +=
      fmt::format("<text x=\"{}\" y=\"18\">{} feasible candidates; Pareto front in orange</text>\n",
                  left, points.size());
  return svg + "</svg>\n";
}

}  // namespace cloudfit
