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

#include "server/http_server_impl.h"
#include "server/http_writing.h"

namespace cloudfit {

HttpServer::Impl::Impl(HttpApplication* a, HttpServerOptions o) : app(a), options(std::move(o)) {
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeId;
  epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev);
}

HttpServer::Impl::~Impl() {
  workers.Stop();
  for (auto& [id, c] : connections) ::close(c->fd);
  if (listen_fd >= 0) ::close(listen_fd);
  if (wake_fd >= 0) ::close(wake_fd);
  if (epoll_fd >= 0) ::close(epoll_fd);
}

void HttpServer::Impl::Wake() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_fd, &one, sizeof(one));
  (void)ignored;
}

void HttpServer::Impl::SetInterest(Connection* c, bool read, bool write) {
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
void HttpServer::Impl::Close(Connection* c) {
  if (c->closed) return;
  c->closed = true;
  buffered_bytes -= c->held;
  c->held = 0;
  epoll_ctl(epoll_fd, EPOLL_CTL_DEL, c->fd, nullptr);
  ::close(c->fd);
  closed_ids.push_back(c->id);
}

void HttpServer::Impl::FreeClosed() {
  for (uint64_t id : closed_ids) connections.erase(id);
  closed_ids.clear();
}

void HttpServer::Impl::AcceptAll() {
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

void HttpServer::Impl::PauseListening(bool pause) {
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

void HttpServer::Impl::CheckDeadlines() {
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

void HttpServer::Impl::BeginStop() {
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

void HttpServer::Impl::Loop() {
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
  ev.data.u64 = Impl::kListenId;
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
