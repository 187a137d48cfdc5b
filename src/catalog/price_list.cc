// A user's own prices (negotiated discounts, regional list prices) laid over the catalog.
#include <fmt/format.h>

#include "catalog/import_merge.h"
#include "cloudfit/catalog_import.h"
#include "util/csv.h"
#include "util/date.h"
#include "util/file.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

constexpr double kMaxPricePerHour = 100000;

// Applies one row; errors name file:line and the field.
Status ApplyRow(const Catalog& base, const CsvTable& table, const CsvRow& row,
                WorkingCatalog* working, ImportReport* report) {
  CsvRowReader r(table, row);
  std::string type_name = r.RequiredText("instance_type");
  std::string region = r.RequiredText("region");
  std::string mode_text = r.RequiredText("pricing_mode");
  double price = r.Number("price", 0, kMaxPricePerHour);
  std::string currency = r.RequiredText("currency");
  std::string as_of = r.RequiredText("as_of");
  if (!r.status().ok()) return r.status();
  PricingMode mode;
  if (!ParsePricingMode(mode_text, &mode)) {
    r.Fail("pricing_mode",
           fmt::format("'{}' is not one of ondemand, spot, reserved_1y, reserved_3y",
                       Shown(mode_text)));
  }
  if (price <= 0) r.Fail("price", "a price must be above 0");
  const CurrencyRate* rate = base.FindCurrency(currency);
  if (rate == nullptr) {
    r.Fail("currency", fmt::format("'{}' has no rate in currency.csv", Shown(currency)));
  } else if (price > 0) {
    Status plausible = CheckPricePerHour("", price, rate->currency, rate->usd_per_unit);
    if (!plausible.ok()) r.Fail("price", plausible.message());
  }
  int as_of_days = 0;
  if (!ParseIsoDate(as_of, &as_of_days)) {
    r.Fail("as_of", fmt::format("'{}' is not a YYYY-MM-DD date", Shown(as_of)));
  }
  InstanceType* type = r.status().ok() ? working->FindAnyProvider(type_name) : nullptr;
  if (r.status().ok() && type == nullptr) {
    const InstanceType* unused = nullptr;
    r.Fail("instance_type", base.FindInstance(type_name, &unused).message());
  }
  if (!r.status().ok()) return r.status();

  RegionPrice* target = nullptr;
  for (RegionPrice& p : type->regions) {
    if (p.region == region) target = &p;
  }
  if (target == nullptr) {
    type->regions.push_back(RegionPrice{});
    target = &type->regions.back();
    target->region = region;
    target->currency = rate->currency;
    ++report->offers_added;
  } else {
    ++report->offers_updated;
  }
  // A row keeps one currency: the other modes' prices are converted to the new one.
  if (target->currency != rate->currency) {
    for (auto& p : target->per_hour) {
      if (!p || target->currency.empty()) continue;
      double converted = 0;
      Status s = base.Convert(*p, target->currency, rate->currency, &converted);
      if (!s.ok()) return s;
      p = converted;
    }
    target->currency = rate->currency;
  }
  target->per_hour[static_cast<int>(mode)] = price;
  target->MarkRegional(mode);  // the user's price is for this region
  target->as_of_days = as_of_days;
  target->source = fmt::format("price list {}:{}", table.path, row.line);
  target->notes = "user price list";
  return Status::OK();
}

}  // namespace

Status ImportPriceList(const Catalog& base, const std::vector<std::string>& paths,
                       CatalogFiles* out, ImportReport* report) {
  if (paths.empty()) return Status::InvalidArgument("FILE: give at least one price list file");
  WorkingCatalog working(base);
  for (const std::string& path : paths) {
    std::string text;
    Status s = ReadFile(path, &text);
    if (!s.ok()) return s;
    CsvTable table;
    s = ParseCsv(text, path, CsvOptions(), &table);
    if (!s.ok()) return s;
    s = table.RequireColumns(
        {"instance_type", "region", "pricing_mode", "price", "currency", "as_of"});
    if (!s.ok()) return s;
    FileImportReport file_report;
    file_report.path = path;
    file_report.provider = "prices";
    for (const CsvRow& row : table.rows) {
      ++file_report.rows_read;
      s = ApplyRow(base, table, row, &working, report);
      if (!s.ok()) return s;
      ++file_report.rows_used;
    }
    report->files.push_back(std::move(file_report));
  }
  return working.Finish(out);
}

}  // namespace cloudfit
