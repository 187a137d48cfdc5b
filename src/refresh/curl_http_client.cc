// HttpClient over libcurl. libcurl is opened with dlopen on first use: `catalog refresh` is the
// only command that talks to the network, and the others should not pay for loading it (or
// fail to start where it is missing). The types and constants come from <curl/curl.h>, whose
// ABI libcurl keeps stable within soname 4.
#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "refresh/dynamic_symbol.h"
#include "refresh/http_client.h"
#include "util/date.h"
#include "util/strings.h"

#if __has_include(<curl/curl.h>)
#include <curl/curl.h>
#define CLOUDFIT_HAVE_CURL_HEADERS 1
#endif

namespace cloudfit::refresh {

#ifdef CLOUDFIT_HAVE_CURL_HEADERS

namespace {

struct CurlApi {
  CURLcode (*global_init)(long flags) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

// Loads libcurl once per process; nullptr with the reason when it cannot.
const CurlApi* LoadCurl(std::string* error) {
  static std::once_flag once;
  static CurlApi api;
  static bool ok = false;
  static std::string why_not;
  std::call_once(once, [] {
    void* handle = nullptr;
    std::vector<std::string> tried;
    // The OpenSSL build first (Debian's libcurl4), then the other TLS flavours of soname 4.
    for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl-nss.so.4"}) {
      handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (handle != nullptr) break;
      const char* e = dlerror();
      tried.push_back(e != nullptr ? e : name);
    }
    if (handle == nullptr) {
      why_not = "cannot load libcurl (" + Join(tried, "; ") +
                "); install Debian's libcurl4 (apt-get install libcurl4)";
      return;
    }
    std::string missing;
    bool all = BindSymbol(handle, "curl_global_init", &api.global_init, &missing);
    all &= BindSymbol(handle, "curl_easy_init", &api.easy_init, &missing);
    all &= BindSymbol(handle, "curl_easy_setopt", &api.easy_setopt, &missing);
    all &= BindSymbol(handle, "curl_easy_perform", &api.easy_perform, &missing);
    all &= BindSymbol(handle, "curl_easy_getinfo", &api.easy_getinfo, &missing);
    all &= BindSymbol(handle, "curl_easy_cleanup", &api.easy_cleanup, &missing);
    all &= BindSymbol(handle, "curl_easy_strerror", &api.easy_strerror, &missing);
    all &= BindSymbol(handle, "curl_slist_append", &api.slist_append, &missing);
    all &= BindSymbol(handle, "curl_slist_free_all", &api.slist_free_all, &missing);
    if (!all) {
      why_not = "libcurl lacks " + missing;
      return;
    }
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      why_not = "curl_global_init failed";
      return;
    }
    ok = true;
  });
  if (!ok) *error = why_not;
  return ok ? &api : nullptr;
}

// What one transfer collects while curl runs.
struct Transfer {
  const CurlApi* api = nullptr;
  CURL* curl = nullptr;
  const BodySink* sink = nullptr;  // streaming when set
  size_t max_body_bytes = 0;
  HttpResponse* response = nullptr;
  bool over_limit = false;
  bool sink_stopped = false;

  bool Success() {
    if (response->status == 0) {
      long code = 0;
      api->easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
      response->status = static_cast<int>(code);
    }
    return response->ok();
  }
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t bytes = size * count;
  std::string_view chunk(data, bytes);
  if (t->sink != nullptr && t->Success()) {
    if (!(*t->sink)(chunk)) {
      t->sink_stopped = true;
      return 0;
    }
    return bytes;
  }
  if (t->response->body.size() + bytes > t->max_body_bytes) {
    t->over_limit = true;
    return 0;
  }
  t->response->body.append(chunk);
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  if (StartsWith(line, "HTTP/")) {
    t->response->headers.clear();  // a redirect or 100-continue: keep the last block only
    t->response->status = 0;
    return size * count;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response->headers[ToLower(Trim(line.substr(0, colon)))] =
        std::string(Trim(line.substr(colon + 1)));
  }
  return size * count;
}

class CurlHttpClient : public HttpClient {
 public:
  CurlHttpClient(const CurlApi* api, HttpLimits limits) : api_(api), limits_(limits) {}

  Status Send(const HttpRequest& request, HttpResponse* response) override {
    return Perform(request, nullptr, response);
  }
  Status Stream(const HttpRequest& request, const BodySink& sink, HttpResponse* response) override {
    return Perform(request, &sink, response);
  }

 private:
  Status Perform(const HttpRequest& request, const BodySink* sink, HttpResponse* response) {
    *response = HttpResponse();
    CURL* curl = api_->easy_init();
    if (curl == nullptr) return Status::IOError("curl_easy_init failed");
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
      headers = api_->slist_append(headers, (name + ": " + value).c_str());
    }
    Transfer t;
    t.api = api_;
    t.curl = curl;
    t.sink = sink;
    t.max_body_bytes = limits_.max_body_bytes;
    t.response = response;
    auto set = api_->easy_setopt;
    set(curl, CURLOPT_URL, request.url.c_str());
    set(curl, CURLOPT_HTTPHEADER, headers);
    set(curl, CURLOPT_NOSIGNAL, 1L);
    set(curl, CURLOPT_FOLLOWLOCATION, 1L);
    set(curl, CURLOPT_MAXREDIRS, 5L);
    set(curl, CURLOPT_USERAGENT, "cloudfit-catalog-refresh/0.1 (libcurl)");
    set(curl, CURLOPT_ACCEPT_ENCODING, "");  // gzip and deflate where the server offers them
    set(curl, CURLOPT_CONNECTTIMEOUT, limits_.connect_timeout_s);
    if (sink == nullptr) {
      set(curl, CURLOPT_TIMEOUT, limits_.timeout_s);
    } else {
      // Offer files take minutes; a stalled one is dropped rather than a slow one.
      set(curl, CURLOPT_LOW_SPEED_LIMIT, 1024L);
      set(curl, CURLOPT_LOW_SPEED_TIME, limits_.stall_timeout_s);
    }
    if (request.method == "POST") {
      set(curl, CURLOPT_POST, 1L);
      set(curl, CURLOPT_POSTFIELDS, request.body.c_str());
      set(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    } else if (request.method != "GET") {
      set(curl, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    set(curl, CURLOPT_WRITEFUNCTION, &OnBody);
    set(curl, CURLOPT_WRITEDATA, &t);
    set(curl, CURLOPT_HEADERFUNCTION, &OnHeader);
    set(curl, CURLOPT_HEADERDATA, &t);
    CURLcode code = api_->easy_perform(curl);
    t.Success();  // records the final status
    api_->easy_cleanup(curl);
    api_->slist_free_all(headers);
    response->fetched_days = TodayDays();

    if (code == CURLE_OK) return Status::OK();
    if (t.over_limit) {
      return Status::Corruption(fmt::format("the response is larger than the {} MiB allowed",
                                            limits_.max_body_bytes >> 20));
    }
    if (t.sink_stopped) return Status::Corruption("the reader stopped the transfer");
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT:
        return Status::IOError(
            sink ? fmt::format("stalled: under 1 KB/s for {} s", limits_.stall_timeout_s)
                 : fmt::format("timed out after {} s", limits_.timeout_s));
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
        return Status::IOError("truncated: the connection closed before the whole body arrived");
      default:
        return Status::IOError(api_->easy_strerror(code));
    }
  }

  const CurlApi* api_;
  HttpLimits limits_;
};

}  // namespace

std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpLimits& limits, std::string* error) {
  const CurlApi* api = LoadCurl(error);
  if (api == nullptr) return nullptr;
  return std::make_unique<CurlHttpClient>(api, limits);
}

#else  // no <curl/curl.h> at build time

std::unique_ptr<HttpClient> NewCurlHttpClient(const HttpLimits&, std::string* error) {
  *error =
      "cloudfit was built without libcurl's headers (Debian: libcurl4-openssl-dev); "
      "fetch elsewhere with --save-responses and import with --from-dir";
  return nullptr;
}

#endif

}  // namespace cloudfit::refresh
