#include "server/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cloudfit/catalog_info.h"
#include "cloudfit/catalog_json.h"
#include "cloudfit/estimate_json.h"
#include "cloudfit/export.h"
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

ApiResponse ApiRecommend(const Catalog& catalog, const std::string& body, EstimateCache* cache) {
  json request;
  ApiResponse error;
  if (!ParseBody(body, &request, &error)) return error;
  // The same decoder as the command line, workload files and JSON Lines (cloudfit/request.h).
  RecommendRequest decoded;
  Status s = DecodeRecommendRequest(catalog, request, &decoded);
  const Workload& w = decoded.workload;
  const RecommendOptions& o = decoded.options;
  Recommendation r;
  if (s.ok()) {
    s = WithRequestOptionPath(
        decoded,
        Recommend(catalog, w, o, &r, cache ? cache->For(decoded.workload_key).get() : nullptr));
  }
  if (!s.ok()) return ApiError(400, s.message());
  // The page draws every feasible point (`points`); the ranked list stays at `top`.
  RecommendationJsonOptions how;
  how.top = o.top;
  how.points = true;
  ApiResponse response{200, {}, "application/json"};
  AppendRecommendationJson(w, o, r, how, &response.body);
  return response;
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
      return ApiError(400, field +
                               ": unknown field; known: gpu, gpus, instance, nodes, "
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
  return {200, EstimateJsonText(w, e), "application/json"};
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
  static const char* kKnown[] = {"provider",
                                 "region",
                                 "family",
                                 "gpu",
                                 "gpu_only",
                                 "cpu_only",
                                 "gpus_min",
                                 "gpus_max",
                                 "gpu_memory_min",
                                 "gpu_memory_max",
                                 "vcpus_min",
                                 "vcpus_max",
                                 "memory_min",
                                 "memory_max",
                                 "price_min",
                                 "price_max",
                                 "pricing",
                                 "currency",
                                 "sort",
                                 "desc",
                                 "top",
                                 "arch",
                                 "priced_only",
                                 "per_type"};
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
  if (auto it = params.find("pricing");
      it != params.end() && !ParsePricingMode(it->second, &q.pricing)) {
    return ApiError(400, "pricing: '" + Shown(it->second) +
                             "' is not one of ondemand, spot, reserved-1y, reserved-3y");
  }
  if (!error.empty()) return ApiError(400, error);
  std::vector<Offer> offers;
  Status s = FindOffers(catalog, q, &offers);
  if (!s.ok()) return ApiError(400, s.message().substr(s.message().rfind("--", 0) == 0 ? 2 : 0));
  return Ok(OffersToJson(offers, q.pricing));
}

namespace {

// The limits of an export request, as `cloudfit export` states them for its flags.
constexpr double kMaxExportRank = 1000;
constexpr double kMaxExportNodes = 4096;
constexpr double kMaxExportReplicas = 10000;
constexpr double kMaxExportDiskGb = 65536;
constexpr size_t kMaxExportNameBytes = 256;

// A whole number in [min, max] from a JSON number or numeric string, or an error naming it.
Status WholeFrom(const std::string& field, const json& value, double min, double max, int* out) {
  double number = 0;
  if (value.is_boolean() || value.is_null() || !ParseDouble(Text(value), &number) ||
      !(number >= min && number <= max) || number != std::floor(number)) {
    return Status::InvalidArgument(fmt::format("{}: '{}' is not a whole number in [{}, {}]", field,
                                               Shown(Text(value)), min, max));
  }
  *out = static_cast<int>(number);
  return Status::OK();
}

// A name (instance type, region, resource name): a string of printable characters, bounded.
Status NameFrom(const std::string& field, const json& value, std::string* out) {
  if (!value.is_string()) return Status::InvalidArgument(field + ": expected a string");
  std::string text = value.get<std::string>();
  bool printable = std::all_of(text.begin(), text.end(), [](char c) {
    return static_cast<unsigned char>(c) >= 0x20 && c != 0x7f;
  });
  if (Trim(text).empty() || text.size() > kMaxExportNameBytes || !printable) {
    return Status::InvalidArgument(fmt::format(
        "{}: expected a name of 1 to {} printable characters", field, kMaxExportNameBytes));
  }
  *out = std::string(Trim(text));
  return Status::OK();
}

std::string ExportFileName(const std::string& name, ExportFormat format) {
  std::string base = name.empty() ? "cloudfit" : ResourceName(name);
  switch (format) {
    case ExportFormat::kSkyPilot:
      return base + ".sky.yaml";
    case ExportFormat::kTerraform:
      return base + ".tf";
    case ExportFormat::kKubernetes:
      return base + ".k8s.yaml";
  }
  return base;
}

}  // namespace

ApiResponse ApiExport(const Catalog& catalog, const std::string& body, EstimateCache* cache) {
  json request;
  ApiResponse error;
  if (!ParseBody(body, &request, &error)) return error;
  static const char* kKnown[] = {"format",   "workload", "calibration", "options", "rank",
                                 "instance", "region",   "pricing",     "nodes",   "replicas",
                                 "serving",  "name",     "disk_gb"};
  for (const auto& item : request.items()) {
    // Not a structured binding: clang (C++20 as clang 14 has it) cannot capture one in a lambda.
    const std::string& key = item.key();
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return key == k; })) {
      return ApiError(400,
                      Shown(key) +
                          ": unknown field; known: format, workload, calibration, "
                          "options, rank (a recommendation's offer), or instance, region, pricing, "
                          "nodes, replicas, serving; and name, disk_gb");
    }
  }
  ExportFormat format;
  if (!request.contains("format") || !request["format"].is_string() ||
      !ParseExportFormat(request["format"].get<std::string>(), &format)) {
    return ApiError(400, "format: expected one of skypilot, terraform, kubernetes");
  }
  bool ranked = request.contains("rank") || request.contains("workload");
  bool named = request.contains("instance");
  if (ranked == named) {
    return ApiError(400,
                    "rank: give either rank with workload (an offer of the recommendation "
                    "for it) or instance (with region and pricing), not both or neither");
  }
  for (const char* key : {"region", "pricing", "nodes", "replicas", "serving"}) {
    if (ranked && request.contains(key)) {
      return ApiError(400,
                      std::string(key) + ": goes with instance; with rank the ranking chooses");
    }
  }
  for (const char* key : {"calibration", "options"}) {
    if (named && request.contains(key)) {
      return ApiError(400, std::string(key) + ": goes with rank and workload, not instance");
    }
  }
  Status s;
  ExportTarget target;
  if (ranked) {
    int rank = 1;
    if (request.contains("rank")) s = WholeFrom("rank", request["rank"], 1, kMaxExportRank, &rank);
    // The rest is a recommend request, decoded as /v1/recommend decodes it.
    json recommend_request = json::object();
    for (const char* key : {"workload", "options", "calibration"}) {
      if (request.contains(key)) recommend_request[key] = request[key];
    }
    // A rank without a workload still names the field the decoder asks for.
    if (!recommend_request.contains("workload")) recommend_request["workload"] = json();
    RecommendRequest decoded;
    if (s.ok()) s = DecodeRecommendRequest(catalog, recommend_request, &decoded);
    const Workload& w = decoded.workload;
    const RecommendOptions& o = decoded.options;
    Recommendation r;
    if (s.ok()) {
      s = WithRequestOptionPath(
          decoded,
          Recommend(catalog, w, o, &r, cache ? cache->For(decoded.workload_key).get() : nullptr));
    }
    if (!s.ok()) return ApiError(400, s.message());
    if (r.ranked.empty()) {
      return ApiError(400, "rank: nothing is feasible for this workload, so nothing to export");
    }
    if (static_cast<size_t>(rank) > r.ranked.size()) {
      return ApiError(400, fmt::format("rank: {} is past the last of the {} feasible offers", rank,
                                       r.ranked.size()));
    }
    target = ExportTargetFromCandidate(w, r.ranked[static_cast<size_t>(rank) - 1], o.currency);
  } else {
    std::string instance, region;
    s = NameFrom("instance", request["instance"], &instance);
    if (s.ok() && request.contains("region")) s = NameFrom("region", request["region"], &region);
    PricingMode mode = PricingMode::kOnDemand;
    if (s.ok() && request.contains("pricing") &&
        (!request["pricing"].is_string() ||
         !ParsePricingMode(request["pricing"].get<std::string>(), &mode))) {
      s = Status::InvalidArgument(
          "pricing: expected one of ondemand, spot, reserved-1y, reserved-3y");
    }
    if (s.ok()) s = ExportTargetForInstance(catalog, instance, region, mode, &target);
    if (s.ok() && request.contains("nodes")) {
      s = WholeFrom("nodes", request["nodes"], 1, kMaxExportNodes, &target.nodes);
    }
    if (s.ok() && request.contains("replicas")) {
      s = WholeFrom("replicas", request["replicas"], 1, kMaxExportReplicas, &target.replicas);
    }
    if (s.ok() && request.contains("serving")) {
      if (!request["serving"].is_boolean())
        s = Status::InvalidArgument("serving: expected true or false");
      else
        target.serving = request["serving"].get<bool>();
    }
    if (!s.ok()) return ApiError(400, s.message());
  }
  if (request.contains("name")) {
    std::string name;
    s = NameFrom("name", request["name"], &name);
    if (!s.ok()) return ApiError(400, s.message());
    target.name = ResourceName(name);
  }
  if (request.contains("disk_gb")) {
    s = WholeFrom("disk_gb", request["disk_gb"], 1, kMaxExportDiskGb, &target.disk_gb);
    if (!s.ok()) return ApiError(400, s.message());
  }
  std::string text;
  s = Export(target, format, &text);
  if (!s.ok()) return ApiError(400, s.message());
  return Ok({{"schema", "cloudfit.export/v1"},
             {"format", ExportFormatName(format)},
             {"filename", ExportFileName(target.name, format)},
             {"text", text}});
}

ApiResponse ApiWorkloadFields() {
  json fields = json::array();
  for (const WorkloadField& f : WorkloadFields()) {
    // What the parser accepts, in its own words: the error it gives for a value no field
    // allows (docs/workload-format.md is generated the same way).
    Workload w;
    Status s = SetWorkloadField(&w, f.name, "");
    if (s.ok()) s = SetWorkloadField(&w, f.name, "?");
    std::string accepted = "any text";
    if (!s.ok()) {
      size_t at = s.message().find("is not allowed; ");
      accepted = at == std::string::npos ? s.message() : s.message().substr(at + 16);
    }
    fields.push_back({{"name", f.name}, {"help", f.help}, {"accepted", accepted}});
  }
  return Ok(
      {{"schema", "cloudfit.workload-fields/v1"}, {"count", fields.size()}, {"fields", fields}});
}

}  // namespace cloudfit
