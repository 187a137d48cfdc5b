#include "server/metrics.h"

#include <fmt/format.h>

namespace cloudfit {

void Metrics::Record(const std::string& method, const std::string& route, int status,
                     double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  Route& r = routes_[{method, route}];
  ++r.requests;
  if (status >= 400) ++r.errors;
  ++r.by_status[status];
  r.seconds += seconds;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++r.buckets[i];
  }
}

std::string Metrics::Prometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out += "# HELP cloudfit_http_requests_total HTTP requests by method, route and status.\n";
  out += "# TYPE cloudfit_http_requests_total counter\n";
  for (const auto& [key, r] : routes_) {
    for (const auto& [status, count] : r.by_status) {
      out += fmt::format("cloudfit_http_requests_total{{method=\"{}\",route=\"{}\",status=\"{}\"}} {}\n",
                         key.first, key.second, status, count);
    }
  }
  out += "# HELP cloudfit_http_errors_total HTTP responses with status 400 or above.\n";
  out += "# TYPE cloudfit_http_errors_total counter\n";
  for (const auto& [key, r] : routes_) {
    out += fmt::format("cloudfit_http_errors_total{{method=\"{}\",route=\"{}\"}} {}\n", key.first,
                       key.second, r.errors);
  }
  out += "# HELP cloudfit_http_request_duration_seconds Time to answer, by route.\n";
  out += "# TYPE cloudfit_http_request_duration_seconds histogram\n";
  for (const auto& [key, r] : routes_) {
    std::string labels = fmt::format("method=\"{}\",route=\"{}\"", key.first, key.second);
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      out += fmt::format("cloudfit_http_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n",
                         labels, kBuckets[i], r.buckets[i]);
    }
    out += fmt::format("cloudfit_http_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n",
                       labels, r.requests);
    out += fmt::format("cloudfit_http_request_duration_seconds_sum{{{}}} {}\n", labels, r.seconds);
    out += fmt::format("cloudfit_http_request_duration_seconds_count{{{}}} {}\n", labels,
                       r.requests);
  }
  return out;
}

}  // namespace cloudfit
