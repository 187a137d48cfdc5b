// Renderings of a recommendation: JSON (schema cloudfit.recommend/v1), a table of the top
// candidates, and an SVG of the time-versus-cost Pareto front.
#ifndef CLOUDFIT_RECOMMEND_REPORT_H_
#define CLOUDFIT_RECOMMEND_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "cloudfit/recommend.h"
#include "cloudfit/table.h"

namespace cloudfit {

nlohmann::json CandidateToJson(const Candidate& c, const std::string& currency);
nlohmann::json RecommendationToJson(const Workload& w, const RecommendOptions& o,
                                    const Recommendation& r, size_t top);
Table RecommendationTable(const Recommendation& r, const std::string& currency, size_t top);
// Every feasible candidate as a point (hours, cost), the Pareto front as a line, the first
// ranked candidate marked; log scales on both axes.
std::string ParetoSvg(const Recommendation& r, const std::string& currency);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_REPORT_H_
