// Renderings of a comparison: JSON (schema cloudfit.compare/v1, docs/json-schema.md) and a table
// with one row per choice.
#ifndef CLOUDFIT_COMPARE_REPORT_H_
#define CLOUDFIT_COMPARE_REPORT_H_

#include <nlohmann/json.hpp>

#include "cloudfit/compare.h"
#include "cloudfit/table.h"

namespace cloudfit {

nlohmann::json ComparisonToJson(const Workload& w, const RecommendOptions& o, const Comparison& c);
Table ComparisonTable(const Comparison& c, const RecommendOptions& o);

}  // namespace cloudfit

#endif  // CLOUDFIT_COMPARE_REPORT_H_
