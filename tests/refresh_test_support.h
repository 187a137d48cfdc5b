// What the refresh tests share: a scripted HTTP client answering from the recorded fixtures
// under tests/fixtures/refresh, a catalog with one type of each provider, and fixed
// credentials and clock.
#ifndef CLOUDFIT_TESTS_REFRESH_TEST_SUPPORT_H_
#define CLOUDFIT_TESTS_REFRESH_TEST_SUPPORT_H_

#include <map>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "refresh/http_client.h"
#include "refresh/refresh.h"

namespace cloudfit::testing {

// One canned answer: the first rule whose method matches and whose URL (display URL) and body
// contain the given pieces answers; `times` < 0 answers forever.
struct ScriptedAnswer {
  std::string method;
  std::string url_has;
  std::string body_has;
  int status = 200;
  std::string body;
  int times = -1;
};

class ScriptedHttpClient : public refresh::HttpClient {
 public:
  void Add(ScriptedAnswer answer) { answers_.push_back(std::move(answer)); }
  // Put `rule` first, so it wins over the standard answers.
  void Override(ScriptedAnswer answer) { answers_.insert(answers_.begin(), std::move(answer)); }
  Status Send(const refresh::HttpRequest& request, refresh::HttpResponse* response) override;
  Status Stream(const refresh::HttpRequest& request, const refresh::BodySink& sink,
                refresh::HttpResponse* response) override;
  const std::vector<refresh::HttpRequest>& requests() const { return requests_; }
  int fetched_days = 20781;  // 2026-11-24

 private:
  std::vector<ScriptedAnswer> answers_;
  std::vector<refresh::HttpRequest> requests_;
};

// The fixture file tests/fixtures/refresh/<relative>.
std::string RefreshFixture(const std::string& relative);

// The answers of every provider for the catalog of RefreshCatalogFiles().
void AddStandardAnswers(ScriptedHttpClient* http);

// The fixture catalog plus one Azure and one Tencent type.
CatalogFiles RefreshCatalogFiles();

// Environment with `http`, fixed clock, a sleep that records, and these variables only.
refresh::RefreshEnvironment TestEnvironment(refresh::HttpClient* http,
                                            std::map<std::string, std::string> env,
                                            std::vector<double>* sleeps = nullptr);

// Credentials for every provider, as environment variables.
std::map<std::string, std::string> AllCredentials();

}  // namespace cloudfit::testing

#endif  // CLOUDFIT_TESTS_REFRESH_TEST_SUPPORT_H_
