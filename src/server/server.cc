#include "cloudfit/server.h"

#include <algorithm>
#include <memory>
#include <thread>

#include "catalog/embedded_data.h"
#include "server/api.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "util/date.h"
#include "util/strings.h"
#include "util/validate.h"

namespace cloudfit {

namespace {

std::string ContentType(const std::string& name) {
  if (EndsWith(name, ".html")) return "text/html; charset=utf-8";
  if (EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (EndsWith(name, ".css")) return "text/css; charset=utf-8";
  return "application/json";
}

HttpResponse FromApi(ApiResponse r) {
  HttpResponse out;
  out.status = r.status;
  out.content_type = std::move(r.content_type);
  out.body = std::move(r.body);
  return out;
}

// What a route does with a request.
enum class Handler {
  kStatic,     // bytes prepared at start
  kMetrics,
  kCatalog,    // prepared once a day (its age warnings depend on today)
  kInstances,
  kRecommend,
  kEstimate,
  kNotFound,
  kMethodNotAllowed,
};

struct RouteSpec {
  std::string path;
  std::string method;  // GET routes answer HEAD too
  Handler handler;
  std::shared_ptr<const std::string> body;  // kStatic
  std::string content_type = "application/json";
};

}  // namespace

struct ApiServer::Impl : public HttpApplication {
  const Catalog& catalog;
  ServerOptions options;
  Metrics metrics;
  std::vector<RouteSpec> routes;
  std::unique_ptr<HttpServer> http;
  // /v1/catalog for one day, remade when the date changes; touched by the I/O thread only.
  int catalog_day = -1;
  std::shared_ptr<const std::string> catalog_body;

  Impl(const Catalog& c, ServerOptions o) : catalog(c), options(std::move(o)) {
    auto prepared = [](const ApiResponse& r) { return std::make_shared<const std::string>(r.body); };
    routes.push_back({"/healthz", "GET", Handler::kStatic,
                      std::make_shared<const std::string>(R"({"status":"ok"})")});
    routes.push_back({"/metrics", "GET", Handler::kMetrics, nullptr, "text/plain; version=0.0.4"});
    routes.push_back({"/v1/gpus", "GET", Handler::kStatic, prepared(ApiGpus(catalog))});
    routes.push_back({"/v1/models", "GET", Handler::kStatic, prepared(ApiModels(catalog))});
    routes.push_back({"/v1/catalog", "GET", Handler::kCatalog, nullptr});
    routes.push_back({"/v1/instances", "GET", Handler::kInstances, nullptr});
    routes.push_back({"/v1/recommend", "POST", Handler::kRecommend, nullptr});
    routes.push_back({"/v1/estimate", "POST", Handler::kEstimate, nullptr});
    // The page and the API description, from memory: nothing is served from the disk.
    for (const EmbeddedFile& f : EmbeddedWebFiles()) {
      std::string name = f.path;
      std::string path = name == "index.html" ? "/" : "/" + name;
      routes.push_back({path, "GET", Handler::kStatic,
                        std::make_shared<const std::string>(f.data, f.size), ContentType(name)});
    }
  }

  HttpRouteMatch Match(const HttpRequest& request) override {
    HttpRouteMatch m;
    const std::string& method = request.method == "HEAD" ? std::string("GET") : request.method;
    bool path_known = false;
    for (size_t i = 0; i < routes.size(); ++i) {
      if (routes[i].path != request.path) continue;
      path_known = true;
      if (routes[i].method != method) continue;
      m.label = routes[i].path;
      m.handler = static_cast<int>(i);
      Handler h = routes[i].handler;
      m.inline_ok = h == Handler::kStatic || h == Handler::kMetrics || h == Handler::kCatalog;
      return m;
    }
    // Labels are route templates only: a client's path never becomes one.
    m.label = path_known ? request.path : "unmatched";
    m.handler = path_known ? -2 : -1;
    m.inline_ok = true;
    return m;
  }

  HttpResponse Handle(const HttpRequest& request, const HttpRouteMatch& match) override {
    if (match.handler == -1) {
      return Error(404, "no route " + request.method + " " + request.path);
    }
    if (match.handler == -2) {
      HttpResponse r = Error(405, request.method + " " + request.path + ": method not allowed");
      std::string allowed;
      for (const RouteSpec& route : routes) {
        if (route.path != request.path) continue;
        allowed += (allowed.empty() ? "" : ", ") + route.method;
        if (route.method == "GET") allowed += ", HEAD";
      }
      r.headers.emplace_back("Allow", allowed);
      return r;
    }
    const RouteSpec& route = routes[static_cast<size_t>(match.handler)];
    HttpResponse r;
    r.content_type = route.content_type;
    switch (route.handler) {
      case Handler::kStatic:
        r.shared_body = route.body;
        return r;
      case Handler::kMetrics:
        r.body = metrics.Prometheus();
        return r;
      case Handler::kCatalog:
        if (int today = TodayDays(); today != catalog_day || !catalog_body) {
          catalog_body = std::make_shared<const std::string>(ApiCatalog(catalog).body);
          catalog_day = today;
        }
        r.shared_body = catalog_body;
        return r;
      case Handler::kInstances: {
        std::vector<std::pair<std::string, std::string>> pairs;
        if (!ParseQuery(request.query, &pairs)) {
          return Error(400, "query: bad percent-encoding");
        }
        return FromApi(ApiInstances(catalog, QueryParams(pairs.begin(), pairs.end())));
      }
      case Handler::kRecommend:
        return FromApi(ApiRecommend(catalog, request.body));
      case Handler::kEstimate:
        return FromApi(ApiEstimate(catalog, request.body));
      default:
        return Error(500, "internal error: no handler");
    }
  }

  void Observe(std::string_view method, std::string_view route, int status,
               double seconds) override {
    metrics.Record(std::string(method), std::string(route), status, seconds);
  }

  std::string ErrorBody(int status, const std::string& message) override {
    return ApiError(status, message).body;
  }

  HttpResponse Error(int status, const std::string& message) {
    return FromApi(ApiError(status, message));
  }
};

ApiServer::ApiServer(const Catalog& catalog, ServerOptions options)
    : impl_(std::make_unique<Impl>(catalog, std::move(options))) {
  const ServerOptions& o = impl_->options;
  HttpServerOptions h;
  h.host = o.host;
  h.port = o.port;
  h.workers = o.threads > 0 ? o.threads
                            : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  h.max_connections = o.max_connections;
  h.max_queued = static_cast<size_t>(std::max(1, o.max_queued));
  h.limits.max_body_bytes = o.max_body_bytes;
  h.header_timeout_s = o.read_timeout_s;
  h.body_timeout_s = o.read_timeout_s;
  h.idle_timeout_s = o.idle_timeout_s;
  h.write_timeout_s = o.write_timeout_s;
  impl_->http = std::make_unique<HttpServer>(impl_.get(), h);
}

ApiServer::~ApiServer() = default;

bool ApiServer::Bind(std::string* error) { return impl_->http->Bind(error); }

int ApiServer::port() const { return impl_->http->port(); }

int ApiServer::workers() const {
  const ServerOptions& o = impl_->options;
  return o.threads > 0 ? o.threads
                       : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
}

void ApiServer::Serve() { impl_->http->Serve(); }

void ApiServer::Stop() { impl_->http->Stop(); }

}  // namespace cloudfit
