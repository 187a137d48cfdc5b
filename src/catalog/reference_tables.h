// Reference tables that are not part of the catalog's core (recipes, loader rates, sessions,
// the cost data under costs/): read from the loaded catalog's files when it has them, else from
// the built-in data, so a catalog directory made before a table existed keeps working.
#ifndef CLOUDFIT_CATALOG_REFERENCE_TABLES_H_
#define CLOUDFIT_CATALOG_REFERENCE_TABLES_H_

#include <string>

#include "cloudfit/catalog.h"
#include "util/csv.h"

namespace cloudfit {

// Parses `name` (a path relative to the catalog root, e.g. "costs/egress.csv"). NotFound when
// neither the catalog nor the built-in data has it.
Status ReadReferenceTable(const Catalog& catalog, const std::string& name, CsvTable* out);

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_REFERENCE_TABLES_H_
