// The JSON form of an estimate (schema cloudfit.estimate/v1, see docs/json-schema.md), shared by
// the command line, batch mode and the server.
#ifndef CLOUDFIT_ESTIMATE_JSON_H_
#define CLOUDFIT_ESTIMATE_JSON_H_

#include <nlohmann/json.hpp>

#include "cloudfit/estimate.h"

namespace cloudfit {

// The workload's assumptions (defaults it did not give) as [{field, value, why}].
nlohmann::json AssumptionsToJson(const Workload& w);
nlohmann::json EstimateToJson(const Workload& workload, const Estimate& estimate);
// The estimate's memory and time breakdowns, as EstimateToJson writes them.
nlohmann::json MemoryToJson(const MemoryBreakdown& memory);
nlohmann::json TimeToJson(const TimeBreakdown& time);

}  // namespace cloudfit

#endif  // CLOUDFIT_ESTIMATE_JSON_H_
