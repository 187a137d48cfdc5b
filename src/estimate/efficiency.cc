#include "cloudfit/efficiency.h"

#include <fmt/format.h>

#include "catalog/loaders.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

double EfficiencyTable::Lookup(std::string_view parameter, std::string_view stack,
                               std::string_view group, double fallback,
                               const EfficiencyFactor** found) const {
  const std::string_view stacks[] = {stack, "*"};
  const std::string_view groups[] = {group, "*"};
  // Stack before group: a stack's own "*" row says more about that software than another
  // stack's row for the same operator group.
  for (std::string_view st : stacks) {
    for (std::string_view gr : groups) {
      for (const EfficiencyFactor& row : rows_) {
        if (row.parameter == parameter && row.stack == st && row.group == gr) {
          if (found) *found = &row;
          return row.value;
        }
      }
    }
  }
  if (found) *found = nullptr;
  return fallback;
}

Status ParseEfficiency(const CsvTable& table, std::vector<EfficiencyFactor>* out) {
  Status s = table.RequireColumns({"parameter", "stack", "group", "value", "fitted_to", "source"});
  if (!s.ok()) return s;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    EfficiencyFactor f;
    f.parameter = r.RequiredText("parameter");
    f.stack = r.RequiredText("stack");
    f.group = r.RequiredText("group");
    f.value = r.Number("value", 1e-12, 1e12);
    f.fitted_to = r.RequiredText("fitted_to");
    f.source = r.RequiredText("source");
    if (!r.status().ok()) return r.status();
    for (const EfficiencyFactor& other : *out) {
      if (other.parameter == f.parameter && other.stack == f.stack && other.group == f.group) {
        return Status::Corruption(
            fmt::format("{}:{}: field 'parameter': '{}' for stack '{}' and "
                        "group '{}' is given twice",
                        table.path, row.line, Shown(f.parameter), Shown(f.stack), Shown(f.group)));
      }
    }
    out->push_back(std::move(f));
  }
  return Status::OK();
}

}  // namespace cloudfit
