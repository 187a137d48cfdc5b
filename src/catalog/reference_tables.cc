#include "catalog/reference_tables.h"

#include "catalog/embedded_data.h"

namespace cloudfit {

Status ReadReferenceTable(const Catalog& catalog, const std::string& name, CsvTable* out) {
  if (std::optional<std::string_view> text = catalog.FindFile(name)) {
    std::string path = catalog.origin() == "built-in" ? "data/" + name : catalog.origin() + "/" + name;
    return ParseCsv(*text, path, CsvOptions(), out);
  }
  for (const EmbeddedFile& f : EmbeddedDataFiles()) {
    if (name == f.path) {
      return ParseCsv(std::string_view(f.data, f.size), "data/" + name, CsvOptions(), out);
    }
  }
  return Status::NotFound("no " + name + " in the catalog or the built-in data");
}

}  // namespace cloudfit
