// `cloudfit catalog refresh` end to end through the binary: saved Azure answers replayed with
// --from-dir into a new catalog directory, dated by the day they were fetched; a bad answer
// fails with exit status 2 and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using testing::ReadWholeFile;
using testing::TempDir;

constexpr const char* kFirstPage =
    "GET https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview&$filter="
    "serviceName%20eq%20%27Virtual%20Machines%27%20and%20armSkuName%20eq%20%27"
    "Standard_NC24ads_A100_v4%27";
constexpr const char* kNextPage = "https://prices.azure.com:443/api/retail/prices?$skip=100";

class CliRefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The fixture catalog plus one Azure type.
    fs::copy(testing::SourcePath("tests/fixtures/catalog"), fs::path(dir_.path()) / "catalog",
             fs::copy_options::recursive);
    dir_.Write("catalog/instances/azure.csv",
               "provider,instance_type,family,gpu_model,gpu_count,gpu_memory_gib,vcpus,memory_gib,"
               "cpu,arch,network_gbps,local_disk_gb,local_disk_type,region,ondemand,spot,"
               "reserved_1y,reserved_3y,currency,source,as_of,notes\n"
               "azure,Standard_NC24ads_A100_v4,NCads A100 v4,A100 80G,1,,24,220,,x86_64,20,0,,"
               "eastus,3.67,,,,USD,https://learn.microsoft.com/azure/virtual-machines/sizes/"
               "gpu-accelerated/nca100v4-series,,price date unknown: test\n");
  }

  void SaveAnswers(const std::string& first_page_body) {
    std::string page1 = first_page_body;
    if (size_t at = page1.find("NEXT_PAGE"); at != std::string::npos)
      page1.replace(at, 9, kNextPage);
    dir_.Write("answers/azure/00001.body", page1);
    dir_.Write("answers/azure/00002.body",
               ReadWholeFile(testing::SourcePath("tests/fixtures/refresh/azure/page2.json")));
    dir_.Write(
        "answers/manifest.json",
        std::string(R"({"schema": "cloudfit.refresh-responses/v1", "responses": [)") +
            R"({"key": ")" + kFirstPage +
            R"(", "url": "", "status": 200, "fetched": "2026-11-20", "file": "azure/00001.body"},)" +
            R"({"key": "GET )" + kNextPage +
            R"(", "url": "", "status": 200, "fetched": "2026-11-20", "file": "azure/00002.body"}]})");
  }

  testing::ProgramRun Refresh(const std::string& out) {
    return testing::RunCloudfit(dir_,
                                "--catalog catalog catalog refresh --provider azure "
                                "--from-dir answers --out " +
                                    out);
  }

  TempDir dir_;
};

TEST_F(CliRefreshTest, ReplayedAnswersBecomeADatedCatalog) {
  SaveAnswers(ReadWholeFile(testing::SourcePath("tests/fixtures/refresh/azure/page1.json")));
  testing::ProgramRun r = Refresh("refreshed");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("azure     refreshed"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("azure: 1 instance types"), std::string::npos) << "progress on stderr";
  std::string azure = ReadWholeFile(dir_.path() + "/refreshed/instances/azure.csv");
  EXPECT_NE(azure.find(",eastus,3.673,0.7346,"), std::string::npos) << azure;
  EXPECT_NE(azure.find(",2026-11-20,"), std::string::npos) << "dated by the fetch, not the replay";
  // The new directory is a catalog the other commands load.
  testing::ProgramRun info = testing::RunCloudfit(dir_, "--catalog refreshed catalog info");
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("2026-11-20"), std::string::npos) << info.out;
}

TEST_F(CliRefreshTest, ABadAnswerFailsWithTheUrlAndWritesNothing) {
  SaveAnswers("<html><body>Service Unavailable</body></html>");
  testing::ProgramRun r = Refresh("refreshed");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("azure: GET https://prices.azure.com/api/retail/prices"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("HTML"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/refreshed")) << "nothing written";
}

// --out is replaced whole, so a directory holding anything a catalog does not is refused, and
// before the fetching starts (a refresh takes minutes); --force replaces it.
TEST_F(CliRefreshTest, ADirectoryThatIsNotACatalogIsRefusedBeforeFetchingUnlessForced) {
  SaveAnswers(ReadWholeFile(testing::SourcePath("tests/fixtures/refresh/azure/page1.json")));
  dir_.Write("thesis/notes.txt", "months of work");
  testing::ProgramRun r = Refresh("thesis");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--out: thesis: not replaced: it holds 'notes.txt'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("azure: "), std::string::npos) << "refused before fetching: " << r.err;
  EXPECT_EQ(ReadWholeFile(dir_.path() + "/thesis/notes.txt"), "months of work");
  EXPECT_FALSE(fs::exists(dir_.path() + "/thesis/instances")) << "nothing written";

  testing::ProgramRun forced = testing::RunCloudfit(
      dir_,
      "--catalog catalog catalog refresh --provider azure --from-dir answers --force --out thesis");
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_FALSE(fs::exists(dir_.path() + "/thesis/notes.txt"));
  EXPECT_TRUE(fs::exists(dir_.path() + "/thesis/instances/azure.csv"));
}

// A catalog is refreshed in place: a directory cloudfit wrote, or one holding only catalog files
// (a copy without the marker file), is replaced without --force.
TEST_F(CliRefreshTest, ACatalogDirectoryIsRefreshedInPlace) {
  SaveAnswers(ReadWholeFile(testing::SourcePath("tests/fixtures/refresh/azure/page1.json")));
  testing::ProgramRun first = Refresh("refreshed");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  testing::ProgramRun again = Refresh("refreshed");
  EXPECT_EQ(again.exit_code, 0) << again.err;
  fs::remove(dir_.path() + "/refreshed/.cloudfit-catalog");
  testing::ProgramRun unmarked = Refresh("refreshed");
  EXPECT_EQ(unmarked.exit_code, 0) << unmarked.err;
  EXPECT_TRUE(fs::exists(dir_.path() + "/refreshed/instances/azure.csv"));
}

TEST_F(CliRefreshTest, UnknownProviderIsAnInputError) {
  testing::ProgramRun r = testing::RunCloudfit(dir_, "catalog refresh --provider oracle --out x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--provider: 'oracle' is not one of aws, azure, gcp, alibaba, tencent"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace cloudfit
