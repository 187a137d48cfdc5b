// The HTTP server's workers: requests in, answered requests out. The I/O thread submits the
// requests it cannot answer at once (match.inline_ok false); a worker answers one (the server's
// `answer`: the application's handler, then as much of the response as the socket takes), puts
// it on the done list and signals the I/O thread, which writes the rest and reads the next one.
//
// The I/O thread never waits for the pool's lock. Workers run below its priority, and one that
// is preempted while it holds the lock (popping a job, pushing an answer) may not run again for
// milliseconds while busier threads hold the cores: an I/O thread that blocked on the lock then
// stalled every connection, health checks included, for that long (measured at 256 loaded
// connections on 2 cores: 65 waits over 1 ms in 12 s, the longest 20 ms). It tries the lock
// instead, and on failure keeps the job or the done list for its next turn. A worker yields
// the core after each job, so that the scheduler's choice of a worker over a waiting I/O thread
// lasts one job rather than a tick (see Work).
#ifndef CLOUDFIT_SERVER_WORKER_POOL_H_
#define CLOUDFIT_SERVER_WORKER_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/http_server.h"

namespace cloudfit {

// One request waiting for, or done by, a worker.
struct HttpJob {
  uint64_t connection = 0;
  HttpRequest request;
  HttpRouteMatch match;
  HttpResponse response;
  // How to answer, decided when the request arrived.
  int fd = -1;
  bool head_only = false;
  bool close_after_write = false;
  int minor_version = 1;
  std::string method_label;
  std::chrono::steady_clock::time_point request_done;
  // What the worker did: the head it made and how much of the response it sent.
  std::string head;
  size_t sent = 0;
  bool broken = false;
};

class HttpWorkerPool {
 public:
  // `answer` runs on a worker for each job; `finished` after each job is on the done list.
  HttpWorkerPool(std::function<void(HttpJob*)> answer, std::function<void()> finished);
  ~HttpWorkerPool();
  HttpWorkerPool(const HttpWorkerPool&) = delete;
  HttpWorkerPool& operator=(const HttpWorkerPool&) = delete;

  // Starts `count` workers, below the calling thread's priority: at nice +10, or under
  // SCHED_IDLE with `idle` (falling back to nice +10 where the system refuses it).
  void Start(int count, bool idle);
  // Lets the workers answer every queued job, then joins them.
  void Stop();
  enum class Handed { kQueued, kFull, kBusy };
  // Queues a job without waiting: kQueued (the job moved), kFull when `max_queued` are already
  // waiting, kBusy when a worker holds the lock (try again shortly). The job is untouched
  // unless queued.
  Handed TrySubmit(HttpJob* job, size_t max_queued);
  // Appends the jobs answered since the last call to `done` without waiting; false when a
  // worker holds the lock (try again shortly).
  bool TryTakeDone(std::vector<HttpJob>* done);

 private:
  void Work(bool idle);

  std::function<void(HttpJob*)> answer_;
  std::function<void()> finished_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<HttpJob> queued_;
  std::vector<HttpJob> done_;
  bool exit_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace cloudfit

#endif  // CLOUDFIT_SERVER_WORKER_POOL_H_
