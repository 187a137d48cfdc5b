// Loaders for the smaller data files: Blender Open Data scores, NVENC stream rates and spot
// interruption profiles.
#include "catalog/loaders.h"
#include "util/strings.h"

namespace cloudfit {

Status ParseRenderScores(const CsvTable& table, const Catalog& catalog,
                         std::vector<RenderScore>* out) {
  Status s = table.RequireColumns({"gpu", "backend", "score", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    RenderScore score;
    std::string gpu = r.RequiredText("gpu");
    if (r.status().ok()) {
      Status found = catalog.FindAccelerator(gpu, &score.gpu);
      if (!found.ok()) r.Fail("gpu", found.message());
    }
    score.backend = r.RequiredText("backend");
    score.samples_per_minute = r.Number("score", 1e-3, 1e9);
    score.source = r.RequiredText("source");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(score));
  }
  return Status::OK();
}

Status ParseEncoderRates(const CsvTable& table, std::vector<EncoderRate>* out) {
  Status s = table.RequireColumns(
      {"architecture", "codec", "resolution", "fps", "streams_per_nvenc", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    EncoderRate rate;
    rate.architecture = r.RequiredText("architecture");
    rate.codec = ToLower(r.RequiredText("codec"));
    rate.resolution = ToLower(r.RequiredText("resolution"));
    rate.fps = r.Number("fps", 1, 1000);
    rate.streams_per_engine = static_cast<int>(r.Number("streams_per_nvenc", 0, 10000));
    rate.source = r.RequiredText("source");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(rate));
  }
  return Status::OK();
}

Status ParseSpotProfiles(const CsvTable& table, std::vector<SpotProfile>* out) {
  Status s = table.RequireColumns(
      {"provider", "interruption_rate_per_month", "restart_minutes", "notice_seconds", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    SpotProfile p;
    p.provider = r.RequiredText("provider");
    p.interruptions_per_month = r.OptionalNumber("interruption_rate_per_month", 0, 1);
    p.restart_minutes = r.OptionalNumber("restart_minutes", 0, 10000);
    p.notice_seconds = r.OptionalNumber("notice_seconds", 0, 100000);
    p.source = r.Text("source");
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(p));
  }
  return Status::OK();
}

}  // namespace cloudfit
