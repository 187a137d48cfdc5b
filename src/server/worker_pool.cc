#include "server/worker_pool.h"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace cloudfit {

namespace {

// How much lower workers run than the I/O thread: nice 10 weighs ~1/9 of nice 0 in Linux's
// scheduler, so the I/O thread gets most of a core when it wants one (though not always at the
// instant it wakes: see Work), and workers still get every cycle it leaves (it sleeps in
// epoll_wait most of the time).
constexpr int kWorkerNiceness = 10;

}  // namespace

HttpWorkerPool::HttpWorkerPool(std::function<void(HttpJob*)> answer, std::function<void()> finished)
    : answer_(std::move(answer)), finished_(std::move(finished)) {}

HttpWorkerPool::~HttpWorkerPool() { Stop(); }

void HttpWorkerPool::Start(int count, bool idle) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    exit_ = false;
  }
  for (int i = 0; i < std::max(1, count); ++i) threads_.emplace_back([this, idle] { Work(idle); });
}

void HttpWorkerPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    exit_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

HttpWorkerPool::Handed HttpWorkerPool::TrySubmit(HttpJob* job, size_t max_queued) {
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock()) return Handed::kBusy;
    if (queued_.size() >= max_queued) return Handed::kFull;
    queued_.push_back(std::move(*job));
  }
  work_ready_.notify_one();
  return Handed::kQueued;
}

bool HttpWorkerPool::TryTakeDone(std::vector<HttpJob>* done) {
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (done->empty()) {
    done->swap(done_);
  } else {
    for (HttpJob& job : done_) done->push_back(std::move(job));
    done_.clear();
  }
  return true;
}

void HttpWorkerPool::Work(bool idle) {
  // Workers compute; the I/O thread accepts, reads, writes and answers health checks and static
  // routes itself. Under load more threads want the CPU than there are cores, and the I/O
  // thread, which runs for microseconds at a time, must not wait behind a worker's
  // recommendation (a liveness probe waited 36 ms at 256 connections on 2 cores): workers run
  // at a lower priority, which needs no privilege. Best effort.
  //
  // At nice +10 the I/O thread still waits for the fair scheduler to let it preempt a worker
  // when it wakes: on a 2-core HZ-250 machine under 256 loaded connections a probe's p99 stayed
  // at 3-6 ms, and at 0.6-0.8 ms with it and the probe made real-time (measured, not kept). A
  // SCHED_IDLE thread is preempted the moment a normal one wakes on its core (the same load:
  // 1.6-2.7 ms), at the price of running only when nothing else wants the CPU.
  sched_param none{};
  bool under_idle = idle && pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) == 0;
  if (!under_idle) {
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, 0);
    if (errno == 0) {
      (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()),
                        std::min(19, nice_now + kWorkerNiceness));
    }
  }
  while (true) {
    HttpJob job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [&] { return !queued_.empty() || exit_; });
      if (queued_.empty()) return;  // stopping, and nothing is left to answer
      job = std::move(queued_.front());
      queued_.pop_front();
    }
    answer_(&job);
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.push_back(std::move(job));
    }
    finished_();
    // Give the core back between jobs. The fair scheduler (EEVDF) may pick a lower-priority
    // worker over a runnable I/O thread that has used more than its share, and on a kernel
    // without forced preemption (HZ 250, PREEMPT_NONE) that worker then keeps the core until the
    // next tick: traced at 256 loaded connections on 2 cores, the I/O thread waited up to 3.3 ms
    // behind a SCHED_IDLE worker while it answered recommendations. Yielding here bounds that
    // wait to one job, for one system call per job (answering a recommendation takes ~0.1 ms
    // of a core there); with no other thread runnable it returns at once.
    sched_yield();
  }
}

}  // namespace cloudfit
