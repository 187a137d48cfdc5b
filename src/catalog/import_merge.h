// The instance types of one or more providers, copied from a base catalog so that imports can
// change them, then written back as catalog files.
#ifndef CLOUDFIT_CATALOG_IMPORT_MERGE_H_
#define CLOUDFIT_CATALOG_IMPORT_MERGE_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog_import.h"

namespace cloudfit {

class WorkingCatalog {
 public:
  explicit WorkingCatalog(const Catalog& base) : base_(base) {}

  // The mutable instance type `name` of `provider`, or nullptr.
  InstanceType* Find(const std::string& provider, const std::string& name);
  // Finds a type by name in any provider.
  InstanceType* FindAnyProvider(const std::string& name);
  InstanceType* Add(InstanceType type);

  // The base files with every touched provider's instance file rewritten, checked by loading.
  Status Finish(CatalogFiles* out) const;

 private:
  std::vector<InstanceType>& Provider(const std::string& provider);

  const Catalog& base_;
  std::map<std::string, std::vector<InstanceType>> providers_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_IMPORT_MERGE_H_
