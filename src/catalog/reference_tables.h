// Reference tables that are not part of the catalog's core (recipes, loader rates, sessions,
// serving engines, the cost data under costs/): read from the loaded catalog's files when it has
// them, else from the built-in data, so a catalog directory made before a table existed keeps
// working. Stages check the rows they use when they use them.
#ifndef CLOUDFIT_CATALOG_REFERENCE_TABLES_H_
#define CLOUDFIT_CATALOG_REFERENCE_TABLES_H_

#include <memory>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "util/csv.h"

namespace cloudfit {

// The table `name` (a path relative to the catalog root, e.g. "costs/egress.csv"), parsed on
// the first call and kept with the catalog for every later one, from any thread; the built-in
// catalog's were split into fields at build time. NotFound when neither the catalog nor the
// built-in data has it; a file that does not parse gives its error on every call.
Status ReadReferenceTable(const Catalog& catalog, const std::string& name,
                          std::shared_ptr<const CsvTable>* out);

// The files read through ReadReferenceTable: the build splits the built-in ones into tables.
const std::vector<std::string>& ReferenceTableNames();

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_REFERENCE_TABLES_H_
