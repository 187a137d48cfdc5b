#include "server/api.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cloudfit/catalog_info.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/estimate_json.h"
#include "cloudfit/measured_calibration.h"
#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
#include "cloudfit/request.h"
#include "util/date.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

using nlohmann::json;

ApiResponse Ok(const json& body) { return {200, DumpJson(body), "application/json"}; }

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : DumpJson(v); }

// Parses the body as a JSON object or says why not: bounded in size and nesting, UTF-8 only
// (a body that is not is a 400, not a 500 when the answer is written).
bool ParseBody(const std::string& body, json* out, ApiResponse* error) {
  Status s = ParseJson("body", body, kMaxDocumentBytes, out);
  if (!s.ok()) {
    *error = ApiError(400, s.message());
    return false;
  }
  if (!out->is_object()) {
    *error = ApiError(400, "body: expected a JSON object");
    return false;
  }
  return true;
}

}  // namespace

ApiResponse ApiError(int status, const std::string& message) {
  // DumpJson: a message quoting a client's bytes (a path that is not UTF-8) still serialises.
  return {status, DumpJson(json{{"error", message}}), "application/json"};
}

ApiResponse ApiRecommend(const Catalog& catalog, const std::string& body) {
  json request;
  ApiResponse error;
  if (!ParseBody(body, &request, &error)) return error;
  // The same decoder as the command line, workload files and JSON Lines (cloudfit/request.h).
  RecommendRequest decoded;
  Status s = DecodeRecommendRequest(catalog, request, &decoded);
  const Workload& w = decoded.workload;
  const RecommendOptions& o = decoded.options;
  Recommendation r;
  if (s.ok()) s = Recommend(catalog, w, o, &r);
  if (!s.ok()) return ApiError(400, s.message());
  json out = RecommendationToJson(w, o, r, o.top);
  // The page draws every feasible point; the ranked list stays at `top`.
  json points = json::array();
  for (const Candidate& c : r.ranked) {
    points.push_back({{"instance_type", c.instance->name},
                      {"region", c.region->region},
                      {"nodes", c.nodes},
                      {"pricing", PricingModeName(c.mode)},
                      {"hours", c.hours},
                      {"total_cost", c.total_cost ? json(*c.total_cost) : json()},
                      {"pareto", c.pareto}});
  }
  out["points"] = points;
  return Ok(out);
}

ApiResponse ApiEstimate(const Catalog& catalog, const std::string& body) {
  json request;
  ApiResponse error;
  if (!ParseBody(body, &request, &error)) return error;
  Workload w;
  Status s = request.contains("workload")
                 ? DecodeWorkload(catalog, request["workload"], "workload.", &w)
                 : Status::InvalidArgument("workload: missing; an object of workload fields");
  if (s.ok() && request.contains("calibration")) {
    s = DecodeCalibration(catalog, request["calibration"], &w);
  }
  if (!s.ok()) return ApiError(400, s.message());
  HardwareSpec spec;
  if (!request.contains("hardware") || !request["hardware"].is_object()) {
    return ApiError(400, "hardware: missing; an object with gpu and gpus, or instance");
  }
  for (const auto& [key, value] : request["hardware"].items()) {
    std::string field = "hardware." + Shown(key);
    long long nodes = 0;
    if (key == "gpu") {
      if ((s = CheckName(field, Text(value))).ok()) spec.gpu = Text(value);
    } else if (key == "instance") {
      if ((s = CheckName(field, Text(value))).ok()) spec.instance = Text(value);
    } else if (key == "gpus") {
      s = ParseNumber(field, Text(value), 0, 1024, "GPUs", &spec.gpus);
    } else if (key == "nodes") {
      if ((s = ParseWholeNumber(field, Text(value), 1, 100000, "nodes", &nodes)).ok()) {
        spec.nodes = static_cast<int>(nodes);
      }
    } else if (key == "network_gbps") {
      s = ParseNumber(field, Text(value), 0, 1e6, "Gbit/s", &spec.network_gbps);
    } else {
      return ApiError(400, field + ": unknown field; known: gpu, gpus, instance, nodes, "
                                   "network_gbps");
    }
    if (!s.ok()) return ApiError(400, s.message());
  }
  Hardware hw;
  s = ResolveHardware(catalog, spec, &hw);
  if (!s.ok()) {
    // ResolveHardware names command-line flags ("--gpu: ..."); here they are hardware fields.
    const std::string& message = s.message();
    return ApiError(400, "hardware." + (StartsWith(message, "--") ? message.substr(2) : message));
  }
  Estimate e;
  s = EstimateWorkload(catalog, w, hw, &e);
  if (!s.ok()) return ApiError(400, s.message());
  return Ok(EstimateToJson(w, e));
}

ApiResponse ApiGpus(const Catalog& catalog) {
  json list = json::array();
  for (const Accelerator& a : catalog.accelerators()) list.push_back(GpuToJson(a));
  return Ok({{"schema", "cloudfit.gpus/v1"}, {"count", list.size()}, {"gpus", list}});
}

ApiResponse ApiModels(const Catalog& catalog) {
  json list = json::array();
  for (const Model& m : catalog.models()) list.push_back(ModelToJson(m));
  return Ok({{"schema", "cloudfit.models/v1"}, {"count", list.size()}, {"models", list}});
}

ApiResponse ApiCatalog(const Catalog& catalog) {
  return Ok(CatalogSummaryToJson(Summarize(catalog, TodayDays())));
}

ApiResponse ApiInstances(const Catalog& catalog, const QueryParams& params) {
  InstanceQuery q;
  auto list = [&](const char* key) {
    std::vector<std::string> out;
    auto [lo, hi] = params.equal_range(key);
    for (auto it = lo; it != hi; ++it) {
      for (const std::string& v : SplitList(it->second, ',')) out.push_back(v);
    }
    return out;
  };
  std::string error;
  auto number = [&](const char* key) -> std::optional<double> {
    auto it = params.find(key);
    if (it == params.end()) return std::nullopt;
    double v = 0;
    if (!ParseDouble(it->second, &v)) {
      if (error.empty()) error = std::string(key) + ": '" + Shown(it->second) + "' is not a number";
      return std::nullopt;
    }
    return v;
  };
  static const char* kKnown[] = {"provider", "region", "family", "gpu", "gpu_only", "cpu_only",
                                 "gpus_min", "gpus_max", "gpu_memory_min", "gpu_memory_max",
                                 "vcpus_min", "vcpus_max", "memory_min", "memory_max",
                                 "price_min", "price_max", "pricing", "currency", "sort",
                                 "desc", "top", "arch", "priced_only", "per_type"};
  for (const auto& [key, value] : params) {
    bool known = false;
    for (const char* k : kKnown) known |= key == k;
    if (!known) return ApiError(400, Shown(key) + ": unknown query parameter");
  }
  q.providers = list("provider");
  q.regions = list("region");
  q.families = list("family");
  q.gpus = list("gpu");
  q.gpu_only = params.count("gpu_only") > 0;
  q.cpu_only = params.count("cpu_only") > 0;
  q.priced_only = params.count("priced_only") > 0;
  q.one_per_type = params.count("per_type") > 0;
  q.descending = params.count("desc") > 0;
  q.gpu_count = {number("gpus_min"), number("gpus_max")};
  q.gpu_memory_gib = {number("gpu_memory_min"), number("gpu_memory_max")};
  q.vcpus = {number("vcpus_min"), number("vcpus_max")};
  q.memory_gib = {number("memory_min"), number("memory_max")};
  q.price_per_hour = {number("price_min"), number("price_max")};
  if (auto it = params.find("top"); it != params.end()) {
    long long top = 0;
    Status s = ParseWholeNumber("top", it->second, 0, 1000000, "offers", &top);
    if (!s.ok()) return ApiError(400, s.message());
    q.top = static_cast<size_t>(top);
  }
  if (auto it = params.find("arch"); it != params.end()) q.arch = it->second;
  if (auto it = params.find("currency"); it != params.end()) q.currency = it->second;
  if (auto it = params.find("sort"); it != params.end()) q.sort_by = it->second;
  if (auto it = params.find("pricing"); it != params.end() && !ParsePricingMode(it->second, &q.pricing)) {
    return ApiError(400, "pricing: '" + Shown(it->second) +
                             "' is not one of ondemand, spot, reserved-1y, reserved-3y");
  }
  if (!error.empty()) return ApiError(400, error);
  std::vector<Offer> offers;
  Status s = FindOffers(catalog, q, &offers);
  if (!s.ok()) return ApiError(400, s.message().substr(s.message().rfind("--", 0) == 0 ? 2 : 0));
  return Ok(OffersToJson(offers, q.pricing));
}

}  // namespace cloudfit
