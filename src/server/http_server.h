// A small event-driven HTTP/1.1 server: one I/O thread multiplexes every connection with epoll,
// and a pool of workers runs the handlers that take time. An idle keep-alive connection costs a
// few hundred bytes and no thread, so connections beyond the worker count never wait behind
// idle ones; a slow client holds no worker while it trickles its request in.
//
// What it guarantees, for any bytes a client sends:
//  - limits on the request line, header section and body (HttpLimits) apply as bytes arrive,
//    chunked bodies included, before anything over a limit is held;
//  - per-connection deadlines: the header section within header_timeout_s of its first byte,
//    the body within body_timeout_s of the headers, the next request within idle_timeout_s,
//    a response written within write_timeout_s; a late client gets 408 (or is closed when idle);
//  - beyond max_connections a new connection gets 503 and is closed at once; beyond max_queued
//    waiting requests, or max_buffered_bytes of request bytes held across connections, a
//    request gets 503 (with Retry-After) instead of waiting;
//  - pipelined requests are answered in order, one at a time;
//  - every response, errors of the parser and handler exceptions (500) included, goes through
//    the application's Observe(), so metrics see all of them.
#ifndef CLOUDFIT_SERVER_HTTP_SERVER_H_
#define CLOUDFIT_SERVER_HTTP_SERVER_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/http_parser.h"

namespace cloudfit {

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // A body prepared once and shared between responses (static pages): used instead of `body`.
  std::shared_ptr<const std::string> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra fields: Allow, Retry-After
};

// What the application decided once a request's headers arrived.
struct HttpRouteMatch {
  std::string label;       // the route template, for metrics: "/v1/recommend", "unmatched"
  int handler = -1;        // the application's own handler number
  bool inline_ok = false;  // cheap enough to answer on the I/O thread (static bytes, 404)
};

class HttpApplication {
 public:
  virtual ~HttpApplication() = default;
  // On the I/O thread, when a request's headers are complete: must be quick and not block.
  virtual HttpRouteMatch Match(const HttpRequest& request) = 0;
  // For a complete request: on the I/O thread when match.inline_ok, else on a worker thread.
  // An exception becomes a 500.
  virtual HttpResponse Handle(const HttpRequest& request, const HttpRouteMatch& match) = 0;
  // For every response, before it is sent: on the I/O thread, or on the worker that answered
  // (which sends its response itself), so it must be safe to call from several threads at once.
  // `method` is one of the standard methods or "OTHER"; `route` a match label or "unrouted"
  // for requests refused before routing.
  virtual void Observe(std::string_view method, std::string_view route, int status,
                       double seconds) = 0;
  // The body of an error response the server makes itself (400, 408, 413, 431, 503, ...).
  virtual std::string ErrorBody(int status, const std::string& message) = 0;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int workers = 4;
  bool idle_workers = false;  // workers under SCHED_IDLE instead of nice +10 (worker_pool.h)
  size_t max_connections = 4096;
  size_t max_queued = 1024;
  size_t max_buffered_bytes = size_t{256} << 20;
  HttpLimits limits;
  double header_timeout_s = 10;
  double body_timeout_s = 30;
  double idle_timeout_s = 5;
  double write_timeout_s = 10;
};

class HttpServer {
 public:
  HttpServer(HttpApplication* app, HttpServerOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; false with a message when the address is taken or invalid.
  bool Bind(std::string* error);
  int port() const;
  // Runs the event loop until Stop(); requests in flight are answered before it returns.
  void Serve();
  // From any thread (not from a signal handler); Serve() returns soon after.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The reason phrase of a status code ("Not Found").
std::string_view HttpReason(int status);

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_HTTP_SERVER_H_
