// The instance types of one or more providers, copied from a base catalog so that imports can
// change them, then written back as catalog files.
#ifndef CLOUDFIT_CATALOG_IMPORT_MERGE_H_
#define CLOUDFIT_CATALOG_IMPORT_MERGE_H_

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "cloudfit/catalog_import.h"

namespace cloudfit {

class WorkingCatalog {
 public:
  explicit WorkingCatalog(const Catalog& base) : base_(base) {}

  // The mutable instance type `name` (case-insensitively) of `provider`, or nullptr. Valid
  // until the next Add.
  InstanceType* Find(const std::string& provider, const std::string& name);
  // Finds a type by name in any provider.
  InstanceType* FindAnyProvider(const std::string& name);
  InstanceType* Add(InstanceType type);

  // The base files with every touched provider's instance file rewritten, each checked by the
  // loader against the base's GPUs, CPUs and currencies (the files left as they were loaded with
  // the base), as loading the whole set would check them.
  Status Finish(CatalogFiles* out) const;

 private:
  // One provider's types, and where each is by lower-case name (the first of a name): lookups
  // stay constant-time however many types an import adds.
  struct Types {
    std::vector<InstanceType> types;
    std::unordered_map<std::string, size_t> by_name;
  };
  Types& Provider(const std::string& provider);
  static InstanceType* Lookup(Types& types, const std::string& name);

  const Catalog& base_;
  std::map<std::string, Types> providers_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_CATALOG_IMPORT_MERGE_H_
