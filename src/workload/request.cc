#include "cloudfit/request.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "cloudfit/measured_calibration.h"
#include "cloudfit/skypilot_task.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

using nlohmann::json;

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<std::string> StringList(const json& v) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const json& x : v) {
      for (const std::string& item : SplitList(Text(x), ',')) out.push_back(item);
    }
  } else {
    out = SplitList(Text(v), ',');
  }
  return out;
}

// A list of names (providers, regions, GPUs, instances): bounded in count, each a bounded name.
constexpr size_t kMaxListItems = 1000;
Status CheckNameList(const std::string& field, const std::vector<std::string>& names) {
  if (names.size() > kMaxListItems) {
    return Status::InvalidArgument(
        fmt::format("{}: {} names; at most {}", field, names.size(), kMaxListItems));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    Status s = CheckName(fmt::format("{}[{}]", field, i), names[i]);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status Invalid(const std::string& field, const std::string& message) {
  return Status::InvalidArgument(field + ": " + message);
}

// Numbers go through the validation module (util/validate.h), so NaN, infinities and ranges are
// refused in the same words from every entry point.
Status Number(const std::string& field, const json& v, double min, double max, double* out) {
  if (!v.is_number() && !v.is_string()) {
    return Invalid(field, fmt::format("'{}' is not a number", Shown(Text(v))));
  }
  return ParseNumber(field, Text(v), min, max, "", out);
}

Status Bool(const std::string& field, const json& v, bool* out) {
  if (v.is_boolean()) {
    *out = v.get<bool>();
    return Status::OK();
  }
  std::string k = ToLower(Text(v));
  if (k == "true" || k == "yes" || k == "1")
    *out = true;
  else if (k == "false" || k == "no" || k == "0")
    *out = false;
  else
    return Invalid(field, fmt::format("expected true or false, not '{}'", Shown(Text(v))));
  return Status::OK();
}

using OptionSetter =
    std::function<Status(const std::string& field, const json& v, RecommendOptions* o)>;

OptionSetter List(std::vector<std::string> RecommendOptions::*member) {
  return [member](const std::string& field, const json& v, RecommendOptions* o) {
    // A list's items are names: a number or an object in one is a mistake, not a name.
    for (size_t i = 0; v.is_array() && i < v.size(); ++i) {
      if (!v[i].is_string()) return Invalid(fmt::format("{}[{}]", field, i), "expected a string");
    }
    std::vector<std::string> names = StringList(v);
    Status s = CheckNameList(field, names);
    if (s.ok()) o->*member = std::move(names);
    return s;
  };
}

OptionSetter OptionalNumber(std::optional<double> RecommendOptions::*member, double min,
                            double max) {
  return [=](const std::string& field, const json& v, RecommendOptions* o) {
    double n = 0;
    Status s = Number(field, v, min, max, &n);
    if (s.ok()) o->*member = n;
    return s;
  };
}

OptionSetter Flag(bool RecommendOptions::*member) {
  return [member](const std::string& field, const json& v, RecommendOptions* o) {
    return Bool(field, v, &(o->*member));
  };
}

// Every option by name; the order is the documentation's.
const std::map<std::string, OptionSetter>& Options() {
  static const std::map<std::string, OptionSetter> options = {
      {"providers", List(&RecommendOptions::providers)},
      {"regions", List(&RecommendOptions::regions)},
      {"gpus", List(&RecommendOptions::gpus)},
      {"exclude_gpus", List(&RecommendOptions::exclude_gpus)},
      {"instances", List(&RecommendOptions::instances)},
      {"deadline_hours", OptionalNumber(&RecommendOptions::deadline_hours, 1e-6, 1e7)},
      {"budget", OptionalNumber(&RecommendOptions::budget, 1e-6, 1e12)},
      {"min_gpus", OptionalNumber(&RecommendOptions::min_gpus, 0, 1e5)},
      {"max_gpus", OptionalNumber(&RecommendOptions::max_gpus, 0, 1e5)},
      {"hours", OptionalNumber(&RecommendOptions::fixed_hours, 1e-6, 1e6)},
      {"max_nodes",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         double n = 0;
         Status s = Number(field, v, 1, 1024, &n);
         if (s.ok()) o->max_nodes = static_cast<int>(n);
         return s;
       }},
      {"max_spot_nodes",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         double n = 0;
         Status s = Number(field, v, 1, 1024, &n);
         if (s.ok()) o->max_spot_nodes = static_cast<int>(n);
         return s;
       }},
      {"top",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         double n = 0;
         Status s = Number(field, v, 0, 100000, &n);
         if (s.ok()) o->top = static_cast<size_t>(n);
         return s;
       }},
      {"serving_hours",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         return Number(field, v, 1e-3, 1e6, &o->serving_hours);
       }},
      {"currency",
       [](const std::string&, const json& v, RecommendOptions* o) {
         o->currency = Text(v);
         return Status::OK();
       }},
      {"objective",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         if (ParseObjective(Text(v), &o->objective)) return Status::OK();
         return Invalid(
             field, fmt::format("'{}' is not one of cheapest, fastest, balanced", Shown(Text(v))));
       }},
      {"pricing",
       [](const std::string& field, const json& v, RecommendOptions* o) {
         o->pricing.clear();
         for (const std::string& p : StringList(v)) {
           PricingMode mode;
           if (!ParsePricingMode(p, &mode)) {
             return Invalid(
                 field, fmt::format("'{}' is not one of ondemand, spot, reserved-1y, reserved-3y",
                                    Shown(p)));
           }
           if (std::find(o->pricing.begin(), o->pricing.end(), mode) == o->pricing.end()) {
             o->pricing.push_back(mode);
           }
         }
         return Status::OK();
       }},
      // Applied by FinalizeRecommendOptions, after the kind's default pricing.
      {"spot",
       [](const std::string& field, const json& v, RecommendOptions*) {
         bool unused = false;
         return Bool(field, v, &unused);
       }},
      {"include_cpu", Flag(&RecommendOptions::include_cpu)},
      {"all_regions", Flag(&RecommendOptions::all_regions)},
      {"scale_to_zero", Flag(&RecommendOptions::allow_scale_to_zero)},
      {"require_rdma", Flag(&RecommendOptions::require_rdma)},
      {"exclude_costs", List(&RecommendOptions::excluded_costs)},
  };
  return options;
}

bool IsOption(const std::string& key) { return Options().count(key) > 0; }

Status SetOption(const std::string& path, const std::string& key, const json& value,
                 RecommendOptions* o, std::set<std::string>* given) {
  auto it = Options().find(key);
  if (it == Options().end()) {
    return Invalid(path + Shown(key),
                   "unknown option; known: " + Join(RecommendOptionNames(), ", "));
  }
  if (value.is_object() ||
      (value.is_array() && key != "providers" && key != "regions" && key != "gpus" &&
       key != "exclude_gpus" && key != "instances" && key != "pricing" && key != "exclude_costs")) {
    return Invalid(path + key, "expected a single value");
  }
  Status s = it->second(path + key, value, o);
  if (s.ok()) given->insert(key);
  return s;
}

}  // namespace

Status WithRequestOptionPath(const RecommendRequest& request, const Status& status) {
  if (status.ok() || request.options_path.empty()) return status;
  const std::string& m = status.message();
  size_t colon = m.find(':');
  if (colon == std::string::npos || !IsOption(m.substr(0, colon))) return status;
  return Status::InvalidArgument(request.options_path + m);
}

const std::vector<std::string>& RecommendOptionNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, setter] : Options()) out.push_back(name);
    return out;
  }();
  return names;
}

Status DecodeWorkload(const Catalog& catalog, const json& fields, const std::string& path,
                      Workload* w) {
  if (!fields.is_object()) {
    return Invalid(path.empty() ? "workload" : path.substr(0, path.size() - 1),
                   "expected an object of workload fields");
  }
  for (const auto& [key, value] : fields.items()) {
    if (key == "model_config") {
      // The API reads no files: a config comes inline, as the JSON object config.json holds.
      if (!value.is_object()) {
        return Invalid(path + key,
                       "expected the config.json object itself (the API reads no files; send "
                       "its contents, at most 4 MiB)");
      }
      Status s = SetWorkloadField(w, key, DumpJson(value));
      if (!s.ok()) return Status::InvalidArgument(path + s.message());
      continue;
    }
    if (value.is_object() || value.is_array() || value.is_null()) {
      return Invalid(path + Shown(key), "expected a single value");
    }
    Status s = SetWorkloadField(w, key, Text(value));
    if (!s.ok()) return Status::InvalidArgument(path + s.message());
  }
  Status s = FinalizeWorkload(catalog, w);
  if (!s.ok()) return Status::InvalidArgument(path + s.message());
  return Status::OK();
}

Status DecodeCalibration(const Catalog& catalog, const json& c, Workload* w) {
  if (!c.is_object()) return Invalid("calibration", "expected an object");
  for (const auto& [key, value] : c.items()) {
    if (key != "measured" && key != "probe") {
      return Invalid("calibration." + Shown(key), "unknown field; known: measured, probe");
    }
  }
  if (c.contains("probe")) {
    Status s = CalibrateFromProbe(catalog, c["probe"], w);
    if (!s.ok()) return Invalid("calibration.probe", s.message());
  }
  if (c.contains("measured")) {
    const json& list = c["measured"];
    if (!list.is_array()) return Invalid("calibration.measured", "expected an array of strings");
    // Each measurement costs a search of some forty estimates: a handful is what anyone has.
    constexpr size_t kMaxMeasurements = 16;
    if (list.size() > kMaxMeasurements) {
      return Invalid("calibration.measured",
                     fmt::format("{} measurements; at most {}", list.size(), kMaxMeasurements));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      std::string field = fmt::format("calibration.measured[{}]", i);
      if (!list[i].is_string()) return Invalid(field, "expected a string");
      ThroughputMeasurement m;
      Status s = ParseThroughputMeasurement(catalog, list[i].get<std::string>(), &m);
      if (s.ok()) s = CalibrateFromThroughput(catalog, m, w, nullptr);
      if (!s.ok()) return Invalid(field, s.message());
    }
  }
  return Status::OK();
}

void FinalizeRecommendOptions(const Workload& w, const std::set<std::string>& given,
                              RecommendOptions* o) {
  if (!given.count("pricing")) {
    o->pricing = w.is_service()
                     ? std::vector<PricingMode>{PricingMode::kOnDemand}
                     : std::vector<PricingMode>{PricingMode::kOnDemand, PricingMode::kSpot};
  }
  std::sort(o->excluded_costs.begin(), o->excluded_costs.end());
  o->excluded_costs.erase(std::unique(o->excluded_costs.begin(), o->excluded_costs.end()),
                          o->excluded_costs.end());
}

Status DecodeRecommendRequest(const Catalog& catalog, const json& request, RecommendRequest* out) {
  *out = RecommendRequest();
  if (!request.is_object()) return Status::InvalidArgument("request: expected a JSON object");
  bool structured = request.contains("workload");
  json workload = json::object();
  json options = json::object();
  json calibration;
  std::string workload_path = structured ? "workload." : "";
  std::string options_path = structured ? "options." : "";
  out->options_path = options_path;
  if (structured) {
    for (const auto& [key, value] : request.items()) {
      if (key != "workload" && key != "options" && key != "calibration" && key != "id") {
        return Invalid(key, "unknown field; known: workload, options, calibration");
      }
    }
    workload = request["workload"];
    if (request.contains("options")) {
      options = request["options"];
      if (!options.is_object()) return Invalid("options", "expected an object");
    }
    if (request.contains("calibration")) calibration = request["calibration"];
  } else {
    for (const auto& [key, value] : request.items()) {
      if (key == "id") continue;
      if (key == "calibration")
        calibration = value;
      else if (IsOption(key))
        options[key] = value;
      else
        workload[key] = value;
    }
  }
  Status s = DecodeWorkload(catalog, workload, workload_path, &out->workload);
  if (s.ok() && !calibration.is_null()) s = DecodeCalibration(catalog, calibration, &out->workload);
  // nlohmann::json keeps an object's keys sorted, so the dump is canonical; the workload is
  // decoded from these two values and the catalog alone.
  if (s.ok()) out->workload_key = DumpJson(workload) + '\n' + DumpJson(calibration);
  std::set<std::string> given;
  for (auto it = options.begin(); s.ok() && it != options.end(); ++it) {
    s = SetOption(options_path, it.key(), it.value(), &out->options, &given);
  }
  if (!s.ok()) return s;
  // Checked here, where the catalog is at hand, so that the error names the request's field
  // (options.currency) rather than the command line's flag the recommender would name.
  if (given.count("currency") && catalog.FindCurrency(out->options.currency) == nullptr) {
    std::vector<std::string> known;
    for (const CurrencyRate& c : catalog.currencies()) known.push_back(c.currency);
    return Invalid(options_path + "currency",
                   fmt::format("'{}' has no rate; known: {}", Shown(out->options.currency),
                               Join(known, ", ")));
  }
  // An empty list is checked here too, so that the error names the request's field.
  if (given.count("pricing") && out->options.pricing.empty()) {
    return Invalid(options_path + "pricing",
                   "give at least one of ondemand, spot, reserved-1y, reserved-3y");
  }
  FinalizeRecommendOptions(out->workload, given, &out->options);
  if (options.contains("spot")) {
    bool spot = false;
    Bool(options_path + "spot", options["spot"], &spot).ok();
    auto& p = out->options.pricing;
    p.erase(std::remove(p.begin(), p.end(), PricingMode::kSpot), p.end());
    if (spot) p.push_back(PricingMode::kSpot);
  }
  // SkyPilot's "A100:8" in gpus: the instance types with that many of that GPU per node.
  s = ApplyAcceleratorCounts(catalog, &out->options);
  if (!s.ok() && StartsWith(s.message(), "--gpu: ")) {
    return Invalid(options_path + "gpus", s.message().substr(7));
  }
  return s;
}

}  // namespace cloudfit
