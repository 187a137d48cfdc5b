#include "cloudfit/compare_report.h"

#include <fmt/format.h>

#include "cloudfit/estimate_json.h"
#include "cloudfit/recommend_report.h"

namespace cloudfit {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string Gpus(const CompareChoice& c) {
  if (c.instance == nullptr) return c.label;
  std::string out = c.instance->has_gpu()
                        ? FormatNumber(c.instance->gpu_count * c.nodes, 2) + "x " + c.instance->gpu_name()
                        : fmt::format("{} vCPUs", c.instance->vcpus * c.nodes);
  if (c.nodes > 1) out += fmt::format(" ({} nodes)", c.nodes);
  return out;
}

}  // namespace

nlohmann::json ComparisonToJson(const Workload& w, const RecommendOptions& o, const Comparison& c) {
  nlohmann::json choices = nlohmann::json::array();
  for (const CompareEntry& e : c.entries) {
    nlohmann::json j = {{"choice", e.choice.label},
                        {"instance_type", e.choice.instance ? nlohmann::json(e.choice.instance->name)
                                                            : nlohmann::json(nullptr)},
                        {"provider", e.choice.instance ? nlohmann::json(e.choice.instance->provider)
                                                       : nlohmann::json(nullptr)},
                        {"nodes", e.choice.nodes},
                        {"hardware", Gpus(e.choice)},
                        {"resolution", e.choice.resolution},
                        {"rejection", e.rejection}};
    if (e.estimate) {
      const Estimate& est = *e.estimate;
      j["fits"] = est.fits;
      j["memory_used_gib"] = est.memory.total_bytes() / kGiB;
      j["memory_capacity_gib"] = est.memory.capacity_bytes / kGiB;
      j["estimated_hours"] = est.total_s / 3600;
      j["throughput"] = est.throughput;
      j["throughput_unit"] = est.throughput_unit;
      j["bottleneck"] = est.bottleneck;
    }
    nlohmann::json offers = nlohmann::json::array();
    for (const ModeOffer& offer : e.offers) {
      if (offer.best) {
        nlohmann::json candidate = CandidateToJson(*offer.best, o.currency);
        offers.push_back(candidate);
      } else {
        offers.push_back({{"pricing", PricingModeName(offer.mode)}, {"rejection", offer.rejection}});
      }
    }
    j["offers"] = offers;
    choices.push_back(j);
  }
  return {{"schema", "cloudfit.compare/v1"},
          {"workload",
           {{"kind", WorkloadKindName(w.kind)},
            {"model", w.model.name},
            {"precision", NumericFormatName(w.precision)}}},
          {"assumptions", AssumptionsToJson(w)},
          {"currency", o.currency},
          {"choices", choices},
          {"differences", c.differences}};
}

Table ComparisonTable(const Comparison& c, const RecommendOptions& o) {
  std::vector<Table::Column> columns = {{"choice", "choice"},
                                        {"hardware", "hardware"},
                                        {"memory", "mem GiB", true},
                                        {"hours", "time h", true},
                                        {"throughput", "throughput", true},
                                        {"bottleneck", "bottleneck"}};
  for (PricingMode mode : o.pricing) {
    columns.push_back({std::string(PricingModeName(mode)),
                       std::string(PricingModeName(mode)) + " " + o.currency, true});
  }
  columns.push_back({"risk", "spot interrupted"});
  Table table(columns);
  for (const CompareEntry& e : c.entries) {
    std::vector<TableCell> row = {e.choice.label, Gpus(e.choice)};
    if (e.estimate) {
      const Estimate& est = *e.estimate;
      row.push_back(fmt::format("{:.1f}/{:.1f}{}", est.memory.total_bytes() / kGiB,
                                est.memory.capacity_bytes / kGiB, est.fits ? "" : " NO"));
      const Candidate* best = e.cheapest();
      row.push_back(FormatNumber(best ? best->hours : est.total_s / 3600, 2));
      row.push_back(FormatNumber(est.throughput, 1) + " " + est.throughput_unit);
      row.push_back(e.rejection.empty() ? est.bottleneck : e.rejection.substr(0, 40));
    } else {
      row.insert(row.end(), {"-", "-", "-", e.rejection.substr(0, 40)});
    }
    std::string risk = "-";
    for (const ModeOffer& offer : e.offers) {
      row.push_back(offer.best ? FormatNumber(*offer.best->total_cost, 2) : "-");
      if (offer.mode == PricingMode::kSpot && offer.best && offer.best->spot) {
        risk = fmt::format("{:.2g}% (+{:.2g}% time)",
                           100 * offer.best->spot->probability_interrupted,
                           100 * offer.best->spot->overhead_fraction);
      }
    }
    for (size_t i = e.offers.size(); i < o.pricing.size(); ++i) row.push_back("-");
    row.push_back(risk);
    table.AddRow(row);
  }
  return table;
}

}  // namespace cloudfit
