#include "server/api_application.h"

#include "catalog/embedded_data.h"
#include "server/api.h"
#include "util/date.h"
#include "util/strings.h"

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

HttpResponse Error(int status, const std::string& message) {
  return FromApi(ApiError(status, message));
}

// What a route does with a request.
enum class Handler {
  kStatic,  // bytes prepared at start
  kMetrics,
  kCatalog,  // prepared once a day
  kInstances,
  kRecommend,
  kEstimate,
  kExport,
};

// Handler numbers in HttpRouteMatch beyond the routes' own.
constexpr int kNoRoute = -1;
constexpr int kWrongMethod = -2;

}  // namespace

struct ApiApplication::Route {
  std::string path;
  std::string method;  // GET routes answer HEAD too
  Handler handler;
  std::shared_ptr<const std::string> body;  // kStatic
  std::string content_type = "application/json";
};

ApiApplication::ApiApplication(const Catalog& catalog) : catalog_(catalog) {
  auto prepared = [](const ApiResponse& r) { return std::make_shared<const std::string>(r.body); };
  routes_.push_back({"/healthz", "GET", Handler::kStatic,
                     std::make_shared<const std::string>(R"({"status":"ok"})")});
  routes_.push_back({"/metrics", "GET", Handler::kMetrics, nullptr, "text/plain; version=0.0.4"});
  routes_.push_back({"/v1/gpus", "GET", Handler::kStatic, prepared(ApiGpus(catalog_))});
  routes_.push_back({"/v1/models", "GET", Handler::kStatic, prepared(ApiModels(catalog_))});
  routes_.push_back({"/v1/catalog", "GET", Handler::kCatalog, nullptr});
  routes_.push_back({"/v1/instances", "GET", Handler::kInstances, nullptr});
  routes_.push_back({"/v1/recommend", "POST", Handler::kRecommend, nullptr});
  routes_.push_back({"/v1/estimate", "POST", Handler::kEstimate, nullptr});
  routes_.push_back({"/v1/export", "POST", Handler::kExport, nullptr});
  routes_.push_back(
      {"/v1/workload-fields", "GET", Handler::kStatic, prepared(ApiWorkloadFields())});
  // The page and the API description, from memory: nothing is served from the disk.
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    std::string name = f.path;
    routes_.push_back({name == "index.html" ? "/" : "/" + name, "GET", Handler::kStatic,
                       std::make_shared<const std::string>(f.data, f.size), ContentType(name)});
  }
}

ApiApplication::~ApiApplication() = default;

HttpRouteMatch ApiApplication::Match(const HttpRequest& request) {
  HttpRouteMatch m;
  const std::string method = request.method == "HEAD" ? std::string("GET") : request.method;
  bool path_known = false;
  for (size_t i = 0; i < routes_.size(); ++i) {
    if (routes_[i].path != request.path) continue;
    path_known = true;
    if (routes_[i].method != method) continue;
    m.label = routes_[i].path;
    m.handler = static_cast<int>(i);
    Handler h = routes_[i].handler;
    m.inline_ok = h == Handler::kStatic || h == Handler::kMetrics || h == Handler::kCatalog;
    return m;
  }
  // Labels are route templates only: a client's own path never becomes one.
  m.label = path_known ? request.path : "unmatched";
  m.handler = path_known ? kWrongMethod : kNoRoute;
  m.inline_ok = true;
  return m;
}

HttpResponse ApiApplication::Handle(const HttpRequest& request, const HttpRouteMatch& match) {
  if (match.handler == kNoRoute)
    return Error(404, "no route " + request.method + " " + request.path);
  if (match.handler == kWrongMethod) {
    HttpResponse r = Error(405, request.method + " " + request.path + ": method not allowed");
    std::string allowed;
    for (const Route& route : routes_) {
      if (route.path != request.path) continue;
      allowed += (allowed.empty() ? "" : ", ") + route.method;
      if (route.method == "GET") allowed += ", HEAD";
    }
    r.headers.emplace_back("Allow", allowed);
    return r;
  }
  if (match.handler < 0 || static_cast<size_t>(match.handler) >= routes_.size()) {
    return Error(500, "internal error: no such handler");
  }
  const Route& route = routes_[static_cast<size_t>(match.handler)];
  HttpResponse r;
  r.content_type = route.content_type;
  switch (route.handler) {
    case Handler::kStatic:
      r.shared_body = route.body;
      return r;
    case Handler::kMetrics:
      r.body = metrics_.Prometheus();
      return r;
    case Handler::kCatalog:
      if (int today = TodayDays(); today != catalog_day_ || !catalog_body_) {
        catalog_body_ = std::make_shared<const std::string>(ApiCatalog(catalog_).body);
        catalog_day_ = today;
      }
      r.shared_body = catalog_body_;
      return r;
    case Handler::kInstances: {
      std::vector<std::pair<std::string, std::string>> pairs;
      if (!ParseQuery(request.query, &pairs)) return Error(400, "query: bad percent-encoding");
      return FromApi(ApiInstances(catalog_, QueryParams(pairs.begin(), pairs.end())));
    }
    case Handler::kRecommend:
      return FromApi(ApiRecommend(catalog_, request.body, &estimates_));
    case Handler::kEstimate:
      return FromApi(ApiEstimate(catalog_, request.body));
    case Handler::kExport:
      return FromApi(ApiExport(catalog_, request.body, &estimates_));
  }
  return Error(500, "internal error: no such handler");
}

void ApiApplication::Observe(std::string_view method, std::string_view route, int status,
                             double seconds) {
  metrics_.Record(std::string(method), std::string(route), status, seconds);
}

std::string ApiApplication::ErrorBody(int status, const std::string& message) {
  return ApiError(status, message).body;
}

}  // namespace cloudfit
