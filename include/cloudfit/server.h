// `cloudfit serve`: the JSON API and the web page over one catalog, from the same binary. Binds
// to 127.0.0.1 by default. One event-driven I/O thread holds every connection and a bounded pool
// of workers answers the requests that compute (src/server/http_server.h says what is
// guaranteed against slow, oversized, malformed and too many clients). Static routes are bytes
// prepared at start. The API never reads a file. Stops gracefully: requests in flight finish.
#ifndef CLOUDFIT_SERVER_H_
#define CLOUDFIT_SERVER_H_

#include <memory>
#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                  // 0 picks a free port
  int threads = 0;                  // workers for computing routes; 0 = one per CPU core
  int max_queued = 1024;            // requests waiting for a worker; beyond, 503 at once
  size_t max_connections = 4096;    // open connections; beyond, 503 and close at once
  size_t max_body_bytes = 1 << 20;  // larger bodies get 413, whatever their transfer encoding
  double read_timeout_s = 10;       // for the headers, then again for the body
  double idle_timeout_s = 5;        // a keep-alive connection waiting for its next request
  double write_timeout_s = 10;      // for a response to be taken by the client
  // How the workers yield the cores to the I/O thread, which accepts connections and answers
  // health checks: kLow runs them at nice +10; kIdle under SCHED_IDLE, which the I/O thread
  // preempts the moment it wakes, but which gets only the CPU nothing else on the machine (or in
  // the container's cgroup) wants. Neither needs a privilege.
  enum class WorkerPriority { kLow, kIdle };
  WorkerPriority worker_priority = WorkerPriority::kLow;
};

class ApiServer {
 public:
  ApiServer(const Catalog& catalog, ServerOptions options);
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Binds the socket; returns false (and a message) when the address is taken or invalid.
  bool Bind(std::string* error);
  int port() const;
  int workers() const;
  // Serves until Stop(); requests in flight are finished before it returns.
  void Serve();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_H_
