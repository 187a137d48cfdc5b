// Saving answers with --save-responses and replaying them with --from-dir, and reading
// credentials from where each provider's CLI keeps them.
#include <filesystem>

#include <gtest/gtest.h>

#include "refresh/credentials.h"
#include "refresh/refresh.h"
#include "refresh/saved_responses.h"
#include "refresh_test_support.h"
#include "test_support.h"
#include "util/date.h"

namespace cloudfit {
namespace {

namespace fs = std::filesystem;
using testing::AllCredentials;
using testing::ScriptedHttpClient;
using testing::TempDir;
using testing::TestEnvironment;

std::string AllFilesUnder(const std::string& dir) {
  std::string all;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) all += testing::ReadWholeFile(entry.path().string());
  }
  return all;
}

TEST(RefreshReplayTest, SavedAnswersReplayToTheSameCatalogWithoutKeysOrNetwork) {
  Catalog base;
  ASSERT_TRUE(Catalog::FromFiles(testing::RefreshCatalogFiles(), "fixture", &base).ok());
  TempDir dir;
  std::string saved = dir.path() + "/responses";
  ScriptedHttpClient live;
  testing::AddStandardAnswers(&live);
  live.fetched_days = 20780;  // fetched 2026-11-23
  refresh::RecordingHttpClient recorder(&live, saved);
  refresh::RefreshEnvironment recording = TestEnvironment(&recorder, AllCredentials());
  recording.on_provider = [&](const std::string& p) { recorder.set_provider(p); };
  RefreshOptions options;
  CatalogFiles fetched;
  RefreshReport fetched_report;
  ASSERT_TRUE(refresh::RefreshWith(base, options, recording, &fetched, &fetched_report).ok());
  EXPECT_FALSE(fetched_report.any_failed());

  // No secret reaches the saved directory.
  std::string everything = AllFilesUnder(saved);
  for (const auto& [name, value] : AllCredentials()) {
    if (name.find("SECRET") != std::string::npos || name.find("KEY") != std::string::npos) {
      EXPECT_EQ(everything.find(value), std::string::npos) << name;
    }
  }
  EXPECT_EQ(everything.find("Signature="), std::string::npos);

  // Replay on another day, with no credentials at all and a different clock.
  std::unique_ptr<refresh::ReplayHttpClient> replay;
  ASSERT_TRUE(refresh::ReplayHttpClient::Open(saved, &replay).ok());
  refresh::RefreshEnvironment replaying = TestEnvironment(replay.get(), {});
  replaying.replaying = true;
  replaying.now_seconds = [] { return std::int64_t{1800000000}; };
  CatalogFiles replayed;
  RefreshReport replayed_report;
  Status s = refresh::RefreshWith(base, options, replaying, &replayed, &replayed_report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (const auto& p : replayed_report.providers) {
    EXPECT_EQ(p.outcome, ProviderRefreshReport::Outcome::kRefreshed) << p.provider << p.message;
  }
  EXPECT_EQ(replayed, fetched) << "the same catalog, dated by the day the answers were fetched";
  EXPECT_NE(replayed.at("instances/azure.csv").find("2026-11-23"), std::string::npos);
}

TEST(RefreshReplayTest, AnAnswerMissingFromTheSavedDirectoryIsNamed) {
  TempDir dir;
  dir.Write("r/manifest.json", R"({"schema": "cloudfit.refresh-responses/v1", "responses": []})");
  std::unique_ptr<refresh::ReplayHttpClient> replay;
  ASSERT_TRUE(refresh::ReplayHttpClient::Open(dir.path() + "/r", &replay).ok());
  refresh::HttpRequest request;
  request.url = "https://prices.azure.com/api/retail/prices";
  refresh::HttpResponse response;
  Status s = replay->Send(request, &response);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
  EXPECT_NE(s.message().find("no saved response for GET https://prices.azure.com"),
            std::string::npos);
}

TEST(RefreshReplayTest, ABrokenManifestIsRefused) {
  TempDir dir;
  std::unique_ptr<refresh::ReplayHttpClient> replay;
  EXPECT_EQ(refresh::ReplayHttpClient::Open(dir.path(), &replay).code(), Status::Code::kIOError);
  dir.Write("manifest.json", R"({"schema": "cloudfit.refresh-responses/v1", "responses": [
      {"key": "GET x", "status": 200, "file": "../../etc/passwd", "fetched": "2026-11-01"}]})");
  Status s = refresh::ReplayHttpClient::Open(dir.path(), &replay);
  EXPECT_NE(s.message().find("leaves the directory"), std::string::npos) << s.message();
  dir.Write("manifest.json", "[1, 2");
  EXPECT_EQ(refresh::ReplayHttpClient::Open(dir.path(), &replay).code(),
            Status::Code::kCorruption);
}

class CredentialsTest : public ::testing::Test {
 protected:
  refresh::CredentialSources Sources(std::map<std::string, std::string> env) {
    refresh::CredentialSources s;
    s.home = home_.path();
    s.getenv = [env](const std::string& name) -> std::optional<std::string> {
      auto it = env.find(name);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
    return s;
  }
  TempDir home_;
};

TEST_F(CredentialsTest, AwsEnvironmentFirstThenTheSharedFileProfile) {
  home_.Write(".aws/credentials",
              "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = s1\n\n"
              "[work]\naws_access_key_id=AKIAWORK\naws_secret_access_key=s2\n"
              "aws_session_token = t2\n");
  refresh::AwsCredentials c;
  std::string where;
  ASSERT_TRUE(refresh::FindAwsCredentials(Sources({}), &c, &where).ok());
  EXPECT_EQ(c.access_key_id, "AKIADEFAULT");
  ASSERT_TRUE(refresh::FindAwsCredentials(Sources({{"AWS_PROFILE", "work"}}), &c, &where).ok());
  EXPECT_EQ(c.access_key_id, "AKIAWORK");
  EXPECT_EQ(c.session_token, "t2");
  EXPECT_NE(where.find("[work]"), std::string::npos);
  ASSERT_TRUE(refresh::FindAwsCredentials(
                  Sources({{"AWS_ACCESS_KEY_ID", "AKIAENV"}, {"AWS_SECRET_ACCESS_KEY", "s3"}}), &c,
                  &where)
                  .ok());
  EXPECT_EQ(c.access_key_id, "AKIAENV");
  EXPECT_EQ(where.find("s3"), std::string::npos) << "where never shows the secret";
  EXPECT_EQ(refresh::FindAwsCredentials(Sources({{"AWS_PROFILE", "none"}}), &c, &where).code(),
            Status::Code::kNotFound);
}

TEST_F(CredentialsTest, AlibabaConfigProfileAsTheAliyunCliReadsIt) {
  home_.Write(".aliyun/config.json", R"({"current": "prod", "profiles": [
      {"name": "default", "mode": "AK", "access_key_id": "LTAIdefault", "access_key_secret": "d"},
      {"name": "prod", "mode": "StsToken", "access_key_id": "STS.prod", "access_key_secret": "p",
       "sts_token": "tok"},
      {"name": "sso", "mode": "CloudSSO"}]})");
  refresh::AlibabaCredentials c;
  std::string where;
  ASSERT_TRUE(refresh::FindAlibabaCredentials(Sources({}), &c, &where).ok());
  EXPECT_EQ(c.access_key_id, "STS.prod");
  EXPECT_EQ(c.security_token, "tok");
  ASSERT_TRUE(refresh::FindAlibabaCredentials(Sources({{"ALIBABA_CLOUD_PROFILE", "default"}}), &c,
                                              &where)
                  .ok());
  EXPECT_EQ(c.access_key_id, "LTAIdefault");
  Status sso = refresh::FindAlibabaCredentials(Sources({{"ALIBABA_CLOUD_PROFILE", "sso"}}), &c,
                                               &where);
  EXPECT_NE(sso.message().find("CloudSSO"), std::string::npos);
  ASSERT_TRUE(refresh::FindAlibabaCredentials(
                  Sources({{"ALIBABA_CLOUD_IGNORE_PROFILE", "TRUE"},
                           {"ALICLOUD_ACCESS_KEY_ID", "LTAIenv"},
                           {"ALICLOUD_ACCESS_KEY_SECRET", "e"}}),
                  &c, &where)
                  .ok());
  EXPECT_EQ(c.access_key_id, "LTAIenv");
}

TEST_F(CredentialsTest, TencentEnvironmentThenTccliFile) {
  refresh::TencentCredentials c;
  std::string where;
  EXPECT_EQ(refresh::FindTencentCredentials(Sources({}), &c, &where).code(),
            Status::Code::kNotFound);
  home_.Write(".tccli/default.credential", R"({"secretId": "AKIDfile", "secretKey": "k"})");
  ASSERT_TRUE(refresh::FindTencentCredentials(Sources({}), &c, &where).ok());
  EXPECT_EQ(c.secret_id, "AKIDfile");
  ASSERT_TRUE(refresh::FindTencentCredentials(
                  Sources({{"TENCENTCLOUD_SECRET_ID", "AKIDenv"},
                           {"TENCENTCLOUD_SECRET_KEY", "k2"}}),
                  &c, &where)
                  .ok());
  EXPECT_EQ(c.secret_id, "AKIDenv");
  home_.Write(".tccli/default.credential", "not json");
  EXPECT_EQ(refresh::FindTencentCredentials(Sources({}), &c, &where).code(),
            Status::Code::kCorruption);
}

TEST(RefreshOptionsTest, BadOptionsAreNamed) {
  const Catalog& base = testing::BuiltInCatalog();
  RefreshOptions o;
  o.providers = {"oracle"};
  EXPECT_NE(refresh::ValidateRefreshOptions(base, o).message().find("--provider: 'oracle'"),
            std::string::npos);
  o = RefreshOptions();
  o.regions = {"all", "us-east-1"};
  EXPECT_NE(refresh::ValidateRefreshOptions(base, o).message().find("'all' stands alone"),
            std::string::npos);
  o = RefreshOptions();
  o.regions = {"us east 1"};
  EXPECT_FALSE(refresh::ValidateRefreshOptions(base, o).ok());
  o = RefreshOptions();
  o.tencent_currency = "EUR";
  EXPECT_NE(refresh::ValidateRefreshOptions(base, o).message().find("--tencent-currency"),
            std::string::npos);
  o = RefreshOptions();
  o.from_dir = "a";
  o.save_dir = "b";
  EXPECT_FALSE(refresh::ValidateRefreshOptions(base, o).ok());
}

}  // namespace
}  // namespace cloudfit
