#include "test_support.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/file.h"

namespace cloudfit::testing {

namespace fs = std::filesystem;

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ShellQuote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

Workload BuiltWorkload(const std::vector<std::pair<std::string, std::string>>& fields) {
  Workload w;
  for (const auto& [k, v] : fields) EXPECT_TRUE(SetWorkloadField(&w, k, v).ok()) << k;
  Status s = FinalizeWorkload(BuiltInCatalog(), &w);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return w;
}

ProgramRun RunProgram(const std::string& program, const std::string& dir, const std::string& args) {
  std::string command = "cd " + ShellQuote(dir) + " && " + ShellQuote(program) + " " + args +
                        " </dev/null >out.txt 2>err.txt";
  int status = std::system(command.c_str());
  ProgramRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadWholeFile(dir + "/out.txt");
  r.err = ReadWholeFile(dir + "/err.txt");
  return r;
}

std::string SourcePath(const std::string& relative) {
  return std::string(CLOUDFIT_SOURCE_DIR) + "/" + relative;
}

CatalogFiles FixtureFiles() {
  CatalogFiles files;
  Status s = ReadCsvTree(SourcePath("tests/fixtures/catalog"), &files);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return files;
}

Catalog FixtureCatalog() {
  Catalog catalog;
  Status s = Catalog::FromFiles(FixtureFiles(), "fixture", &catalog);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return catalog;
}

const Catalog& BuiltInCatalog() {
  static const Catalog* catalog = [] {
    auto* c = new Catalog();
    Status s = Catalog::LoadBuiltIn(c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }();
  return *catalog;
}

std::string SharedDir() {
  fs::path shared = fs::path(CLOUDFIT_SOURCE_DIR).parent_path() / "shared";
  std::error_code ec;
  return fs::is_directory(shared / "catalogs", ec) ? shared.string() : "";
}

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "cloudfit-test-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string TempDir::Write(const std::string& relative, const std::string& contents) const {
  fs::path path = fs::path(path_) / relative;
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

}  // namespace cloudfit::testing
