// The routes of `cloudfit serve` as an HttpApplication: which request goes to which API function
// (server/api.h), which answers are bytes prepared at start, and the metrics of every response.
// It knows nothing of sockets, so the fuzz harness and tests drive it with parsed requests.
#ifndef CLOUDFIT_SERVER_API_APPLICATION_H_
#define CLOUDFIT_SERVER_API_APPLICATION_H_

#include <memory>
#include <string>
#include <vector>

#include "cloudfit/catalog.h"
#include "cloudfit/recommend.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace cloudfit {

class ApiApplication : public HttpApplication {
 public:
  // `catalog` must outlive the application.
  explicit ApiApplication(const Catalog& catalog);
  ~ApiApplication() override;

  HttpRouteMatch Match(const HttpRequest& request) override;
  HttpResponse Handle(const HttpRequest& request, const HttpRouteMatch& match) override;
  void Observe(std::string_view method, std::string_view route, int status,
               double seconds) override;
  std::string ErrorBody(int status, const std::string& message) override;

  const Metrics& metrics() const { return metrics_; }

 private:
  struct Route;
  const Catalog& catalog_;
  Metrics metrics_;
  std::vector<Route> routes_;
  // /v1/catalog for one day, remade when the date changes (its age warnings depend on today);
  // Handle runs it on the I/O thread only.
  int catalog_day_ = -1;
  std::shared_ptr<const std::string> catalog_body_;
  // Estimates of recently recommended workloads, shared by the workers (it locks).
  EstimateCache estimates_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_API_APPLICATION_H_
