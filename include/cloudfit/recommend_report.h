// Renderings of a recommendation: JSON (schema cloudfit.recommend/v2), a table of the top
// candidates, and an SVG of the time-versus-cost Pareto front.
#ifndef CLOUDFIT_RECOMMEND_REPORT_H_
#define CLOUDFIT_RECOMMEND_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cloudfit/recommend.h"
#include "cloudfit/table.h"

namespace cloudfit {

nlohmann::json CandidateToJson(const Candidate& c, const std::string& currency);
nlohmann::json RecommendationToJson(const Workload& w, const RecommendOptions& o,
                                    const Recommendation& r, size_t top);
// The first `top` candidates (0 = all). People's columns combine figures ("8x A100",
// "13.2/24.0"); machines' columns split them, without units (units in the CSV header, prices as
// price_<currency>_per_hour). With `table_warnings`, warnings that every row shown carries are
// taken out of the rows and returned there, to be said once above the table.
Table RecommendationTable(const Recommendation& r, const std::string& currency, size_t top,
                          std::vector<std::string>* table_warnings = nullptr);
// Every feasible candidate as a point (hours, cost), the Pareto front as a line, the first
// ranked candidate marked; log scales on both axes.
std::string ParetoSvg(const Recommendation& r, const std::string& currency);

}  // namespace cloudfit

#endif  // CLOUDFIT_RECOMMEND_REPORT_H_
