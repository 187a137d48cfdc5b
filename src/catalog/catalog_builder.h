// Fills a Catalog, by either of its two roads: from files (parsed and checked: catalog.cc), or
// from the records the build compiled from data/ (copied: built_in_catalog.cc). Both end with the
// same tables and the same indexes.
#ifndef CLOUDFIT_CATALOG_CATALOG_BUILDER_H_
#define CLOUDFIT_CATALOG_CATALOG_BUILDER_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catalog/loaders.h"
#include "cloudfit/catalog.h"
#include "cloudfit/cost_tables.h"
#include "util/strings.h"

namespace cloudfit {

struct CatalogRecords;  // catalog_records.h

// What a catalog reads only when first asked for, once, from any thread.
struct Catalog::Lazy {
  std::once_flag costs_once;
  Status costs_status;
  std::shared_ptr<const CostTables> costs;
  // From the files, or for the built-in catalog from its compiled records.
  std::function<Status(const Catalog&, CostTables*)> read_costs = ReadCostTables;
};

class CatalogBuilder {
 public:
  static Status Build(CatalogFiles files, std::string origin, Catalog* out);
  static Status FromRecords(const CatalogRecords& records, Catalog* out);

 private:
  // Registers every name and alias of `rows` under its normalized form. Two rows claiming one
  // name is an error naming both, with `where(i)` ("file:line") for row i.
  template <typename Row, typename Where>
  static Status IndexNames(const std::vector<Row>& rows, const char* what, Where where,
                           std::map<std::string, const Row*>* index) {
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<std::string> names = rows[i].aliases;
      names.insert(names.begin(), rows[i].name);
      for (const std::string& name : names) {
        auto [it, inserted] = index->emplace(NormalizeName(name), &rows[i]);
        if (!inserted && it->second != &rows[i]) {
          return Status::Corruption(fmt::format("{}: field 'aliases': '{}' of {} '{}' already "
                                                "names '{}'",
                                                where(i), name, what, rows[i].name,
                                                it->second->name));
        }
      }
    }
    return Status::OK();
  }

  // A bare name that two providers share resolves to the first; "provider/name" is exact.
  static void IndexInstances(Catalog* c);
};

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_CATALOG_BUILDER_H_
