// Renderings of a recommendation: JSON (schema cloudfit.recommend/v2), a table of the top
// candidates, and an SVG of the time-versus-cost Pareto front.
#ifndef CLOUDFIT_RECOMMEND_REPORT_H_
#define CLOUDFIT_RECOMMEND_REPORT_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cloudfit/recommend.h"
#include "cloudfit/table.h"

namespace cloudfit {

nlohmann::json CandidateToJson(const Candidate& c, const std::string& currency);

struct RecommendationJsonOptions {
  size_t top = 0;       // candidates in `ranked` (0 = all); `pareto` always has the whole front
  int indent = -1;      // < 0: one line
  bool points = false;  // `points`: every feasible candidate's (hours, cost), for a plot
};
// Appends the recommendation's JSON text: what RecommendationToJson(...).dump(indent) gives,
// byte for byte, written straight from the candidates without building the document (an
// answer is 30-60 KB; building it cost more than the recommendation).
void AppendRecommendationJson(const Workload& w, const RecommendOptions& o, const Recommendation& r,
                              const RecommendationJsonOptions& how, std::string* text);
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
