// Request counts, errors and latencies per route, exported in Prometheus' text format.
#ifndef CLOUDFIT_SERVER_METRICS_H_
#define CLOUDFIT_SERVER_METRICS_H_

#include <array>
#include <map>
#include <mutex>
#include <string>

namespace cloudfit {

class Metrics {
 public:
  // Records one request on `route` (the route pattern, not the raw path) with its status.
  void Record(const std::string& method, const std::string& route, int status, double seconds);
  std::string Prometheus() const;

 private:
  // Latency histogram buckets, seconds (Prometheus' defaults, trimmed).
  static constexpr std::array<double, 10> kBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,  0.1,    0.25,  0.5,  1};
  struct Route {
    long long requests = 0;
    long long errors = 0;  // status >= 400
    double seconds = 0;
    std::array<long long, kBuckets.size()> buckets{};
    std::map<int, long long> by_status;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Route> routes_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_METRICS_H_
