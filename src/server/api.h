// The HTTP API as plain functions of the catalog and the request: each returns a status and a
// JSON body with the same schemas as the command line's --json. Errors are 400 with
// {"error": "..."} naming the field.
#ifndef CLOUDFIT_SERVER_API_H_
#define CLOUDFIT_SERVER_API_H_

#include <map>
#include <string>

#include "cloudfit/catalog.h"

namespace cloudfit {

struct ApiResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class EstimateCache;

using QueryParams = std::multimap<std::string, std::string>;

ApiResponse ApiRecommend(const Catalog& catalog, const std::string& body,
                         EstimateCache* cache = nullptr);
ApiResponse ApiEstimate(const Catalog& catalog, const std::string& body);
// A chosen machine as `cloudfit export` writes it: an offer of the recommendation for a
// workload ({"format", "workload", "options", "rank"}) or a named instance ({"format",
// "instance", "region", "pricing", "nodes", "replicas", "serving"}); answers
// {"schema": "cloudfit.export/v1", "format", "filename", "text"}.
ApiResponse ApiExport(const Catalog& catalog, const std::string& body,
                      EstimateCache* cache = nullptr);
ApiResponse ApiGpus(const Catalog& catalog);
ApiResponse ApiInstances(const Catalog& catalog, const QueryParams& params);
ApiResponse ApiModels(const Catalog& catalog);
// The workload fields a request accepts, from the parser's own table: name, help and what the
// parser accepts ("one of train, lora, ..."), so the web page builds its form from them.
ApiResponse ApiWorkloadFields();
ApiResponse ApiCatalog(const Catalog& catalog);
ApiResponse ApiError(int status, const std::string& message);

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_API_H_
