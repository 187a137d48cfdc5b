// HTTP request handling as `cloudfit serve` does it, without sockets: bytes arrive in pieces of
// the size the first byte says, the parser frames requests (pipelined ones included), the
// application routes and answers each, and every response, errors included, is valid JSON
// where it says so. Served over the small fixture catalog so recommendations stay quick.
#include "fuzz_support.h"
#include "server/api_application.h"
#include "server/http_parser.h"

using namespace cloudfit;

namespace {

void CheckResponse(const HttpResponse& r) {
  fuzz::Require(r.status >= 200 && r.status < 600, "a status code");
  if (r.content_type == "application/json") {
    fuzz::RequireJson(r.shared_body ? *r.shared_body : r.body, "a JSON response is valid JSON");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ApiApplication* app = new ApiApplication(fuzz::Fixture());
  if (size == 0) return 0;
  size_t piece = 1 + data[0];
  std::string_view input = fuzz::AsText(data + 1, size - 1);
  HttpLimits limits;
  limits.max_body_bytes = 64 * 1024;
  HttpRequestParser parser(limits);
  std::string pending;
  int answered = 0;
  for (size_t at = 0; at < input.size() && answered < 8;) {
    size_t take = std::min(piece, input.size() - at);
    pending.append(input.substr(at, take));
    at += take;
    while (!pending.empty() && answered < 8) {
      size_t consumed = parser.Feed(pending);
      pending.erase(0, consumed);
      if (parser.state() == HttpRequestParser::State::kError) {
        fuzz::Require(parser.error_status() >= 400 && parser.error_status() < 600,
                      "a parser error is a 4xx or 5xx");
        fuzz::RequireJson(app->ErrorBody(parser.error_status(), parser.error_message()),
                          "an error body is valid JSON");
        app->Observe("OTHER", "unrouted", parser.error_status(), 0);
        return 0;
      }
      if (parser.state() != HttpRequestParser::State::kComplete) break;
      const HttpRequest& request = parser.request();
      HttpRouteMatch match = app->Match(request);
      fuzz::Require(!match.label.empty() && match.label.size() < 64, "a route label is a template");
      CheckResponse(app->Handle(request, match));
      app->Observe("GET", match.label, 200, 0);
      ++answered;
      parser.Reset();
    }
  }
  return 0;
}
