#include "cloudfit/server.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/socket.h>

#include <httplib.h>

#include "catalog/embedded_data.h"
#include "server/api.h"
#include "server/metrics.h"
#include "util/strings.h"

namespace cloudfit {

namespace {

// A fixed pool of workers with a bounded queue: when every worker is busy and the queue is
// full, the accepting thread waits, so connections back up in the kernel's listen queue instead
// of memory growing without bound.
class BoundedTaskQueue : public httplib::TaskQueue {
 public:
  BoundedTaskQueue(int threads, int max_queued) : max_queued_(static_cast<size_t>(max_queued)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
  }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return queue_.size() < max_queued_ || shutdown_; });
    if (shutdown_) return;
    queue_.push_back(std::move(fn));
    ready_.notify_one();
  }

  // Finishes every queued and running request, then joins the workers.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    ready_.notify_all();
    room_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void Work() {
    while (true) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [&] { return !queue_.empty() || shutdown_; });
        if (queue_.empty()) return;  // shut down and drained
        fn = std::move(queue_.front());
        queue_.pop_front();
        room_.notify_one();
      }
      fn();
    }
  }

  size_t max_queued_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> workers_;
  bool shutdown_ = false;
};

const EmbeddedFile* WebFile(const std::string& name) {
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    if (name == f.path) return &f;
  }
  return nullptr;
}

std::string ContentType(const std::string& name) {
  if (EndsWith(name, ".html")) return "text/html; charset=utf-8";
  if (EndsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (EndsWith(name, ".css")) return "text/css; charset=utf-8";
  return "application/json";
}

}  // namespace

struct ApiServer::Impl {
  const Catalog& catalog;
  ServerOptions options;
  httplib::Server http;
  Metrics metrics;
  int port = -1;
  // httplib's stop() does nothing until listen has begun, so a Stop() that races a Serve()
  // just starting would be lost; these two flags close that gap.
  std::atomic<bool> serve_entered{false};
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> serve_returned{false};

  Impl(const Catalog& c, ServerOptions o) : catalog(c), options(std::move(o)) {}

  void Send(httplib::Response& res, const ApiResponse& r) {
    res.status = r.status;
    res.set_content(r.body, r.content_type.c_str());
  }

  // Registers a route whose requests are counted and timed under its pattern.
  template <typename Handler>
  void Route(const char* method, const std::string& pattern, Handler handler) {
    auto wrapped = [this, method, pattern, handler](const httplib::Request& req,
                                                    httplib::Response& res) {
      auto start = std::chrono::steady_clock::now();
      handler(req, res);
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      metrics.Record(method, pattern, res.status, s);
    };
    if (std::string(method) == "GET") http.Get(pattern, wrapped);
    else http.Post(pattern, wrapped);
  }

  void Routes() {
    Route("GET", "/healthz", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, {200, R"({"status":"ok"})", "application/json"});
    });
    Route("GET", "/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(metrics.Prometheus(), "text/plain; version=0.0.4");
    });
    Route("GET", "/v1/gpus", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, ApiGpus(catalog));
    });
    Route("GET", "/v1/models", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, ApiModels(catalog));
    });
    Route("GET", "/v1/workload-fields", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, ApiWorkloadFields());
    });
    Route("GET", "/v1/catalog", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, ApiCatalog(catalog));
    });
    Route("GET", "/v1/instances", [this](const httplib::Request& req, httplib::Response& res) {
      QueryParams params(req.params.begin(), req.params.end());
      Send(res, ApiInstances(catalog, params));
    });
    Route("POST", "/v1/recommend", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, ApiRecommend(catalog, req.body));
    });
    Route("POST", "/v1/estimate", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, ApiEstimate(catalog, req.body));
    });
    Route("POST", "/v1/export", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, ApiExport(catalog, req.body));
    });
    // The page and the API description, from memory: nothing is served from the disk.
    for (const char* name : {"index.html", "form.js", "app.js", "style.css", "openapi.json"}) {
      std::string path = std::string("/") + (std::string(name) == "index.html" ? "" : name);
      std::string file = name;
      Route("GET", path, [this, file](const httplib::Request&, httplib::Response& res) {
        const EmbeddedFile* f = WebFile(file);
        if (f == nullptr) return Send(res, ApiError(404, "not found"));
        res.set_content(std::string(f->data, f->size), ContentType(file).c_str());
      });
    }
    http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (res.status == 404 && res.body.empty()) {
        Send(res, ApiError(404, "no route " + req.method + " " + req.path));
        metrics.Record(req.method, "unmatched", 404, 0);
      } else if (res.status == 413) {
        Send(res, ApiError(413, "body: larger than the limit of " +
                                    std::to_string(options.max_body_bytes) + " bytes"));
        metrics.Record(req.method, req.path, 413, 0);
      } else if (res.body.empty()) {
        Send(res, ApiError(res.status, "request failed"));
      }
    });
    http.set_exception_handler([this](const httplib::Request&, httplib::Response& res,
                                      std::exception_ptr) { Send(res, ApiError(500, "internal error")); });
  }
};

ApiServer::ApiServer(const Catalog& catalog, ServerOptions options)
    : impl_(std::make_unique<Impl>(catalog, std::move(options))) {
  Impl& i = *impl_;
  i.http.set_payload_max_length(i.options.max_body_bytes);
  i.http.set_read_timeout(i.options.read_timeout_s, 0);
  i.http.set_write_timeout(i.options.write_timeout_s, 0);
  // A worker serves one connection at a time, so a long keep-alive lets a few clients starve
  // the rest: hand the worker back after a few requests or a short idle spell.
  i.http.set_keep_alive_max_count(8);
  i.http.set_keep_alive_timeout(2);
  // Headers and body go out in separate writes; with Nagle's algorithm the body then waits for
  // the client's delayed ACK, about 40 ms per keep-alive request.
  i.http.set_tcp_nodelay(true);
  // httplib's default sets SO_REUSEPORT, which lets a second server on the same port start
  // "successfully" and take half the traffic. SO_REUSEADDR alone restarts cleanly yet makes a
  // port already in use an error.
  i.http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  int threads = std::max(1, i.options.threads);
  int queued = std::max(1, i.options.max_queued);
  i.http.new_task_queue = [threads, queued] { return new BoundedTaskQueue(threads, queued); };
  i.Routes();
}

ApiServer::~ApiServer() = default;

bool ApiServer::Bind(std::string* error) {
  Impl& i = *impl_;
  if (i.options.port == 0) {
    i.port = i.http.bind_to_any_port(i.options.host);
  } else if (i.http.bind_to_port(i.options.host, i.options.port)) {
    i.port = i.options.port;
  }
  if (i.port <= 0) {
    *error = "cannot listen on " + i.options.host + ":" + std::to_string(i.options.port) +
             " (address in use or not local; --port 0 picks a free port)";
    return false;
  }
  return true;
}

int ApiServer::port() const { return impl_->port; }

void ApiServer::Serve() {
  Impl& i = *impl_;
  i.serve_entered = true;
  if (!i.stop_requested) i.http.listen_after_bind();
  i.serve_returned = true;
}

void ApiServer::Stop() {
  Impl& i = *impl_;
  i.stop_requested = true;
  if (i.serve_entered) {
    // Serve() has begun or is about to: wait until httplib is listening (or Serve returned),
    // then close the socket so accept() wakes up.
    while (!i.http.is_running() && !i.serve_returned) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  i.http.stop();
}

}  // namespace cloudfit
