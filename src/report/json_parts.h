// The parts of the JSON answers that more than one answer writes (an estimate inside a
// recommendation, a candidate inside a comparison), written with JsonWriter. Each writes one
// value at the writer's position; the public *ToJson and *JsonText functions wrap them.
#ifndef CLOUDFIT_REPORT_JSON_PARTS_H_
#define CLOUDFIT_REPORT_JSON_PARTS_H_

#include <string>

#include "cloudfit/estimate.h"
#include "cloudfit/recommend.h"
#include "util/json_writer.h"

namespace cloudfit {

// The workload's assumptions (defaults it did not give) as [{field, value, why}].
void WriteAssumptions(const Workload& w, JsonWriter* out);
// Each breakdown in GiB per device.
void WriteMemory(const MemoryBreakdown& m, JsonWriter* out);
void WriteTime(const TimeBreakdown& t, JsonWriter* out);
// Schema cloudfit.estimate/v1.
void WriteEstimate(const Workload& w, const Estimate& e, JsonWriter* out);
// One candidate of schema cloudfit.recommend/v2.
void WriteCandidate(const Candidate& c, const std::string& currency, JsonWriter* out);

// The text parsed back into a document, for callers that change or read it.
nlohmann::json ParseWritten(const std::string& text);

}  // namespace cloudfit

#endif  // CLOUDFIT_REPORT_JSON_PARTS_H_
