// Reads the cost reference tables under costs/ (egress, storage, licences, billing increments,
// spot interruption rates, stream bitrates) of a catalog, or of the built-in data where the
// catalog has none.
#include "cloudfit/cost_tables.h"

#include <fmt/format.h>

#include "catalog/loaders.h"
#include "catalog/reference_tables.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

// Reads one table; a table absent from both the catalog and the built-in data is empty.
template <typename Row, typename Parse>
Status LoadTable(const Catalog& catalog, const std::string& name,
                 const std::vector<std::string_view>& required, Parse parse,
                 std::vector<Row>* out) {
  std::shared_ptr<const CsvTable> file;
  Status s = ReadReferenceTable(catalog, name, &file);
  if (s.code() == Status::Code::kNotFound) return Status::OK();
  if (s.ok()) s = file->RequireColumns(required);
  if (!s.ok()) return s;
  const CsvTable& table = *file;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    Row parsed;
    parse(r, &parsed);
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(parsed));
  }
  return Status::OK();
}

bool Assumed(std::string_view notes) {
  return ToLower(std::string(notes)).find("assumption") != std::string::npos;
}

}  // namespace

Status ReadCostTables(const Catalog& catalog, CostTables* out) {
  CostTables d;
  Status s = LoadTable<EgressPrice>(
      catalog, "costs/egress.csv", {"provider", "destination", "usd_per_gb", "source"},
      [](CsvRowReader& r, EgressPrice* p) {
        p->provider = r.RequiredText("provider");
        p->destination = r.RequiredText("destination");
        if (p->destination != "internet" && p->destination != "region") {
          r.Fail("destination",
                 fmt::format("'{}' is not internet or region", Shown(p->destination)));
        }
        p->usd_per_gb = r.OptionalNumber("usd_per_gb", 0, 100);
        p->free_gb_per_month = r.OptionalNumber("free_gb_per_month", 0, 1e9).value_or(0);
        p->source = r.RequiredText("source");
        p->as_of = r.Text("as_of");
      },
      &d.egress);
  if (s.ok()) {
    s = LoadTable<StoragePrice>(
        catalog, "costs/storage.csv", {"provider", "usd_per_gb_month", "source"},
        [](CsvRowReader& r, StoragePrice* p) {
          p->provider = r.RequiredText("provider");
          p->storage_class = r.Text("class");
          p->usd_per_gb_month = r.OptionalNumber("usd_per_gb_month", 0, 100);
          p->source = r.RequiredText("source");
          p->as_of = r.Text("as_of");
        },
        &d.storage);
  }
  if (s.ok()) {
    s = LoadTable<LicencePrice>(
        catalog, "costs/licences.csv", {"licence", "provider", "unit", "usd", "source"},
        [](CsvRowReader& r, LicencePrice* p) {
          p->licence = r.RequiredText("licence");
          p->provider = r.RequiredText("provider");
          p->unit = r.RequiredText("unit");
          if (p->unit != "vcpu-hour" && p->unit != "session-hour") {
            r.Fail("unit", fmt::format("'{}' is not vcpu-hour or session-hour", Shown(p->unit)));
          }
          p->usd = r.OptionalNumber("usd", 0, 1000);
          p->source = r.RequiredText("source");
          p->notes = r.Text("notes");
        },
        &d.licences);
  }
  if (s.ok()) {
    s = LoadTable<BillingRule>(
        catalog, "costs/billing.csv", {"provider", "increment_s", "minimum_s", "source"},
        [](CsvRowReader& r, BillingRule* p) {
          p->provider = r.RequiredText("provider");
          p->increment_s = r.Number("increment_s", 1, 86400);
          p->minimum_s = r.Number("minimum_s", 0, 86400);
          p->source = r.RequiredText("source");
        },
        &d.billing);
  }
  if (s.ok()) {
    s = LoadTable<SpotRate>(
        catalog, "costs/spot_rates.csv", {"provider", "gpu", "interruptions_per_month", "source"},
        [&catalog](CsvRowReader& r, SpotRate* p) {
          p->provider = r.RequiredText("provider");
          p->gpu = r.RequiredText("gpu");
          if (r.status().ok() && p->gpu != "*gpu" && p->gpu != "*cpu") {
            // A catalog's own table must name its GPUs; the built-in table read beside a
            // smaller catalog keeps rows for GPUs that catalog lacks (they match nothing).
            const Accelerator* a = nullptr;
            Status found = catalog.FindAccelerator(p->gpu, &a);
            if (found.ok())
              p->gpu = a->name;
            else if (catalog.FindFile("costs/spot_rates.csv"))
              r.Fail("gpu", found.message());
          }
          p->band = r.Text("frequency_band");
          p->interruptions_per_month = r.Number("interruptions_per_month", 0, 1);
          p->source = r.RequiredText("source");
          p->as_of = r.Text("as_of");
          p->assumed = Assumed(r.Text("notes"));
        },
        &d.spot_rates);
  }
  if (s.ok()) {
    s = LoadTable<StreamBitrate>(
        catalog, "costs/streaming.csv", {"codec", "mbps_1080p60", "source"},
        [](CsvRowReader& r, StreamBitrate* p) {
          p->codec = ToLower(r.RequiredText("codec"));
          p->mbps_1080p60 = r.Number("mbps_1080p60", 0.01, 10000);
          p->source = r.RequiredText("source");
        },
        &d.bitrates);
  }
  if (!s.ok()) return s;
  *out = std::move(d);
  return Status::OK();
}

}  // namespace cloudfit
