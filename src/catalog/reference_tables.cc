#include "catalog/reference_tables.h"

#include "catalog/catalog_builder.h"
#include "catalog/embedded_data.h"

namespace cloudfit {

const std::vector<std::string>& ReferenceTableNames() {
  static const std::vector<std::string> names = {
      "recipes.csv",       "loader_rates.csv",   "sessions.csv",       "serving_engines.csv",
      "costs/billing.csv", "costs/egress.csv",   "costs/licences.csv", "costs/spot_rates.csv",
      "costs/storage.csv", "costs/streaming.csv"};
  return names;
}

Status ReadReferenceTable(const Catalog& catalog, const std::string& name,
                          std::shared_ptr<const CsvTable>* out) {
  return CatalogBuilder::ReferenceTable(catalog, name, out);
}

Status CatalogBuilder::ReferenceTable(const Catalog& catalog, const std::string& name,
                                      std::shared_ptr<const CsvTable>* out) {
  if (!catalog.lazy_) return Status::Corruption("the catalog was moved away");
  Catalog::Lazy& lazy = *catalog.lazy_;
  std::lock_guard<std::mutex> lock(lazy.tables_mutex);
  auto [it, inserted] = lazy.tables.try_emplace(name);
  Catalog::Lazy::Table& table = it->second;
  if (inserted) {
    auto parsed = std::make_shared<CsvTable>();
    CsvOptions options;
    options.borrow_text = true;  // the catalog's files and the embedded data outlive it
    if (lazy.compiled_table && lazy.compiled_table(name, parsed.get())) {
      table.status = Status::OK();
    } else if (std::optional<std::string_view> text = catalog.FindFile(name)) {
      std::string path =
          catalog.origin() == "built-in" ? "data/" + name : catalog.origin() + "/" + name;
      table.status = ParseCsv(*text, path, options, parsed.get());
    } else {
      table.status = Status::NotFound("no " + name + " in the catalog or the built-in data");
      for (const EmbeddedFile& f : EmbeddedDataFiles()) {
        if (name == f.path) {
          table.status =
              ParseCsv(std::string_view(f.data, f.size), "data/" + name, options, parsed.get());
        }
      }
    }
    if (table.status.ok()) table.table = std::move(parsed);
  }
  if (!table.status.ok()) return table.status;
  *out = table.table;
  return Status::OK();
}

}  // namespace cloudfit
