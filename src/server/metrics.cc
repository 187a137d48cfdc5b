#include "server/metrics.h"

#include <fmt/format.h>

#include <atomic>
#include <utility>

namespace cloudfit {

namespace {
std::atomic<uint64_t> next_metrics_id{1};
}  // namespace

Metrics::Metrics() : id_(next_metrics_id++) {}

Metrics::Shard* Metrics::ThisThreadsShard() {
  // A thread's shards, one per Metrics it recorded into (a server has one; tests make several).
  thread_local std::vector<std::pair<uint64_t, Shard*>> mine;
  for (const auto& [id, shard] : mine) {
    if (id == id_) return shard;
  }
  std::lock_guard<std::mutex> lock(shards_mu_);
  shards_.push_back(std::make_unique<Shard>());
  mine.emplace_back(id_, shards_.back().get());
  return shards_.back().get();
}

void Metrics::Record(const std::string& method, const std::string& route, int status,
                     double seconds) {
  Shard* shard = ThisThreadsShard();
  std::lock_guard<std::mutex> lock(shard->mu);
  Route& r = shard->routes[{method, route}];
  ++r.requests;
  if (status >= 400) ++r.errors;
  ++r.by_status[status];
  r.seconds += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++r.buckets[i];
  }
}

std::string Metrics::Prometheus() const {
  Routes routes;  // the shards added up
  {
    std::lock_guard<std::mutex> shards_lock(shards_mu_);
    for (const auto& shard : shards_) {
      std::lock_guard<std::mutex> lock(shard->mu);
      for (const auto& [key, r] : shard->routes) {
        Route& sum = routes[key];
        sum.requests += r.requests;
        sum.errors += r.errors;
        sum.seconds += r.seconds;
        for (size_t i = 0; i < kBuckets.size(); ++i) sum.buckets[i] += r.buckets[i];
        for (const auto& [status, count] : r.by_status) sum.by_status[status] += count;
      }
    }
  }
  std::string out;
  out += "# HELP cloudfit_http_requests_total HTTP requests by method, route and status.\n";
  out += "# TYPE cloudfit_http_requests_total counter\n";
  for (const auto& [key, r] : routes) {
    for (const auto& [status, count] : r.by_status) {
      out += fmt::format(
          "cloudfit_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}\n",
          key.first, key.second, status, count);
    }
  }
  out += "# HELP cloudfit_http_errors_total HTTP responses with status 400 or above.\n";
  out += "# TYPE cloudfit_http_errors_total counter\n";
  for (const auto& [key, r] : routes) {
    out += fmt::format("cloudfit_http_errors_total{{method=\"{}\",route=\"{}\"}} {}\n", key.first,
                       key.second, r.errors);
  }
  out += "# HELP cloudfit_http_request_duration_seconds Time to answer, by route.\n";
  out += "# TYPE cloudfit_http_request_duration_seconds histogram\n";
  for (const auto& [key, r] : routes) {
    std::string labels = fmt::format("method=\"{}\",route=\"{}\"", key.first, key.second);
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out += fmt::format("cloudfit_http_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n",
                         labels, kBuckets[i], r.buckets[i]);
    }
    out += fmt::format("cloudfit_http_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n",
                       labels, r.requests);
    out += fmt::format("cloudfit_http_request_duration_seconds_sum{{{}}} {}\n", labels, r.seconds);
    out +=
        fmt::format("cloudfit_http_request_duration_seconds_count{{{}}} {}\n", labels, r.requests);
  }
  return out;
}

}  // namespace cloudfit
