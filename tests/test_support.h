// Helpers shared by the tests: the fixture catalog, temporary directories, ../shared.
#ifndef CLOUDFIT_TESTS_TEST_SUPPORT_H_
#define CLOUDFIT_TESTS_TEST_SUPPORT_H_

#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit::testing {

std::string SourcePath(const std::string& relative);
// The fixture catalog under tests/fixtures/catalog, as files (to corrupt) or loaded.
CatalogFiles FixtureFiles();
Catalog FixtureCatalog();
// The built-in catalog, loaded once for the whole test binary.
const Catalog& BuiltInCatalog();
// ../shared beside the repository, or "" when it is absent (users run tests without it).
std::string SharedDir();

// A fresh directory removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Write(const std::string& relative, const std::string& contents) const;

 private:
  std::string path_;
};

}  // namespace cloudfit::testing

#endif  // CLOUDFIT_TESTS_TEST_SUPPORT_H_
