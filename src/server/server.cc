#include "cloudfit/server.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "server/api_application.h"
#include "server/http_server.h"

namespace cloudfit {

namespace {

int WorkerCount(const ServerOptions& o) {
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

}  // namespace

struct ApiServer::Impl {
  ServerOptions options;
  ApiApplication app;
  std::unique_ptr<HttpServer> http;

  Impl(const Catalog& catalog, ServerOptions o) : options(std::move(o)), app(catalog) {
    HttpServerOptions h;
    h.host = options.host;
    h.port = options.port;
    h.workers = WorkerCount(options);
    h.idle_workers = options.worker_priority == ServerOptions::WorkerPriority::kIdle;
    h.max_connections = options.max_connections;
    h.max_queued = static_cast<size_t>(std::max(1, options.max_queued));
    h.limits.max_body_bytes = options.max_body_bytes;
    // Room for at least two bodies at the largest size allowed.
    h.max_buffered_bytes = std::max(h.max_buffered_bytes, 2 * options.max_body_bytes);
    h.header_timeout_s = options.read_timeout_s;
    h.body_timeout_s = options.read_timeout_s;
    h.idle_timeout_s = options.idle_timeout_s;
    h.write_timeout_s = options.write_timeout_s;
    http = std::make_unique<HttpServer>(&app, h);
  }
};

ApiServer::ApiServer(const Catalog& catalog, ServerOptions options)
    : impl_(std::make_unique<Impl>(catalog, std::move(options))) {}

ApiServer::~ApiServer() = default;

bool ApiServer::Bind(std::string* error) { return impl_->http->Bind(error); }

int ApiServer::port() const { return impl_->http->port(); }

int ApiServer::workers() const { return WorkerCount(impl_->options); }

void ApiServer::Serve() { impl_->http->Serve(); }

void ApiServer::Stop() { impl_->http->Stop(); }

}  // namespace cloudfit
