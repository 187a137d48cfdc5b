#include "server/api.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cloudfit/catalog_info.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/estimate_json.h"
#include "cloudfit/measured_calibration.h"
#include "cloudfit/recommend.h"
#include "cloudfit/recommend_report.h"
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

// Workload fields from the "workload" object; errors are prefixed with the JSON path.
Status WorkloadFrom(const Catalog& catalog, const json& body, Workload* w) {
  if (!body.contains("workload") || !body["workload"].is_object()) {
    return Status::InvalidArgument("workload: missing; an object of workload fields");
  }
  for (const auto& [key, value] : body["workload"].items()) {
    if (key == "model_config") {
      // The API reads no files: a config comes inline, as the JSON object config.json holds.
      if (!value.is_object()) {
        return Status::InvalidArgument(
            "workload.model_config: expected the config.json object itself (the API reads no "
            "files; send its contents, at most 4 MiB)");
      }
      Status s = SetWorkloadField(w, key, DumpJson(value));
      if (!s.ok()) return Status::InvalidArgument("workload." + s.message());
      continue;
    }
    if (value.is_object() || value.is_array()) {
      return Status::InvalidArgument("workload." + Shown(key) + ": expected a single value");
    }
    Status s = SetWorkloadField(w, key, Text(value));
    if (!s.ok()) return Status::InvalidArgument("workload." + s.message());
  }
  Status s = FinalizeWorkload(catalog, w);
  if (!s.ok()) return Status::InvalidArgument("workload." + s.message());
  return Status::OK();
}

// The optional "calibration" object: {"measured": ["1.9 it/s on 1x A10"], "probe": {...}}.
Status CalibrationFrom(const Catalog& catalog, const json& body, Workload* w) {
  if (!body.contains("calibration")) return Status::OK();
  const json& c = body["calibration"];
  if (!c.is_object()) return Status::InvalidArgument("calibration: expected an object");
  for (const auto& [key, value] : c.items()) {
    if (key != "measured" && key != "probe") {
      return Status::InvalidArgument("calibration." + key + ": unknown field; known: measured, probe");
    }
  }
  if (c.contains("probe")) {
    Status s = CalibrateFromProbe(catalog, c["probe"], w);
    if (!s.ok()) return Status::InvalidArgument("calibration.probe: " + s.message());
  }
  if (c.contains("measured")) {
    const json& list = c["measured"];
    if (!list.is_array()) {
      return Status::InvalidArgument("calibration.measured: expected an array of strings");
    }
    // Each measurement costs a search of some forty estimates: a handful is what anyone has.
    constexpr size_t kMaxMeasurements = 16;
    if (list.size() > kMaxMeasurements) {
      return Status::InvalidArgument(fmt::format(
          "calibration.measured: {} measurements; at most {}", list.size(), kMaxMeasurements));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      std::string field = fmt::format("calibration.measured[{}]", i);
      if (!list[i].is_string()) return Status::InvalidArgument(field + ": expected a string");
      ThroughputMeasurement m;
      Status s = ParseThroughputMeasurement(catalog, list[i].get<std::string>(), &m);
      if (s.ok()) s = CalibrateFromThroughput(catalog, m, w, nullptr);
      if (!s.ok()) return Status::InvalidArgument(field + ": " + s.message());
    }
  }
  return Status::OK();
}

// A list of names, as an array or a comma-separated string; each a bounded name.
constexpr size_t kMaxListItems = 1000;
Status StringList(const std::string& field, const json& v, std::vector<std::string>* out) {
  out->clear();
  if (v.is_array()) {
    for (const json& x : v) out->push_back(Text(x));
  } else {
    *out = SplitList(Text(v), ',');
  }
  if (out->size() > kMaxListItems) {
    return Status::InvalidArgument(
        fmt::format("{}: {} names; at most {}", field, out->size(), kMaxListItems));
  }
  for (size_t i = 0; i < out->size(); ++i) {
    Status s = CheckName(fmt::format("{}[{}]", field, i), (*out)[i]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status OptionsFrom(const json& body, RecommendOptions* o, size_t* top) {
  if (!body.contains("options")) return Status::OK();
  if (!body["options"].is_object()) return Status::InvalidArgument("options: expected an object");
  for (const auto& [key, value] : body["options"].items()) {
    std::string field = "options." + Shown(key);
    // A copy, not the structured binding: clang before 16 cannot capture bindings in lambdas.
    const std::string text = Text(value);
    double number = 0;
    long long whole = 0;
    auto need_number = [&](double min, double max, const char* unit) {
      return ParseNumber(field, text, min, max, unit, &number);
    };
    auto need_whole = [&](long long min, long long max) {
      return ParseWholeNumber(field, text, min, max, "", &whole);
    };
    Status s;
    if (key == "providers") s = StringList(field, value, &o->providers);
    else if (key == "regions") s = StringList(field, value, &o->regions);
    else if (key == "gpus") s = StringList(field, value, &o->gpus);
    else if (key == "exclude_gpus") s = StringList(field, value, &o->exclude_gpus);
    else if (key == "instances") s = StringList(field, value, &o->instances);
    else if (key == "deadline_hours") {
      if ((s = need_number(1e-6, 1e7, "hours")).ok()) o->deadline_hours = number;
    } else if (key == "budget") {
      if ((s = need_number(1e-6, 1e12, "")).ok()) o->budget = number;
    } else if (key == "min_gpus") {
      if ((s = need_number(0, 1e5, "GPUs")).ok()) o->min_gpus = number;
    } else if (key == "max_gpus") {
      if ((s = need_number(0, 1e5, "GPUs")).ok()) o->max_gpus = number;
    } else if (key == "max_nodes") {
      if ((s = need_whole(1, 64)).ok()) o->max_nodes = static_cast<int>(whole);
    } else if (key == "top") {
      if ((s = need_whole(1, 1000)).ok()) *top = static_cast<size_t>(whole);
    } else if (key == "hours") {
      if ((s = need_number(1e-6, 1e6, "hours")).ok()) o->fixed_hours = number;
    } else if (key == "currency") {
      if ((s = CheckName(field, Text(value))).ok()) o->currency = Text(value);
    } else if (key == "objective") {
      if (!ParseObjective(Text(value), &o->objective)) {
        s = Status::InvalidArgument(field + ": '" + Shown(Text(value)) +
                                    "' is not one of cheapest, fastest, balanced");
      }
    } else if (key == "pricing") {
      o->pricing.clear();
      std::vector<std::string> modes;
      s = StringList(field, value, &modes);
      for (size_t i = 0; s.ok() && i < modes.size(); ++i) {
        const std::string& p = modes[i];
        PricingMode mode;
        if (!ParsePricingMode(p, &mode)) {
          s = Status::InvalidArgument(field + ": '" + Shown(p) +
                                      "' is not one of ondemand, spot, reserved-1y, reserved-3y");
          break;
        }
        o->pricing.push_back(mode);
      }
    } else if (key == "spot") {
      if (!value.is_boolean()) {
        s = Status::InvalidArgument(field + ": expected true or false");
      } else if (!value.get<bool>()) {
        o->pricing.erase(std::remove(o->pricing.begin(), o->pricing.end(), PricingMode::kSpot),
                         o->pricing.end());
      }
    } else if (key == "include_cpu") {
      if (!value.is_boolean()) s = Status::InvalidArgument(field + ": expected true or false");
      else o->include_cpu = value.get<bool>();
    } else {
      s = Status::InvalidArgument(fmt::format(
          "{}: unknown option; known: providers, regions, gpus, exclude_gpus, instances, "
          "deadline_hours, budget, min_gpus, max_gpus, max_nodes, top, hours, currency, "
          "objective, pricing, spot, include_cpu",
          field));
    }
    if (!s.ok()) return s;
  }
  return Status::OK();
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
  Workload w;
  Status s = WorkloadFrom(catalog, request, &w);
  if (s.ok()) s = CalibrationFrom(catalog, request, &w);
  RecommendOptions o;
  size_t top = 20;
  if (s.ok()) s = OptionsFrom(request, &o, &top);
  Recommendation r;
  if (s.ok()) s = Recommend(catalog, w, o, &r);
  if (!s.ok()) return ApiError(400, s.message());
  json out = RecommendationToJson(w, o, r, top);
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
  Status s = WorkloadFrom(catalog, request, &w);
  if (s.ok()) s = CalibrationFrom(catalog, request, &w);
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
