#include <fmt/format.h>

#include "catalog/loaders.h"
#include "util/date.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

Status ParseCurrencies(const CsvTable& table, std::vector<CurrencyRate>* out) {
  Status s = table.RequireColumns({"currency", "usd_per_unit", "source", "as_of"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    CurrencyRate c;
    c.currency = r.RequiredText("currency");
    if (r.status().ok() && (c.currency.size() != 3 || ToLower(c.currency) == c.currency)) {
      r.Fail("currency",
             fmt::format("'{}' is not an upper-case ISO 4217 code like USD", Shown(c.currency)));
    }
    c.usd_per_unit = r.Number("usd_per_unit", 1e-6, 1e6);
    c.source = r.RequiredText("source");
    c.as_of = r.RequiredText("as_of");
    int days = 0;
    if (r.status().ok() && !ParseIsoDate(c.as_of, &days)) {
      r.Fail("as_of", fmt::format("'{}' is not a YYYY-MM-DD date", Shown(c.as_of)));
    }
    if (!r.status().ok()) return r.status();
    out->push_back(std::move(c));
  }
  return Status::OK();
}

}  // namespace cloudfit
