#include "server/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "server/http_writing.h"
#include "server/worker_pool.h"

namespace cloudfit {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kListenId = 0;
constexpr uint64_t kWakeId = 1;
constexpr size_t kReadChunk = 64 * 1024;
// How often deadlines are checked: their resolution.
constexpr auto kTick = std::chrono::milliseconds(100);
// After an error response, unread request bytes are drained this long before closing, so the
// client reads the response instead of a reset. The byte bound is generous: what a client had in
// flight when the answer went out can be several MB (loopback socket buffers autotune to ~6 MB a
// side), draining costs one discarded read per 64 KB, and the time bound caps a client that
// never stops.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr size_t kLingerBytes = size_t{64} << 20;
Clock::duration Seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

std::string_view MethodLabel(std::string_view method) {
  for (std::string_view known : {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}) {
    if (method == known) return known;
  }
  return "OTHER";
}

}  // namespace

struct HttpServer::Impl {
  enum class Phase {
    kIdle,        // between requests: nothing of the next one received
    kReading,     // part of a request received
    kProcessing,  // a worker is answering
    kWriting,     // the response is going out
    kLingering,   // after an error response: draining what the client still sends, then close
  };

  struct Connection {
    uint64_t id = 0;
    int fd = -1;
    Phase phase = Phase::kIdle;
    HttpRequestParser parser;
    std::string in;  // received and not yet parsed: the start of the next pipelined request
    HttpRouteMatch match;
    bool matched = false;
    bool continue_sent = false;
    bool close_after_write = false;
    bool head_only = false;
    bool peer_closed = false;
    // Hung up while a worker answers: out of the epoll set, its socket kept open until the
    // worker is done with it (a closed descriptor could be reused by the next accept).
    bool hung_up = false;
    bool closed = false;  // closed and waiting to be freed at the end of the loop iteration
    int minor_version = 1;
    std::string method_label = "OTHER";
    Clock::time_point deadline;
    Clock::time_point request_done;
    size_t held = 0;  // request bytes counted in buffered_bytes
    size_t lingered = 0;
    // The response being written: a head and a body, possibly shared.
    std::string out_head;
    std::string out_body;
    std::shared_ptr<const std::string> out_shared;
    size_t out_offset = 0;
    bool want_write = false;
    bool want_read = true;

    explicit Connection(const HttpLimits& limits) : parser(limits) {}
    const std::string& body() const { return out_shared ? *out_shared : out_body; }
  };

  HttpApplication* app;
  HttpServerOptions options;
  int listen_fd = -1;
  int epoll_fd = -1;
  int wake_fd = -1;
  int bound_port = -1;
  bool listening_paused = false;
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections;
  std::vector<uint64_t> closed_ids;  // freed at the end of each loop iteration
  uint64_t next_id = 2;
  size_t buffered_bytes = 0;
  std::atomic<bool> stop_requested{false};
  bool stopping = false;

  HttpWorkerPool workers{[this](HttpJob* job) { Answer(job); }, [this] { Wake(); }};
  std::deque<HttpJob> not_handed;  // jobs the pool's busy lock kept out, oldest first
  std::vector<HttpJob> done;       // answered jobs taken from the pool, reused
  bool done_pending = false;       // answered jobs left behind by a busy lock

  Impl(HttpApplication* a, HttpServerOptions o) : app(a), options(std::move(o)) {
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kWakeId;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
  }

  ~Impl() {
    workers.Stop();
    for (auto& [id, c] : connections) ::close(c->fd);
    if (listen_fd >= 0) ::close(listen_fd);
    if (wake_fd >= 0) ::close(wake_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
  }

  void Wake() {
    uint64_t one = 1;
    ssize_t ignored = ::write(wake_fd, &one, sizeof(one));
    (void)ignored;
  }

  // --- Workers -------------------------------------------------------------------------------

  // What a worker does with a job: the application's answer, sent as far as the socket takes it.
  void Answer(HttpJob* job) {
    job->response = SafeHandle(job->request, job->match);
    Send(job);
  }

  // Sends a worker's response as far as the socket takes it now: the copy into the socket is
  // most of the cost of a large answer, and it is done here, below the I/O thread's priority.
  void Send(HttpJob* job) {
    const HttpResponse& r = job->response;
    app->Observe(job->method_label, job->match.label.empty() ? "unrouted" : job->match.label,
                 r.status, std::chrono::duration<double>(Clock::now() - job->request_done).count());
    const std::string& body = r.shared_body ? *r.shared_body : r.body;
    job->close_after_write = job->close_after_write || stop_requested;
    job->head = HttpResponseHead(r, body.size(), job->close_after_write, job->minor_version);
    std::string_view sent_body = job->head_only ? std::string_view() : std::string_view(body);
    job->broken =
        SendResponseBytes(job->fd, job->head, sent_body, &job->sent) == SendProgress::kBroken;
    if (!job->broken && job->sent == job->head.size() + sent_body.size()) {
      // All sent: what is left to write is nothing, and the response's memory is freed here, on
      // the thread that allocated it. Freed on the I/O thread, a large body goes back to this
      // worker's malloc arena under that arena's lock, and a free of 64 KB or more consolidates
      // the arena's small free chunks first (glibc): profiled under load, 10% of the I/O
      // thread's time, and the lock contended with the workers.
      std::string().swap(job->response.body);
      std::string().swap(job->head);
      job->sent = 0;
    }
  }

  HttpResponse SafeHandle(const HttpRequest& request, const HttpRouteMatch& match) {
    try {
      return app->Handle(request, match);
    } catch (const std::exception& e) {
      return ErrorResponse(500, std::string("internal error: ") + e.what());
    } catch (...) {
      return ErrorResponse(500, "internal error");
    }
  }

  HttpResponse ErrorResponse(int status, const std::string& message) {
    HttpResponse r;
    r.status = status;
    r.body = app->ErrorBody(status, message);
    if (status == 503) r.headers.emplace_back("Retry-After", "1");
    return r;
  }

  // --- Sockets -------------------------------------------------------------------------------

  void SetInterest(Connection* c, bool read, bool write) {
    if (c->closed || (c->want_read == read && c->want_write == write)) return;
    c->want_read = read;
    c->want_write = write;
    epoll_event ev{};
    // A half-close is watched only while reading; otherwise it would fire again and again.
    uint32_t events = 0;
    if (read) events |= EPOLLIN | EPOLLRDHUP;
    if (write) events |= EPOLLOUT;
    ev.events = events;
    ev.data.u64 = c->id;
    epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
  }

  // Closes the socket now and frees the connection at the end of the loop iteration, so a
  // caller up the stack may still look at it (c->closed).
  void Close(Connection* c) {
    if (c->closed) return;
    c->closed = true;
    buffered_bytes -= c->held;
    c->held = 0;
    epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
    ::close(c->fd);
    closed_ids.push_back(c->id);
  }

  void FreeClosed() {
    for (uint64_t id : closed_ids) connections.erase(id);
    closed_ids.clear();
  }

  void AcceptAll() {
    while (true) {
      int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: stop accepting for a tick instead of spinning.
          PauseListening(true);
        }
        return;
      }
      if (connections.size() >= options.max_connections || stopping) {
        // Refused quickly: a short answer and close, never a wait.
        std::string body = app->ErrorBody(503, "server busy: too many connections");
        std::string response = fmt::format(
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
            "Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{}",
            body.size(), body);
        ssize_t ignored = ::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        (void)ignored;
        ::close(fd);
        app->Observe("OTHER", "unrouted", 503, 0);
        continue;
      }
      int yes = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
      auto c = std::make_unique<Connection>(options.limits);
      c->id = next_id++;
      c->fd = fd;
      c->deadline = Clock::now() + Seconds(options.idle_timeout_s);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.u64 = c->id;
      if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        ::close(fd);
        continue;
      }
      Connection* added = c.get();
      connections.emplace(c->id, std::move(c));
      // The request often follows the handshake at once: answered now if it is there (a
      // health check in the same loop turn), else when epoll says so.
      OnReadable(added);
    }
  }

  void PauseListening(bool pause) {
    if (listen_fd < 0 || listening_paused == pause) return;
    listening_paused = pause;
    if (pause) {
      epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listen_fd, nullptr);
    } else {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = kListenId;
      epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev);
    }
  }

  // --- Reading and parsing -------------------------------------------------------------------

  void OnReadable(Connection* c) {
    char buffer[kReadChunk];
    while (!c->closed) {
      ssize_t n = ::recv(c->fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        if (c->phase == Phase::kLingering) {
          c->lingered += static_cast<size_t>(n);
          if (c->lingered > kLingerBytes) Close(c);
          continue;
        }
        c->in.append(buffer, static_cast<size_t>(n));
        // Parse before reading more, so limits apply before bytes pile up; stop reading once a
        // request is being answered (the rest waits in the kernel: back-pressure).
        Process(c);
        if (c->closed || (c->phase != Phase::kIdle && c->phase != Phase::kReading)) return;
        if (static_cast<size_t>(n) < sizeof(buffer)) return;
        continue;
      }
      if (n == 0) {
        c->peer_closed = true;
        // The client finished sending and nothing is pending for it: done.
        if (c->phase == Phase::kIdle || c->phase == Phase::kReading ||
            c->phase == Phase::kLingering) {
          Close(c);
        } else {
          SetInterest(c, false, c->want_write);
        }
        return;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      Close(c);  // reset by the peer
    }
  }

  // Parses what was received and answers every complete request in it, in order, until one
  // goes to a worker or must wait for its response to be written.
  void Process(Connection* c) {
    while (!c->closed && (c->phase == Phase::kIdle || c->phase == Phase::kReading) &&
           !c->in.empty()) {
      Clock::time_point now = Clock::now();
      if (c->phase == Phase::kIdle) {
        c->phase = Phase::kReading;
        c->deadline = now + Seconds(options.header_timeout_s);
      }
      size_t consumed = c->parser.Feed(c->in);
      c->in.erase(0, consumed);
      size_t held = c->parser.bytes_received();
      buffered_bytes += held - c->held;
      c->held = held;
      HttpRequestParser::State state = c->parser.state();
      if (state == HttpRequestParser::State::kError) {
        RespondAndClose(c, c->parser.error_status(), c->parser.error_message());
        return;
      }
      if (state != HttpRequestParser::State::kHeaders && !c->matched) {
        MatchRoute(c);
        c->deadline = now + Seconds(options.body_timeout_s);
        if (state == HttpRequestParser::State::kBody && c->parser.request().expect_continue) {
          static const char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
          ssize_t ignored = ::send(c->fd, kContinue, sizeof(kContinue) - 1, MSG_NOSIGNAL);
          (void)ignored;
        }
      }
      if (buffered_bytes > options.max_buffered_bytes) {
        RespondAndClose(c, 503, "server busy: too many request bytes held; retry shortly");
        return;
      }
      if (state == HttpRequestParser::State::kComplete) {
        Dispatch(c);  // may answer at once and come back to kIdle for the next request
        continue;
      }
      if (consumed == 0) break;
    }
  }

  void MatchRoute(Connection* c) {
    c->matched = true;
    c->match = app->Match(c->parser.request());
    c->method_label = std::string(MethodLabel(c->parser.request().method));
  }

  void Dispatch(Connection* c) {
    c->request_done = Clock::now();
    HttpRequest& request = c->parser.mutable_request();
    c->head_only = request.method == "HEAD";
    c->minor_version = request.minor_version;
    c->close_after_write = !request.keep_alive || stopping;
    if (c->match.inline_ok) {
      StartResponse(c, SafeHandle(request, c->match));
      return;
    }
    HttpJob job;
    job.connection = c->id;
    job.request = std::move(request);
    job.match = c->match;
    job.fd = c->fd;
    job.head_only = c->head_only;
    job.close_after_write = c->close_after_write;
    job.minor_version = c->minor_version;
    job.request_done = c->request_done;
    job.method_label = c->method_label;
    // Jobs not yet handed to the pool (its lock was busy) go first, in order.
    HttpWorkerPool::Handed handed = HttpWorkerPool::Handed::kBusy;
    if (not_handed.empty()) {
      handed = workers.TrySubmit(&job, options.max_queued);
    } else if (not_handed.size() >= options.max_queued) {
      handed = HttpWorkerPool::Handed::kFull;
    }
    if (handed == HttpWorkerPool::Handed::kFull) {
      RespondQueueFull(c);
      return;
    }
    if (handed == HttpWorkerPool::Handed::kBusy) not_handed.push_back(std::move(job));
    c->phase = Phase::kProcessing;
    SetInterest(c, false, false);
  }

  void RespondQueueFull(Connection* c) {
    StartResponse(c, ErrorResponse(503, "server busy: too many requests waiting; retry shortly"));
  }

  // Hands the pool what it could not take before and takes what it answered, without waiting
  // for its lock (worker_pool.h says why). True when all of it went through; else the loop
  // comes back within a millisecond.
  bool HandOff() {
    while (!not_handed.empty()) {
      HttpWorkerPool::Handed handed = workers.TrySubmit(&not_handed.front(), options.max_queued);
      if (handed == HttpWorkerPool::Handed::kBusy) break;
      if (handed == HttpWorkerPool::Handed::kFull) {
        // The queue filled meanwhile: answered as a full queue is at once.
        auto it = connections.find(not_handed.front().connection);
        if (it != connections.end() && !it->second->closed) {
          Connection* c = it->second.get();
          if (c->hung_up) {
            Close(c);
          } else {
            RespondQueueFull(c);
          }
        }
      }
      not_handed.pop_front();
    }
    if (done_pending) DrainDone();
    return not_handed.empty() && !done_pending;
  }

  void DrainDone() {
    done.clear();
    done_pending = !workers.TryTakeDone(&done);
    for (HttpJob& job : done) {
      auto it = connections.find(job.connection);
      if (it == connections.end() || it->second->closed) continue;
      Connection* c = it->second.get();
      if (c->hung_up) {  // the client went away while the worker answered
        Close(c);
        continue;
      }
      c->close_after_write = c->close_after_write || job.close_after_write;
      const bool broken = job.broken;
      ContinueResponse(c, std::move(job.head), std::move(job.response), job.sent);
      if (broken) {
        Close(c);
        continue;
      }
      Process(c);  // pipelined requests that arrived meanwhile
    }
  }

  // --- Writing -------------------------------------------------------------------------------

  void RespondAndClose(Connection* c, int status, const std::string& message) {
    c->close_after_write = true;
    c->request_done = Clock::now();
    c->head_only = false;
    c->minor_version = c->parser.request().minor_version;
    // Counted under its route when the request line got that far (a 413 on /v1/recommend).
    if (!c->matched && !c->parser.request().path.empty()) MatchRoute(c);
    if (!c->matched) c->method_label = "OTHER";
    StartResponse(c, ErrorResponse(status, message));
  }

  void Observe(Connection* c, int status, double seconds) {
    app->Observe(c->method_label, c->match.label.empty() ? "unrouted" : c->match.label, status,
                 seconds);
  }

  void StartResponse(Connection* c, HttpResponse response) {
    Observe(c, response.status,
            std::chrono::duration<double>(Clock::now() - c->request_done).count());
    if (stopping) c->close_after_write = true;
    const std::string& body = response.shared_body ? *response.shared_body : response.body;
    std::string head =
        HttpResponseHead(response, body.size(), c->close_after_write, c->minor_version);
    ContinueResponse(c, std::move(head), std::move(response), 0);
  }

  // Writes a response whose first `sent` bytes (of head and body together) are already sent.
  void ContinueResponse(Connection* c, std::string head, HttpResponse response, size_t sent) {
    c->out_head = std::move(head);
    c->out_body.clear();
    c->out_shared.reset();
    if (!c->head_only) {
      if (response.shared_body)
        c->out_shared = std::move(response.shared_body);
      else
        c->out_body = std::move(response.body);
    }
    c->out_offset = sent;
    c->phase = Phase::kWriting;
    c->deadline = Clock::now() + Seconds(options.write_timeout_s);
    // The request's bytes are answered: they no longer count as held.
    buffered_bytes -= c->held;
    c->held = 0;
    SetInterest(c, false, false);
    OnWritable(c);
  }

  void OnWritable(Connection* c) {
    if (c->phase != Phase::kWriting) return;
    switch (SendResponseBytes(c->fd, c->out_head, c->body(), &c->out_offset)) {
      case SendProgress::kDone:
        return FinishResponse(c);
      case SendProgress::kWouldBlock:
        return SetInterest(c, false, true);
      case SendProgress::kBroken:
        return Close(c);
    }
  }

  void FinishResponse(Connection* c) {
    c->out_head.clear();
    c->out_body.clear();
    c->out_shared.reset();
    if (c->peer_closed) return Close(c);
    if (c->close_after_write) {
      // Stop sending, then read and drop what the client still sends for a moment, so it sees
      // the response rather than a reset.
      ::shutdown(c->fd, SHUT_WR);
      c->phase = Phase::kLingering;
      // Stopping, the wait is short: the process is about to go.
      c->deadline = Clock::now() + (stopping ? kLingerTime / 10 : kLingerTime);
      SetInterest(c, true, false);
      return;
    }
    c->parser.Reset();
    c->matched = false;
    c->match = HttpRouteMatch();
    c->phase = Phase::kIdle;
    c->deadline = Clock::now() + Seconds(options.idle_timeout_s);
    SetInterest(c, true, false);
  }

  // --- Deadlines and stopping ----------------------------------------------------------------

  void CheckDeadlines() {
    Clock::time_point now = Clock::now();
    std::vector<Connection*> late;
    for (auto& [id, c] : connections) {
      if (c->phase != Phase::kProcessing && now > c->deadline) late.push_back(c.get());
    }
    for (Connection* c : late) {
      if (c->closed) continue;
      switch (c->phase) {
        case Phase::kIdle:
        case Phase::kWriting:
        case Phase::kLingering:
          Close(c);
          break;
        case Phase::kReading:
          RespondAndClose(
              c, 408,
              c->matched
                  ? fmt::format("body: not received within {} s", options.body_timeout_s)
                  : fmt::format("headers: not received within {} s", options.header_timeout_s));
          break;
        case Phase::kProcessing:
          break;
      }
    }
    if (listening_paused && !stopping) PauseListening(false);
  }

  void BeginStop() {
    stopping = true;
    if (listen_fd >= 0) {
      PauseListening(true);
      ::close(listen_fd);
      listen_fd = -1;
    }
    std::vector<Connection*> idle;
    for (auto& [id, c] : connections) {
      if (c->phase == Phase::kIdle || c->phase == Phase::kReading)
        idle.push_back(c.get());
      else
        c->close_after_write = true;
    }
    for (Connection* c : idle) Close(c);
    FreeClosed();
  }

  void Loop() {
    workers.Start(options.workers, options.idle_workers);
    epoll_event events[256];
    Clock::time_point next_tick = Clock::now() + kTick;
    Clock::time_point stop_deadline;
    while (true) {
      if (stop_requested && !stopping) {
        BeginStop();
        stop_deadline = Clock::now() + Seconds(options.write_timeout_s) + kLingerTime;
      }
      if (stopping && (connections.empty() || Clock::now() > stop_deadline)) break;
      int timeout = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - Clock::now()).count());
      // Sleep, not spin, while the pool's lock is busy: its holder needs the core.
      if (!HandOff()) timeout = std::min(timeout, 1);
      int n = epoll_wait(epoll_fd, events, 256, std::max(0, timeout));
      // New connections first: a health probe connects afresh each time, and must not wait
      // behind a batch of busy keep-alive connections.
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 == kListenId) AcceptAll();
      }
      for (int i = 0; i < n; ++i) {
        uint64_t id = events[i].data.u64;
        if (id == kListenId) continue;
        if (id == kWakeId) {
          uint64_t count = 0;
          ssize_t ignored = ::read(wake_fd, &count, sizeof(count));
          (void)ignored;
          DrainDone();
          FreeClosed();
          continue;
        }
        auto it = connections.find(id);
        if (it == connections.end() || it->second->closed) continue;
        Connection* c = it->second.get();
        uint32_t e = events[i].events;
        if (e & EPOLLOUT) {
          OnWritable(c);
          if (!c->closed && c->phase == Phase::kIdle) Process(c);  // pipelined requests
          if (c->closed) continue;
        }
        if ((e & (EPOLLHUP | EPOLLERR)) && c->phase == Phase::kProcessing) {
          // Nobody left to answer: the worker's result is dropped when it comes back, and the
          // socket, which the worker may be writing, is closed then.
          if (!c->hung_up) epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
          c->hung_up = true;
          continue;
        }
        if (e & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) OnReadable(c);
      }
      FreeClosed();
      if (Clock::now() >= next_tick) {
        CheckDeadlines();
        FreeClosed();
        next_tick = Clock::now() + kTick;
      }
    }
    workers.Stop();  // first: a worker may be writing to a connection's socket
    for (auto& [id, c] : connections) ::close(c->fd);
    connections.clear();
  }
};

HttpServer::HttpServer(HttpApplication* app, HttpServerOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {}

HttpServer::~HttpServer() = default;

bool HttpServer::Bind(std::string* error) {
  Impl& i = *impl_;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(i.options.port);
  int rc = getaddrinfo(i.options.host.c_str(), port.c_str(), &hints, &found);
  auto fail = [&](const std::string& why) {
    *error = fmt::format("cannot listen on {}:{}: {} (--port 0 picks a free port)", i.options.host,
                         i.options.port, why);
    if (found != nullptr) freeaddrinfo(found);
    return false;
  };
  if (rc != 0) return fail(gai_strerror(rc));
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(std::strerror(errno));
  // SO_REUSEADDR restarts cleanly after a stop; without SO_REUSEPORT a port in use is an error
  // rather than a second server silently sharing it.
  int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
    std::string why = std::strerror(errno);
    ::close(fd);
    return fail(why);
  }
  freeaddrinfo(found);
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  i.bound_port = address.ss_family == AF_INET6
                     ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                     : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  i.listen_fd = fd;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenId;
  epoll_ctl(i.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  return true;
}

int HttpServer::port() const { return impl_->bound_port; }

void HttpServer::Serve() { impl_->Loop(); }

void HttpServer::Stop() {
  impl_->stop_requested = true;
  impl_->Wake();
}

}  // namespace cloudfit
