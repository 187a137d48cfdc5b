// The HTTP layer of the refresh against a local server: retries with backoff on 429 and 5xx,
// no retry on other errors, the byte limit, a truncated body, streaming, and Azure's OData
// paging with throttling through the whole refresh. Skips where libcurl cannot be loaded.
#include <atomic>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "refresh/http_client.h"
#include "refresh/refresh.h"
#include "refresh_test_support.h"
#include "test_support.h"

namespace cloudfit {
namespace {

using refresh::HttpRequest;
using refresh::HttpResponse;

class LocalServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The test server is local: keep any configured proxy out of the way.
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    std::string why_not;
    refresh::HttpLimits limits;
    limits.timeout_s = 20;
    limits.max_body_bytes = 100000;
    curl_ = refresh::NewCurlHttpClient(limits, &why_not);
    if (!curl_) GTEST_SKIP() << why_not;
  }

  void Start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  void TearDown() override {
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }

  std::string Url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }

  refresh::RetryingHttpClient Retrying() {
    return refresh::RetryingHttpClient(curl_.get(), refresh::RetryPolicy(),
                                       [this](double s) { sleeps_.push_back(s); }, nullptr);
  }

  std::unique_ptr<refresh::HttpClient> curl_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::vector<double> sleeps_;
};

TEST_F(LocalServerTest, ThrottledAndFailingAnswersAreRetriedWithBackoff) {
  std::atomic<int> hits{0};
  server_.Get("/flaky", [&](const httplib::Request&, httplib::Response& res) {
    int n = ++hits;
    if (n == 1) {
      res.status = 429;
      res.set_header("Retry-After", "0");
    } else if (n == 2) {
      res.status = 503;
    } else {
      res.set_content("ok", "text/plain");
    }
  });
  Start();
  auto http = Retrying();
  HttpRequest request;
  request.url = Url("/flaky");
  HttpResponse response;
  ASSERT_TRUE(refresh::FetchOk(&http, "test", request, &response).ok());
  EXPECT_EQ(response.body, "ok");
  EXPECT_EQ(hits.load(), 3);
  EXPECT_EQ(sleeps_, (std::vector<double>{0, 2})) << "Retry-After first, then doubled backoff";
}

TEST_F(LocalServerTest, ClientErrorsAreNotRetriedAndPersistentErrorsGiveUp) {
  std::atomic<int> missing{0}, broken{0};
  server_.Get("/missing", [&](const httplib::Request&, httplib::Response& res) {
    ++missing;
    res.status = 404;
    res.set_content("<html>not here</html>", "text/html");
  });
  server_.Get("/broken", [&](const httplib::Request&, httplib::Response& res) {
    ++broken;
    res.status = 500;
  });
  Start();
  auto http = Retrying();
  HttpRequest request;
  request.url = Url("/missing");
  HttpResponse response;
  Status s = refresh::FetchOk(&http, "test", request, &response);
  EXPECT_EQ(missing.load(), 1);
  EXPECT_NE(s.message().find("test: GET " + Url("/missing") + ": HTTP 404: <html>not here"),
            std::string::npos)
      << s.message();
  request.url = Url("/broken");
  s = refresh::FetchOk(&http, "test", request, &response);
  EXPECT_EQ(broken.load(), refresh::RetryPolicy().max_attempts);
  EXPECT_NE(s.message().find("HTTP 500"), std::string::npos);
}

TEST_F(LocalServerTest, ABodyOverTheLimitIsRefused) {
  server_.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(300000, 'x'), "text/plain");
  });
  Start();
  HttpRequest request;
  request.url = Url("/big");
  HttpResponse response;
  Status s = curl_->Send(request, &response);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("larger than"), std::string::npos) << s.message();
}

TEST_F(LocalServerTest, ACutOffBodyIsATruncationError) {
  server_.Get("/cut", [](const httplib::Request&, httplib::Response& res) {
    res.set_content_provider(1000, "application/json",
                             [](size_t offset, size_t, httplib::DataSink& sink) {
                               if (offset > 0) return false;  // close after 10 of 1000 bytes
                               sink.write("{\"Items\":[", 10);
                               return true;
                             });
  });
  Start();
  HttpRequest request;
  request.url = Url("/cut");
  HttpResponse response;
  Status s = curl_->Send(request, &response);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST_F(LocalServerTest, StreamsArriveInPiecesWithoutTheLimit) {
  static constexpr size_t kSize = 3 << 20;  // above the 100 kB limit of non-streamed bodies
  const size_t size = kSize;
  server_.Get("/stream", [&](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider("text/csv", [](size_t offset, httplib::DataSink& sink) {
      if (offset >= kSize) {
        sink.done();
        return true;
      }
      std::string piece(64 * 1024, 'a');
      sink.write(piece.data(), piece.size());
      return true;
    });
  });
  Start();
  HttpRequest request;
  request.url = Url("/stream");
  HttpResponse response;
  size_t bytes = 0;
  int pieces = 0;
  Status s = curl_->Stream(request, [&](std::string_view chunk) {
    bytes += chunk.size();
    ++pieces;
    return true;
  }, &response);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(response.status, 200);
  EXPECT_GE(bytes, size);
  EXPECT_GT(pieces, 1);
  EXPECT_TRUE(response.body.empty());
}

TEST_F(LocalServerTest, AzurePagingAndThrottlingThroughTheWholeRefresh) {
  std::string page1 = testing::RefreshFixture("azure/page1.json");
  std::string page2 = testing::RefreshFixture("azure/page2.json");
  std::atomic<int> first_page_hits{0};
  server_.Get("/api/retail/prices", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("$skip")) {
      res.set_content(page2, "application/json");
      return;
    }
    if (++first_page_hits == 1) {  // throttled once
      res.status = 429;
      res.set_header("Retry-After", "1");
      return;
    }
    std::string body = page1;
    std::string next = Url("/api/retail/prices?api-version=2023-01-01-preview&$skip=100");
    body.replace(body.find("NEXT_PAGE"), 9, next);
    res.set_content(body, "application/json");
  });
  Start();
  Catalog base;
  ASSERT_TRUE(Catalog::FromFiles(testing::RefreshCatalogFiles(), "fixture", &base).ok());
  auto http = Retrying();
  refresh::RefreshEnvironment environment = testing::TestEnvironment(&http, {});
  environment.base_urls["azure"] = Url("/api/retail/prices");
  RefreshOptions options;
  options.providers = {"azure"};
  CatalogFiles files;
  RefreshReport report;
  Status s = refresh::RefreshWith(base, options, environment, &files, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(first_page_hits.load(), 2);
  EXPECT_EQ(sleeps_, (std::vector<double>{1}));
  Catalog merged;
  ASSERT_TRUE(Catalog::FromFiles(files, "refreshed", &merged).ok());
  const InstanceType* t = nullptr;
  ASSERT_TRUE(merged.FindInstance("Standard_NC24ads_A100_v4", &t).ok());
  const RegionPrice* r = t->FindRegion("eastus");
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(*r->price(PricingMode::kOnDemand), 3.673);
  EXPECT_DOUBLE_EQ(*r->price(PricingMode::kReserved3y), 37021.0 / 26280);  // from page 2
}

}  // namespace
}  // namespace cloudfit
