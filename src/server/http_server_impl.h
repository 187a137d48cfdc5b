// The HTTP server's state and the steps of its loop, shared by the two files that define them:
// http_server.cc holds the loop, the sockets and the deadlines, http_exchange.cc what happens
// on a connection (reading and parsing a request, a worker's answer, writing the response).
// server/http_server.h is the interface; only those two files include this.
#ifndef CLOUDFIT_SERVER_HTTP_SERVER_IMPL_H_
#define CLOUDFIT_SERVER_HTTP_SERVER_IMPL_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/http_server.h"
#include "server/worker_pool.h"

namespace cloudfit {

struct HttpServer::Impl {
  using Clock = std::chrono::steady_clock;

  static constexpr uint64_t kListenId = 0;
  static constexpr uint64_t kWakeId = 1;
  static constexpr size_t kReadChunk = 64 * 1024;
  // How often deadlines are checked: their resolution.
  static constexpr auto kTick = std::chrono::milliseconds(100);
  // After an error response, unread request bytes are drained this long before closing, so the
  // client reads the response instead of a reset. The byte bound is generous: what a client had in
  // flight when the answer went out can be several MB (loopback socket buffers autotune to ~6 MB a
  // side), draining costs one discarded read per 64 KB, and the time bound caps a client that
  // never stops.
  static constexpr auto kLingerTime = std::chrono::seconds(2);
  static constexpr size_t kLingerBytes = size_t{64} << 20;
  static Clock::duration Seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

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

  Impl(HttpApplication* a, HttpServerOptions o);
  ~Impl();
  void Wake();

  // http_exchange.cc: a worker's answer.
  void Answer(HttpJob* job);
  void Send(HttpJob* job);
  HttpResponse SafeHandle(const HttpRequest& request, const HttpRouteMatch& match);
  HttpResponse ErrorResponse(int status, const std::string& message);

  // http_server.cc: sockets.
  void SetInterest(Connection* c, bool read, bool write);
  void Close(Connection* c);
  void FreeClosed();
  void AcceptAll();
  void PauseListening(bool pause);

  // http_exchange.cc: reading and parsing, and handing requests to the workers.
  void OnReadable(Connection* c);
  void Process(Connection* c);
  void MatchRoute(Connection* c);
  void Dispatch(Connection* c);
  void RespondQueueFull(Connection* c);
  bool HandOff();
  void DrainDone();

  // http_exchange.cc: writing.
  void RespondAndClose(Connection* c, int status, const std::string& message);
  void Observe(Connection* c, int status, double seconds);
  void StartResponse(Connection* c, HttpResponse response);
  void ContinueResponse(Connection* c, std::string head, HttpResponse response, size_t sent);
  void OnWritable(Connection* c);
  void FinishResponse(Connection* c);

  // http_server.cc: deadlines, stopping and the loop.
  void CheckDeadlines();
  void BeginStop();
  void Loop();
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_HTTP_SERVER_IMPL_H_
