#include "cloudfit/recommend_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cloudfit/estimate_json.h"
#include "report/json_parts.h"
#include "util/date.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Members are written in ascending order of their names, as a JSON document (std::map) keeps
// them: the text is the same as the document's dump().

void WriteRisk(const JobRisk& r, JsonWriter* out) {
  out->BeginObject();
  out->Field("assumed_rate", r.assumed_rate);
  out->Field("checkpoint_interval_hours", r.checkpoint_interval_hours);
  out->Field("checkpoint_seconds", r.checkpoint_seconds);
  out->Field("expected_interruptions", r.expected_interruptions);
  out->Field("hardware_mtbf_hours", r.hardware_mtbf_hours);
  out->Field("mtbf_hours", r.mtbf_hours);
  out->Field("nodes", r.nodes);
  out->Field("overhead_fraction", r.overhead_fraction);
  out->Field("probability_interrupted", r.probability_interrupted);
  out->Field("rate_basis", r.rate_basis);
  out->Field("restart_hours", r.restart_hours);
  out->Field("spot_interruptions_per_month", r.spot_interruptions_per_month);
  out->Field("synchronous", r.synchronous);
  out->EndObject();
}

void WriteCosts(const std::vector<CostLine>& lines, JsonWriter* out) {
  out->BeginArray();
  for (const CostLine& line : lines) {
    out->BeginObject();
    out->Field("amount", line.amount);
    out->Field("detail", line.detail);
    out->Field("name", line.name);
    out->Field("source", line.source);
    out->EndObject();
  }
  out->EndArray();
}

// Every feasible candidate as a point of the time-versus-cost plot (the web page draws them).
template <typename Candidates>
void WritePointsOf(const Candidates& ranked, JsonWriter* out) {
  out->BeginArray();
  for (const Candidate& c : ranked) {
    out->BeginObject();
    out->Field("hours", c.hours);
    out->Field("instance_type", c.instance->name);
    out->Field("nodes", c.nodes);
    out->Field("pareto", c.pareto);
    out->Field("pricing", PricingModeName(c.mode));
    out->Field("region", c.region->region);
    out->Field("total_cost", c.total_cost);
    out->EndObject();
  }
  out->EndArray();
}

// The points read only numbers and marks an answer never changes (CandidateList::KeptText): the
// answers of a kept ranking share their text.
void WritePoints(const Recommendation& r, JsonWriter* out) {
  if (!out->compact()) return WritePointsOf(r.ranked, out);
  std::shared_ptr<const std::string> text =
      r.ranked.KeptText([](const std::vector<Candidate>& ranked) {
        std::string json;
        JsonWriter kept_writer(&json);
        WritePointsOf(ranked, &kept_writer);
        return json;
      });
  out->Written(*text);
}

void WriteHints(const std::vector<FitHint>& hints, JsonWriter* out) {
  // Rare (nothing feasible), and a hint's fields may repeat a name: built as documents, which
  // keep the last value of a name, as they always did.
  nlohmann::json list = nlohmann::json::array();
  for (const FitHint& h : hints) {
    nlohmann::json workload = nlohmann::json::object(), options = nlohmann::json::object();
    for (const auto& [k, v] : h.workload) workload[k] = v;
    for (const auto& [k, v] : h.options) options[k] = v;
    list.push_back({{"note", h.note}, {"workload", workload}, {"options", options}});
  }
  out->Value(list);
}

void WriteBestEstimate(const Workload& w, const Candidate& best, JsonWriter* out) {
  if (!best.text || !out->compact()) {
    WriteEstimate(w, *best.estimate, out);
    return;
  }
  CandidateText& text = *best.text;
  std::lock_guard<std::mutex> lock(text.mutex);
  if (text.best_estimate != best.estimate) {
    text.best_estimate_json.clear();
    JsonWriter kept_writer(&text.best_estimate_json);
    WriteEstimate(w, *best.estimate, &kept_writer);
    text.best_estimate = best.estimate;
  }
  out->Written(text.best_estimate_json);
}

// The rejections grouped by the kind of reason (the text before a colon, without the numbers
// that differ per candidate), sorted by it. A few kinds over hundreds of rejections, which come
// in runs of one kind: a short list searched from the kind found last.
std::vector<std::pair<std::string_view, int>> CountRejections(const CandidateList& rejected) {
  std::vector<std::pair<std::string_view, int>> kinds;
  size_t last = 0;
  for (const Candidate& c : rejected) {
    std::string_view reason = c.rejection;
    reason = reason.substr(0, reason.find(':'));
    if (last >= kinds.size() || kinds[last].first != reason) {
      last = 0;
      while (last < kinds.size() && kinds[last].first != reason) ++last;
      if (last == kinds.size()) kinds.emplace_back(reason, 0);
    }
    ++kinds[last].second;
  }
  std::sort(kinds.begin(), kinds.end());
  return kinds;
}

void WriteRecommendation(const Workload& w, const RecommendOptions& o, const Recommendation& r,
                         const RecommendationJsonOptions& how, JsonWriter* out) {
  out->BeginObject();
  out->Key("assumptions");
  WriteAssumptions(w, out);
  out->Key("best_estimate");
  if (r.ranked.empty()) {
    out->Null();
  } else {
    WriteBestEstimate(w, r.ranked.front(), out);
  }
  if (w.calibration.active()) out->Field("calibrated_from", w.calibration.basis);
  out->Field("candidates_considered", r.candidates_considered);
  out->Field("currency", o.currency);
  out->Field("feasible", r.ranked.size());
  if (!r.hints.empty()) {
    // Only when nothing is feasible: each hint with the fields and options that apply it.
    out->Key("hints");
    WriteHints(r.hints, out);
  }
  out->Field("notes", r.notes);
  out->Field("objective", ObjectiveName(o.objective));
  out->Key("options");
  out->BeginObject();
  out->Field("excluded_costs", o.excluded_costs);
  if (o.fixed_hours) out->Field("hours", *o.fixed_hours);
  out->Field("max_nodes", o.max_nodes);
  out->Key("pricing");
  out->BeginArray();
  for (PricingMode m : o.pricing) out->Value(PricingModeName(m));
  out->EndArray();
  out->Field("require_rdma", o.require_rdma);
  if (w.is_service()) out->Field("serving_hours", o.serving_hours);
  out->EndObject();
  out->Key("pareto");
  out->BeginArray();
  for (const Candidate& c : r.ranked) {
    if (c.pareto) WriteCandidate(c, o.currency, out);
  }
  out->EndArray();
  if (how.points) {
    out->Key("points");
    WritePoints(r, out);
  }
  out->Key("ranked");
  out->BeginArray();
  for (size_t i = 0; i < r.ranked.size() && (how.top == 0 || i < how.top); ++i) {
    WriteCandidate(r.ranked[i], o.currency, out);
  }
  out->EndArray();
  out->Key("rejected");
  out->BeginObject();
  for (const auto& [reason, count] : CountRejections(r.rejected)) out->Field(reason, count);
  out->EndObject();
  out->Field("schema", "cloudfit.recommend/v2");
  out->Key("workload");
  out->BeginObject();
  out->Field("kind", WorkloadKindName(w.kind));
  out->Field("model", w.model.name);
  out->Field("precision", NumericFormatName(w.precision));
  out->EndObject();
  out->EndObject();
}

void WriteCandidateFields(const Candidate& c, const std::string& currency, JsonWriter* out) {
  const Estimate& e = *c.estimate;
  out->BeginObject();
  if (c.autoscaling) {
    const AutoscalingPolicy& a = *c.autoscaling;
    out->Key("autoscaling");
    out->BeginObject();
    out->Field("max_replicas", a.max_replicas);
    out->Field("min_replicas", a.min_replicas);
    out->Field("scale_in_utilisation", a.scale_in_utilisation);
    out->Field("scale_out_utilisation", a.scale_out_utilisation);
    out->Field("utilisation_at_rate", a.utilisation_at_rate);
    out->EndObject();
  }
  out->Field("bottleneck", e.bottleneck);
  if (c.break_even_utilisation) out->Field("break_even_utilisation", *c.break_even_utilisation);
  out->Field("cost_per_unit", c.cost_per_unit);
  out->Key("costs");
  WriteCosts(c.costs, out);
  out->Field("currency", currency);
  if (c.instance->has_gpu()) {
    out->Field("gpu", c.instance->gpu_name());
  } else {
    out->NullField("gpu");
  }
  out->Field("gpus", c.total_gpus());
  out->Field("hours", c.hours);
  out->Field("instance_type", c.instance->name);
  // The breakdowns of the estimate behind the candidate (cloudfit.estimate/v1's fields).
  out->Key("memory");
  WriteMemory(e.memory, out);
  out->Field("memory_capacity_gib", e.memory.capacity_bytes / kGiB);
  out->Field("memory_used_gib", e.memory.total_bytes() / kGiB);
  out->Field("nodes", c.nodes);
  out->Field("pareto", c.pareto);
  if (c.region && c.region->as_of_known()) {
    out->Field("price_as_of", FormatIsoDate(c.region->as_of_days));
  } else {
    out->NullField("price_as_of");
  }
  out->Field("price_per_hour", c.price_per_hour);
  // Whose price it is: the region's own quote, or the type's lowest over every region of the
  // provider (a lower bound: the source does not say which region it is from).
  if (c.region && c.region->price(c.mode)) {
    out->Field("price_scope", PriceScopeName(*c.region, c.mode));
  } else {
    out->NullField("price_scope");
  }
  out->Field("pricing", PricingModeName(c.mode));
  out->Field("provider", c.instance->provider);
  out->Field("reasons", c.reasons);
  if (c.region) {
    out->Field("region", c.region->region);
  } else {
    out->NullField("region");
  }
  if (!c.rejection.empty()) out->Field("rejection", c.rejection);
  out->Field("replicas", c.replicas);
  if (c.risk) {
    out->Key("risk");
    WriteRisk(*c.risk, out);
  }
  if (c.spot) {
    out->Key("spot");
    WriteRisk(*c.spot, out);
  }
  out->Field("throughput", e.throughput);
  out->Field("throughput_unit", e.throughput_unit);
  out->Key("time");
  WriteTime(e.time, out);
  out->Field("total_cost", c.total_cost);
  out->Field("unit", c.unit);
  out->Field("warnings", c.warnings);
  out->EndObject();
}

}  // namespace

void WriteCandidate(const Candidate& c, const std::string& currency, JsonWriter* out) {
  if (!c.text || !out->compact()) {
    WriteCandidateFields(c, currency, out);
    return;
  }
  CandidateText& text = *c.text;
  std::lock_guard<std::mutex> lock(text.mutex);
  for (const CandidateText::Kept& k : text.kept) {
    if (k.estimate == c.estimate && k.pareto == c.pareto && k.currency == currency &&
        k.reasons == c.reasons && k.warnings == c.warnings) {
      out->Written(k.json);
      return;
    }
  }
  CandidateText::Kept k{c.estimate, c.pareto, currency, c.reasons, c.warnings, {}};
  JsonWriter kept_writer(&k.json);
  WriteCandidateFields(c, currency, &kept_writer);
  out->Written(k.json);
  if (text.kept.size() < CandidateText::kMaxKept) text.kept.push_back(std::move(k));
}

nlohmann::json CandidateToJson(const Candidate& c, const std::string& currency) {
  std::string text;
  JsonWriter out(&text);
  WriteCandidate(c, currency, &out);
  return ParseWritten(text);
}

void AppendRecommendationJson(const Workload& w, const RecommendOptions& o, const Recommendation& r,
                              const RecommendationJsonOptions& how, std::string* text) {
  JsonWriter out(text, how.indent);
  WriteRecommendation(w, o, r, how, &out);
}

nlohmann::json RecommendationToJson(const Workload& w, const RecommendOptions& o,
                                    const Recommendation& r, size_t top) {
  std::string text;
  RecommendationJsonOptions how;
  how.top = top;
  AppendRecommendationJson(w, o, r, how, &text);
  return ParseWritten(text);
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
