// Request counts, errors and latencies per route, exported in Prometheus' text format.
#ifndef CLOUDFIT_SERVER_METRICS_H_
#define CLOUDFIT_SERVER_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cloudfit {

// Each thread records into a shard of its own, and the export adds the shards up. One shared
// lock made the server's I/O thread, which records the requests it answers itself (health
// checks among them), wait whenever a worker (running at a lower priority) had been preempted
// while holding it; now a recording thread only ever meets the exporting thread on its shard.
class Metrics {
 public:
  Metrics();
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
  using Routes = std::map<std::pair<std::string, std::string>, Route>;
  struct Shard {
    std::mutex mu;  // the recording thread's, and the export's while it reads
    Routes routes;
  };
  Shard* ThisThreadsShard();

  const uint64_t id_;             // tells this instance from a later one at the same address
  mutable std::mutex shards_mu_;  // guards `shards_`: a thread's first record adds its shard
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_METRICS_H_
