// Loads the cost reference tables under costs/ (egress, storage, licences, billing increments,
// spot interruption rates, stream bitrates) and looks rows up by provider.
#include <fmt/format.h>

#include "catalog/reference_tables.h"
#include "cloudfit/cost.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// Reads one table; a table absent from both the catalog and the built-in data is empty.
template <typename Row, typename Parse>
Status LoadTable(const Catalog& catalog, const std::string& name,
                 const std::vector<std::string_view>& required, Parse parse, std::vector<Row>* out) {
  CsvTable table;
  Status s = ReadReferenceTable(catalog, name, &table);
  if (s.code() == Status::Code::kNotFound) return Status::OK();
  if (s.ok()) s = table.RequireColumns(required);
  if (!s.ok()) return s;
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

const std::vector<std::string>& OptionalCostLines() {
  static const std::vector<std::string> names = {"egress", "storage", "startup", "billing",
                                                 "licences"};
  return names;
}

Status CostData::Load(const Catalog& catalog, CostData* out) {
  CostData d;
  Status s = LoadTable<EgressPrice>(
      catalog, "costs/egress.csv", {"provider", "destination", "usd_per_gb", "source"},
      [](CsvRowReader& r, EgressPrice* p) {
        p->provider = r.RequiredText("provider");
        p->destination = r.RequiredText("destination");
        if (p->destination != "internet" && p->destination != "region") {
          r.Fail("destination", "'" + p->destination + "' is not internet or region");
        }
        p->usd_per_gb = r.OptionalNumber("usd_per_gb", 0, 100);
        p->free_gb_per_month = r.OptionalNumber("free_gb_per_month", 0, 1e9).value_or(0);
        p->source = r.RequiredText("source");
        p->as_of = r.Text("as_of");
      },
      &d.egress_);
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
        &d.storage_);
  }
  if (s.ok()) {
    s = LoadTable<LicencePrice>(
        catalog, "costs/licences.csv", {"licence", "provider", "unit", "usd", "source"},
        [](CsvRowReader& r, LicencePrice* p) {
          p->licence = r.RequiredText("licence");
          p->provider = r.RequiredText("provider");
          p->unit = r.RequiredText("unit");
          if (p->unit != "vcpu-hour" && p->unit != "session-hour") {
            r.Fail("unit", "'" + p->unit + "' is not vcpu-hour or session-hour");
          }
          p->usd = r.OptionalNumber("usd", 0, 1000);
          p->source = r.RequiredText("source");
          p->notes = r.Text("notes");
        },
        &d.licences_);
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
        &d.billing_);
  }
  if (s.ok()) {
    s = LoadTable<SpotRate>(
        catalog, "costs/spot_rates.csv",
        {"provider", "gpu", "interruptions_per_month", "source"},
        [&catalog](CsvRowReader& r, SpotRate* p) {
          p->provider = r.RequiredText("provider");
          p->gpu = r.RequiredText("gpu");
          if (r.status().ok() && p->gpu != "*gpu" && p->gpu != "*cpu") {
            // A catalog's own table must name its GPUs; the built-in table read beside a
            // smaller catalog keeps rows for GPUs that catalog lacks (they match nothing).
            const Accelerator* a = nullptr;
            Status found = catalog.FindAccelerator(p->gpu, &a);
            if (found.ok()) p->gpu = a->name;
            else if (catalog.files().count("costs/spot_rates.csv")) r.Fail("gpu", found.message());
          }
          p->band = r.Text("frequency_band");
          p->interruptions_per_month = r.Number("interruptions_per_month", 0, 1);
          p->source = r.RequiredText("source");
          p->as_of = r.Text("as_of");
          p->assumed = Assumed(r.Text("notes"));
        },
        &d.spot_rates_);
  }
  if (s.ok()) {
    s = LoadTable<StreamBitrate>(
        catalog, "costs/streaming.csv", {"codec", "mbps_1080p60", "source"},
        [](CsvRowReader& r, StreamBitrate* p) {
          p->codec = ToLower(r.RequiredText("codec"));
          p->mbps_1080p60 = r.Number("mbps_1080p60", 0.01, 10000);
          p->source = r.RequiredText("source");
        },
        &d.bitrates_);
  }
  if (!s.ok()) return s;
  *out = std::move(d);
  return Status::OK();
}

const EgressPrice* CostData::FindEgress(const std::string& provider,
                                        const std::string& destination) const {
  for (const EgressPrice& p : egress_) {
    if (p.provider == provider && p.destination == destination) return &p;
  }
  return nullptr;
}

const StoragePrice* CostData::FindStorage(const std::string& provider) const {
  for (const StoragePrice& p : storage_) {
    if (p.provider == provider) return &p;
  }
  return nullptr;
}

const EgressPrice* CostData::HighestEgress(const std::string& destination) const {
  const EgressPrice* best = nullptr;
  for (const EgressPrice& p : egress_) {
    if (p.destination != destination || !p.usd_per_gb) continue;
    if (best == nullptr || *p.usd_per_gb > *best->usd_per_gb) best = &p;
  }
  return best;
}

const StoragePrice* CostData::HighestStorage() const {
  const StoragePrice* best = nullptr;
  for (const StoragePrice& p : storage_) {
    if (!p.usd_per_gb_month || p.storage_class != "object") continue;
    if (best == nullptr || *p.usd_per_gb_month > *best->usd_per_gb_month) best = &p;
  }
  return best;
}

const LicencePrice* CostData::FindLicence(const std::string& licence,
                                          const std::string& provider) const {
  const LicencePrice* fallback = nullptr;
  for (const LicencePrice& p : licences_) {
    if (p.licence != licence) continue;
    if (p.provider == provider) return &p;
    if (p.provider == "*") fallback = &p;
  }
  return fallback;
}

const BillingRule* CostData::FindBilling(const std::string& provider) const {
  for (const BillingRule& p : billing_) {
    if (p.provider == provider) return &p;
  }
  return nullptr;
}

const SpotRate* CostData::FindSpotRate(const std::string& provider,
                                       const InstanceType& instance) const {
  const SpotRate* fallback = nullptr;
  std::string wildcard = instance.has_gpu() ? "*gpu" : "*cpu";
  for (const SpotRate& p : spot_rates_) {
    if (p.provider != provider) continue;
    if (instance.gpu != nullptr && p.gpu == instance.gpu->name) return &p;
    if (p.gpu == wildcard) fallback = &p;
  }
  return fallback;
}

const StreamBitrate* CostData::FindBitrate(const std::string& codec) const {
  for (const StreamBitrate& p : bitrates_) {
    if (p.codec == codec) return &p;
  }
  return nullptr;
}

}  // namespace cloudfit
