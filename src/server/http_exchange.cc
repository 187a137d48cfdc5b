#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include "server/http_server_impl.h"
#include "server/http_writing.h"

namespace cloudfit {

namespace {

std::string_view MethodLabel(std::string_view method) {
  for (std::string_view known : {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"}) {
    if (method == known) return known;
  }
  return "OTHER";
}

}  // namespace

// What a worker does with a job: the application's answer, sent as far as the socket takes it.
void HttpServer::Impl::Answer(HttpJob* job) {
  job->response = SafeHandle(job->request, job->match);
  Send(job);
}

// Sends a worker's response as far as the socket takes it now: the copy into the socket is
// most of the cost of a large answer, and it is done here, below the I/O thread's priority.
void HttpServer::Impl::Send(HttpJob* job) {
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

HttpResponse HttpServer::Impl::SafeHandle(const HttpRequest& request, const HttpRouteMatch& match) {
  try {
    return app->Handle(request, match);
  } catch (const std::exception& e) {
    return ErrorResponse(500, std::string("internal error: ") + e.what());
  } catch (...) {
    return ErrorResponse(500, "internal error");
  }
}

HttpResponse HttpServer::Impl::ErrorResponse(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.body = app->ErrorBody(status, message);
  if (status == 503) r.headers.emplace_back("Retry-After", "1");
  return r;
}

void HttpServer::Impl::OnReadable(Connection* c) {
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
void HttpServer::Impl::Process(Connection* c) {
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

void HttpServer::Impl::MatchRoute(Connection* c) {
  c->matched = true;
  c->match = app->Match(c->parser.request());
  c->method_label = std::string(MethodLabel(c->parser.request().method));
}

void HttpServer::Impl::Dispatch(Connection* c) {
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

void HttpServer::Impl::RespondQueueFull(Connection* c) {
  StartResponse(c, ErrorResponse(503, "server busy: too many requests waiting; retry shortly"));
}

// Hands the pool what it could not take before and takes what it answered, without waiting
// for its lock (worker_pool.h says why). True when all of it went through; else the loop
// comes back within a millisecond.
bool HttpServer::Impl::HandOff() {
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

void HttpServer::Impl::DrainDone() {
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

void HttpServer::Impl::RespondAndClose(Connection* c, int status, const std::string& message) {
  c->close_after_write = true;
  c->request_done = Clock::now();
  c->head_only = false;
  c->minor_version = c->parser.request().minor_version;
  // Counted under its route when the request line got that far (a 413 on /v1/recommend).
  if (!c->matched && !c->parser.request().path.empty()) MatchRoute(c);
  if (!c->matched) c->method_label = "OTHER";
  StartResponse(c, ErrorResponse(status, message));
}

void HttpServer::Impl::Observe(Connection* c, int status, double seconds) {
  app->Observe(c->method_label, c->match.label.empty() ? "unrouted" : c->match.label, status,
               seconds);
}

void HttpServer::Impl::StartResponse(Connection* c, HttpResponse response) {
  Observe(c, response.status,
          std::chrono::duration<double>(Clock::now() - c->request_done).count());
  if (stopping) c->close_after_write = true;
  const std::string& body = response.shared_body ? *response.shared_body : response.body;
  std::string head =
      HttpResponseHead(response, body.size(), c->close_after_write, c->minor_version);
  ContinueResponse(c, std::move(head), std::move(response), 0);
}

// Writes a response whose first `sent` bytes (of head and body together) are already sent.
void HttpServer::Impl::ContinueResponse(Connection* c, std::string head, HttpResponse response,
                                        size_t sent) {
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

void HttpServer::Impl::OnWritable(Connection* c) {
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

void HttpServer::Impl::FinishResponse(Connection* c) {
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

}  // namespace cloudfit
