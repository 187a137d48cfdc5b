// The server's request metrics: what threads record apart is exported added up.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace cloudfit {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

TEST(MetricsTest, AddsUpWhatEachThreadRecorded) {
  Metrics metrics;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&metrics, t] {
      for (int i = 0; i < 1000; ++i) {
        metrics.Record("POST", "/v1/recommend", i % 10 == 0 ? 400 : 200, 0.002);
        if (t == 0) metrics.Record("GET", "/healthz", 200, 0.0005);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  metrics.Record("POST", "/v1/recommend", 503, 2.0);  // this thread's own shard
  std::string text = metrics.Prometheus();
  EXPECT_TRUE(
      Has(text,
          R"(cloudfit_http_requests_total{method="POST",route="/v1/recommend",status="200"} 3600)"))
      << text;
  EXPECT_TRUE(
      Has(text,
          R"(cloudfit_http_requests_total{method="POST",route="/v1/recommend",status="400"} 400)"));
  EXPECT_TRUE(Has(
      text, R"(cloudfit_http_requests_total{method="POST",route="/v1/recommend",status="503"} 1)"));
  EXPECT_TRUE(Has(text, R"(cloudfit_http_errors_total{method="POST",route="/v1/recommend"} 401)"));
  EXPECT_TRUE(Has(
      text,
      R"(cloudfit_http_request_duration_seconds_count{method="POST",route="/v1/recommend"} 4001)"));
  // 4,000 answers took 2 ms (within the 2.5 ms bucket), one took 2 s (past every bucket).
  EXPECT_TRUE(Has(
      text,
      R"(cloudfit_http_request_duration_seconds_bucket{method="POST",route="/v1/recommend",le="0.0025"} 4000)"));
  EXPECT_TRUE(Has(
      text,
      R"(cloudfit_http_request_duration_seconds_bucket{method="POST",route="/v1/recommend",le="+Inf"} 4001)"));
  EXPECT_TRUE(Has(
      text, R"(cloudfit_http_requests_total{method="GET",route="/healthz",status="200"} 1000)"));
  // Each route once, however many shards hold it.
  size_t first = text.find("cloudfit_http_errors_total{method=\"GET\",route=\"/healthz\"}");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("cloudfit_http_errors_total{method=\"GET\",route=\"/healthz\"}", first + 1),
            std::string::npos);
}

TEST(MetricsTest, KeepsInstancesApartWhenOneThreadRecordsIntoBoth) {
  auto a = std::make_unique<Metrics>();
  Metrics b;
  for (int i = 0; i < 3; ++i) {
    a->Record("GET", "/a", 200, 0.001);
    b.Record("GET", "/b", 200, 0.001);
  }
  EXPECT_TRUE(Has(a->Prometheus(),
                  R"(cloudfit_http_requests_total{method="GET",route="/a",status="200"} 3)"));
  EXPECT_EQ(a->Prometheus().find("route=\"/b\""), std::string::npos);
  // A new instance (perhaps at the freed one's address) starts empty.
  a = std::make_unique<Metrics>();
  a->Record("GET", "/c", 200, 0.001);
  std::string text = a->Prometheus();
  EXPECT_EQ(text.find("route=\"/a\""), std::string::npos);
  EXPECT_TRUE(Has(text, R"(cloudfit_http_requests_total{method="GET",route="/c",status="200"} 1)"));
}

}  // namespace
}  // namespace cloudfit
