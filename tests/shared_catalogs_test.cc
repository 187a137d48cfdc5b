// Imports every public SkyPilot catalog file in ../shared/catalogs. Skips when ../shared is
// absent: users run the test suite without it.
#include <filesystem>

#include <gtest/gtest.h>

#include "cloudfit/catalog_import.h"
#include "util/csv.h"
#include "util/file.h"
#include "util/strings.h"
#include "test_support.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SkyPilotFiles(const std::string& shared) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(shared + "/catalogs/skypilot")) {
    std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.rfind("vms", 0) == 0 && entry.path().extension() == ".csv") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(SharedCatalogsTest, ImportsEverySkyPilotFileAndAccountsForEveryRow) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog base;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&base).ok());
  std::vector<std::string> files = SkyPilotFiles(shared);
  ASSERT_GE(files.size(), 8u);
  for (const std::string& path : files) {
    CatalogFiles out;
    ImportReport report;
    SkyPilotImportOptions options;
    options.as_of = "2026-07-22";
    Status s = ImportSkyPilot(base, {path}, options, &out, &report);
    ASSERT_TRUE(s.ok()) << path << ": " << s.ToString();
    const FileImportReport& f = report.files.at(0);
    int skipped = 0;
    for (const auto& [reason, count] : f.skipped) {
      skipped += count;
      EXPECT_EQ(reason.find("unknown GPU"), std::string::npos)
          << path << ": " << count << " rows: " << reason;
    }
    EXPECT_EQ(f.rows_used + skipped, f.rows_read) << path;
    EXPECT_GT(f.rows_used, 0) << path;
    Catalog merged;
    ASSERT_TRUE(Catalog::FromFiles(out, "merged", &merged).ok());
  }
}

TEST(SharedCatalogsTest, ImportsAllFilesTogetherIntoOneCatalog) {
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog base;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&base).ok());
  CatalogFiles out;
  ImportReport report;
  SkyPilotImportOptions options;
  options.as_of = "2026-07-22";
  ASSERT_TRUE(ImportSkyPilot(base, SkyPilotFiles(shared), options, &out, &report).ok());
  Catalog merged;
  ASSERT_TRUE(Catalog::FromFiles(out, "merged", &merged).ok());
  EXPECT_GT(merged.instances().size(), base.instances().size());
  for (const char* provider : {"lambda", "nebius", "vast", "seeweb", "ibm", "fluidstack"}) {
    bool found = false;
    for (const std::string& p : merged.Providers()) found |= p == provider;
    EXPECT_TRUE(found) << provider;
  }
  // The sample's p4d.24xlarge rows update the built-in type in place, not a second copy.
  const InstanceType* p4d = nullptr;
  ASSERT_TRUE(merged.FindInstance("aws/p4d.24xlarge", &p4d).ok());
  EXPECT_EQ(p4d->gpu->name, "A100-SXM4-40GB");
}

TEST(SharedCatalogsTest, SparecoresAlibabaGpuFamiliesMatchTheBuiltInCatalog) {
  // Spare Cores lists every Alibaba ECS type with its GPU; the built-in shapes must agree.
  std::string shared = testing::SharedDir();
  if (shared.empty()) GTEST_SKIP() << "../shared is absent";
  Catalog catalog;
  ASSERT_TRUE(Catalog::LoadBuiltIn(&catalog).ok());
  std::string text;
  ASSERT_TRUE(ReadFile(shared + "/catalogs/sparecores/alicloud_servers.csv", &text).ok());
  CsvTable table;
  ASSERT_TRUE(ParseCsv(text, "alicloud_servers.csv", CsvOptions(), &table).ok());
  int compared = 0;
  for (const CsvRow& row : table.rows) {
    CsvRowReader r(table, row);
    const InstanceType* t = nullptr;
    if (!catalog.FindInstance(r.Text("instance_type"), &t).ok()) continue;
    ++compared;
    EXPECT_EQ(std::to_string(t->vcpus), std::string(r.Text("vcpus"))) << t->name;
    double gpus = 0;
    ParseDouble(r.Text("gpu_count"), &gpus);
    EXPECT_EQ(t->has_gpu() || t->gpu_count > 0, gpus > 0) << t->name;
  }
  EXPECT_GE(compared, 100);
}

}  // namespace
}  // namespace cloudfit
