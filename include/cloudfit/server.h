// `cloudfit serve`: the JSON API and the web page over one catalog, from the same binary. Binds
// to 127.0.0.1 by default, limits request bodies, times out slow clients, serves from a bounded
// worker pool, and stops gracefully: requests in flight finish.
#ifndef CLOUDFIT_SERVER_H_
#define CLOUDFIT_SERVER_H_

#include <memory>
#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0 picks a free port
  int threads = 8;                      // workers; more than cores so idle keep-alives do not block
  int max_queued = 64;                  // connections waiting for a worker before accept blocks
  size_t max_body_bytes = 1 << 20;      // larger requests get 413
  int read_timeout_s = 10;
  int write_timeout_s = 10;
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
  // Serves until Stop(); requests in flight are finished before it returns.
  void Serve();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_H_
