// Documentation that is generated from the code it documents, checked here so it cannot go
// stale: the workload file format (docs/workload-format.md) from WorkloadFields(), the table the
// parser itself uses. CLOUDFIT_UPDATE_DOCS=1 rewrites the generated part (review the diff).
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "cloudfit/workload.h"
#include "test_support.h"

namespace cloudfit {
namespace {

constexpr const char* kBegin = "<!-- BEGIN GENERATED from WorkloadFields(): do not edit -->\n";
constexpr const char* kEnd = "<!-- END GENERATED -->\n";

std::string Cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// What the parser accepts for a field, in its own words: the error it gives for a value no
// field allows.
std::string Allowed(const std::string& field) {
  Workload w;
  Status s = SetWorkloadField(&w, field, "");
  if (s.ok()) s = SetWorkloadField(&w, field, "?");
  if (s.ok()) return "any text";
  size_t at = s.message().find("is not allowed; ");
  return at == std::string::npos ? s.message() : s.message().substr(at + 16);
}

std::string GeneratedTable() {
  std::string out = kBegin;
  out += "\n| field | flag | meaning | accepted values |\n|---|---|---|---|\n";
  for (const WorkloadField& f : WorkloadFields()) {
    std::string flag = "--" + f.name;
    for (char& c : flag) {
      if (c == '_') c = '-';
    }
    out += "| `" + f.name + "` | `" + flag + "` | " + Cell(f.help) + " | " + Cell(Allowed(f.name)) + " |\n";
  }
  return out + "\n" + kEnd;
}

TEST(DocsTest, WorkloadFormatListsEveryFieldAsTheParserDoes) {
  std::string path = testing::SourcePath("docs/workload-format.md");
  std::string doc = testing::ReadWholeFile(path);
  ASSERT_FALSE(doc.empty()) << path;
  size_t begin = doc.find(kBegin);
  size_t end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "no generated section in " << path;
  ASSERT_NE(end, std::string::npos);
  std::string expected = GeneratedTable();
  std::string actual = doc.substr(begin, end + std::string(kEnd).size() - begin);
  if (actual != expected && std::getenv("CLOUDFIT_UPDATE_DOCS") != nullptr) {
    doc.replace(begin, actual.size(), expected);
    std::ofstream(path) << doc;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(actual, expected) << path << " is stale: run CLOUDFIT_UPDATE_DOCS=1 "
                              << "build/tests/cloudfit_tests --gtest_filter='DocsTest.*'";
}

TEST(DocsTest, TheAcceptedValuesComeFromTheParser) {
  EXPECT_NE(Allowed("kind").find("lora"), std::string::npos);
  EXPECT_NE(Allowed("tokens").find("[1, 1e+16]"), std::string::npos) << Allowed("tokens");
  // model_config is a path or an inline JSON object, checked when set (issue 13): not any text.
  EXPECT_NE(Allowed("model_config").find("config.json"), std::string::npos)
      << Allowed("model_config");
}

}  // namespace
}  // namespace cloudfit
