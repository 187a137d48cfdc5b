#include "refresh/http_client.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/strings.h"

namespace cloudfit::refresh {

namespace {

bool RetryableStatus(int status) { return status == 429 || (status >= 500 && status <= 599); }

// The server's Retry-After in seconds, or a negative number when it gives none (or a date).
double RetryAfterSeconds(const HttpResponse& response) {
  auto it = response.headers.find("retry-after");
  double seconds = -1;
  if (it == response.headers.end() || !ParseDouble(it->second, &seconds)) return -1;
  return seconds;
}

// A short, printable start of a body, for error messages (HTML error pages included).
std::string BodyExcerpt(std::string_view body) {
  std::string out;
  for (char c : body.substr(0, 200)) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
  if (body.size() > 200) out += "...";
  return std::string(Trim(out));
}

}  // namespace

std::string HttpRequest::key() const {
  if (!replay_key.empty()) return replay_key;
  return body.empty() ? method + " " + display_url() : method + " " + display_url() + " " + body;
}

RetryingHttpClient::RetryingHttpClient(HttpClient* transport, RetryPolicy policy,
                                       std::function<void(double)> sleep,
                                       std::function<void(const std::string&)> log)
    : transport_(transport), policy_(policy), sleep_(std::move(sleep)), log_(std::move(log)) {}

template <typename Attempt>
Status RetryingHttpClient::Retry(const HttpRequest& request, HttpResponse* response,
                                 Attempt attempt, const bool* delivered) {
  double backoff = policy_.initial_backoff_s;
  for (int i = 1;; ++i) {
    *response = HttpResponse();
    Status s = attempt();
    bool transport_failure = !s.ok() && s.code() == Status::Code::kIOError;
    bool retryable = transport_failure || (s.ok() && RetryableStatus(response->status));
    if (!retryable || i >= policy_.max_attempts || (delivered && *delivered)) return s;
    double wait = std::min(backoff, policy_.max_backoff_s);
    if (double after = RetryAfterSeconds(*response); after >= 0) {
      wait = std::min(after, policy_.max_backoff_s);
    }
    if (log_) {
      log_(fmt::format("  {} {}: {}; retrying in {:g} s (attempt {} of {})", request.method,
                       request.display_url(),
                       s.ok() ? fmt::format("HTTP {}", response->status) : s.message(), wait,
                       i + 1, policy_.max_attempts));
    }
    if (sleep_) sleep_(wait);
    backoff *= 2;
  }
}

Status RetryingHttpClient::Send(const HttpRequest& request, HttpResponse* response) {
  return Retry(request, response, [&] { return transport_->Send(request, response); }, nullptr);
}

Status RetryingHttpClient::Stream(const HttpRequest& request, const BodySink& sink,
                                  HttpResponse* response) {
  bool delivered = false;
  BodySink tracking = [&](std::string_view chunk) {
    delivered = true;
    return sink(chunk);
  };
  return Retry(request, response,
               [&] { return transport_->Stream(request, tracking, response); }, &delivered);
}

Status HttpStatusError(std::string_view provider, const HttpRequest& request,
                       const HttpResponse& response) {
  std::string excerpt = BodyExcerpt(response.body);
  return Status::IOError(fmt::format("{}: {} {}: HTTP {}{}{}", provider, request.method,
                                     request.display_url(), response.status,
                                     excerpt.empty() ? "" : ": ", excerpt));
}

Status FetchOk(HttpClient* http, std::string_view provider, const HttpRequest& request,
               HttpResponse* response) {
  Status s = http->Send(request, response);
  if (!s.ok()) {
    std::string message = fmt::format("{}: {} {}: {}", provider, request.method,
                                      request.display_url(), s.message());
    // A transport failure stays one (worth retrying later); anything else is bad input.
    return s.code() == Status::Code::kIOError ? Status::IOError(message)
                                              : Status::Corruption(message);
  }
  if (!response->ok()) return HttpStatusError(provider, request, *response);
  return Status::OK();
}

}  // namespace cloudfit::refresh
