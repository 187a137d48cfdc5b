// Helpers shared by the tests: the fixture catalog, temporary directories, ../shared.
#ifndef CLOUDFIT_TESTS_TEST_SUPPORT_H_
#define CLOUDFIT_TESTS_TEST_SUPPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/workload.h"

namespace cloudfit::testing {

std::string SourcePath(const std::string& relative);
// The fixture catalog under tests/fixtures/catalog, as files (to corrupt) or loaded.
CatalogFiles FixtureFiles();
Catalog FixtureCatalog();
// The built-in catalog, loaded once for the whole test binary.
const Catalog& BuiltInCatalog();
// ../shared beside the repository, or "" when it is absent (users run tests without it).
std::string SharedDir();

// The whole of a file, or "" when it cannot be read.
std::string ReadWholeFile(const std::string& path);

// One shell word: single-quoted, a quote inside written '\''.
std::string ShellQuote(const std::string& word);

// A workload from its fields, finalised against the built-in catalog; a field or a workload
// that is refused is a test failure.
Workload BuiltWorkload(const std::vector<std::pair<std::string, std::string>>& fields);

// The result of running a program through the shell.
struct ProgramRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs `program` with `args` (shell words, quoted by the caller) in directory `dir`, stdin
// from /dev/null, capturing stdout and stderr in files there.
ProgramRun RunProgram(const std::string& program, const std::string& dir, const std::string& args);

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

// The cloudfit binary, for test binaries built with CLOUDFIT_BINARY defined.
#ifdef CLOUDFIT_BINARY
inline ProgramRun RunCloudfit(const TempDir& dir, const std::string& args) {
  return RunProgram(CLOUDFIT_BINARY, dir.path(), args);
}
#endif

}  // namespace cloudfit::testing

#endif  // CLOUDFIT_TESTS_TEST_SUPPORT_H_
