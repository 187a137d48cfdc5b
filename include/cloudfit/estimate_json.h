// The JSON form of an estimate (schema cloudfit.estimate/v1, see docs/json-schema.md), shared by
// the command line, batch mode and the server.
#ifndef CLOUDFIT_ESTIMATE_JSON_H_
#define CLOUDFIT_ESTIMATE_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cloudfit/estimate.h"

namespace cloudfit {

// The workload's assumptions (defaults it did not give) as [{field, value, why}].
nlohmann::json AssumptionsToJson(const Workload& w);
// The estimate as text (what EstimateToJson(...).dump(indent) gives), written without building
// the document; `indent` < 0 is compact.
std::string EstimateJsonText(const Workload& workload, const Estimate& estimate, int indent = -1);
nlohmann::json EstimateToJson(const Workload& workload, const Estimate& estimate);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_JSON_H_
