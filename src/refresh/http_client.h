// HTTP for the price refresh: one small interface, so the providers' code runs unchanged over
// libcurl, over responses saved to a directory, or against a test server. Retries with
// exponential backoff wrap any transport.
#ifndef CLOUDFIT_REFRESH_HTTP_CLIENT_H_
#define CLOUDFIT_REFRESH_HTTP_CLIENT_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cloudfit/status.h"

namespace cloudfit::refresh {

struct HttpRequest {
  std::string method = "GET";
  std::string url;
  // Sent, never logged or saved (they carry signatures and keys).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // What names the request in messages and saved responses: the URL without signatures,
  // keys or timestamps. Empty: `url`.
  std::string shown_url;
  // What identifies the request among saved responses: stable across runs, so without
  // timestamps, nonces or signatures. Empty: method, shown URL and body.
  std::string replay_key;

  const std::string& display_url() const { return shown_url.empty() ? url : shown_url; }
  std::string key() const;
};

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;  // empty after a successful Stream
  int fetched_days = 0;  // the day the provider served it (days since 1970-01-01)

  bool ok() const { return status >= 200 && status < 300; }
};

// Receives a streamed body piece by piece; returns false to stop the transfer.
using BodySink = std::function<bool(std::string_view chunk)>;

struct HttpLimits {
  long connect_timeout_s = 30;
  long timeout_s = 300;        // a whole non-streamed request
  long stall_timeout_s = 120;  // a stream that moves under 1 KB/s this long is dropped
  size_t max_body_bytes = size_t{512} << 20;  // non-streamed bodies (streams have no limit)
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // One request. Any HTTP status comes back in `response`; a Status error means no usable
  // answer: the connection failed or timed out (IOError, worth retrying), the body was cut
  // short (IOError), or it broke the byte limit (Corruption).
  virtual Status Send(const HttpRequest& request, HttpResponse* response) = 0;
  // The same, but a 2xx body goes to `sink` as it arrives instead of into response->body.
  virtual Status Stream(const HttpRequest& request, const BodySink& sink,
                        HttpResponse* response) = 0;
};

// libcurl, opened with dlopen on first use so that commands which never fetch do not load it.
// Returns nullptr and explains in `error` when no libcurl can be opened.
std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpLimits& limits, std::string* error);

struct RetryPolicy {
  int max_attempts = 5;
  double initial_backoff_s = 1;
  double max_backoff_s = 60;
};

// Retries transport failures, HTTP 429 and 5xx with exponential backoff (1, 2, 4, ... s, or
// the server's Retry-After when it gives seconds). A stream is retried only while nothing of
// it has reached the sink. `sleep` waits (tests pass one that only records); `log` gets one
// line per retry.
class RetryingHttpClient : public HttpClient {
 public:
  RetryingHttpClient(HttpClient* transport, RetryPolicy policy,
                     std::function<void(double seconds)> sleep,
                     std::function<void(const std::string&)> log);
  Status Send(const HttpRequest& request, HttpResponse* response) override;
  Status Stream(const HttpRequest& request, const BodySink& sink, HttpResponse* response) override;

 private:
  template <typename Attempt>
  Status Retry(const HttpRequest& request, HttpResponse* response, Attempt attempt,
               const bool* delivered);

  HttpClient* transport_;
  RetryPolicy policy_;
  std::function<void(double)> sleep_;
  std::function<void(const std::string&)> log_;
};

// "provider: GET url: HTTP 403: <start of the body>" for a response that is not 2xx.
Status HttpStatusError(std::string_view provider, const HttpRequest& request,
                       const HttpResponse& response);

// Sends and insists on a 2xx answer; errors name the provider and the URL.
Status FetchOk(HttpClient* http, std::string_view provider, const HttpRequest& request,
               HttpResponse* response);

}  // namespace cloudfit::refresh

#endif  // CLOUDFIT_REFRESH_HTTP_CLIENT_H_
