// One decoder for every way a recommendation is asked for: command-line flags, a workload file
// (YAML or JSON), a JSON Lines line and POST /v1/recommend all become the same JSON request and
// go through DecodeRecommendRequest, so the same workload gets the same defaults and the same
// answer, byte for byte, whatever the entry point. Decoding checks names and types; value
// ranges are checked by the workload's field setters and the recommender's option checks.
#ifndef CLOUDFIT_REQUEST_H_
#define CLOUDFIT_REQUEST_H_

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cloudfit/recommend.h"

namespace cloudfit {

struct RecommendRequest {
  Workload workload;  // finalized, with its assumptions and any calibration applied
  RecommendOptions options;
  // What the workload was decoded from, as canonical JSON (its fields and calibration): equal
  // keys decode to equal workloads on one catalog (the EstimateCache's key).
  std::string workload_key;
  // Where the options were in the request: "options." in the API's form, "" in the flat one.
  std::string options_path;
};

// The request, in one of two forms:
//   {"workload": {field: value}, "options": {name: value}, "calibration": {...}}  (the API's)
//   {field: value, option: value, "id": ...}                                       (JSON Lines)
// Values may be strings, numbers or booleans; lists may be arrays or comma-separated strings.
// Errors name the field by its path: "workload.batch: ...", "options.top: ...".
Status DecodeRecommendRequest(const Catalog& catalog, const nlohmann::json& request,
                              RecommendRequest* out);

// Workload fields from a JSON object (field names as in a workload file), finalized. `path` is
// the prefix for error messages ("workload." or "").
Status DecodeWorkload(const Catalog& catalog, const nlohmann::json& fields, const std::string& path,
                      Workload* w);

// {"measured": ["1.9 it/s on 1x A10"], "probe": {...}} applied to a finalized workload.
Status DecodeCalibration(const Catalog& catalog, const nlohmann::json& calibration, Workload* w);

// The option names DecodeRecommendRequest accepts (the recommend flags, with underscores).
const std::vector<std::string>& RecommendOptionNames();

// Defaults that depend on the workload: serving and streaming keep users waiting when spot
// capacity is reclaimed, so unless `pricing` or `spot` was given they are priced on demand only.
void FinalizeRecommendOptions(const Workload& w, const std::set<std::string>& given,
                              RecommendOptions* o);

// `status` with the option it names given its place in `request`: the recommender names its
// options by their names ("max_nodes: must be in [1, 1024]"), the API's form puts them under
// "options.". Other messages are returned as they are.
Status WithRequestOptionPath(const RecommendRequest& request, const Status& status);

}  // namespace cloudfit

#endif  // CLOUDFIT_REQUEST_H_
