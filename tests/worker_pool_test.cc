// The server's worker pool as the I/O thread uses it: jobs handed without waiting, answers
// taken back without waiting, a full queue refused.
#include "server/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cloudfit {
namespace {

using Handed = HttpWorkerPool::Handed;

HttpJob JobFor(uint64_t connection) {
  HttpJob job;
  job.connection = connection;
  return job;
}

// TrySubmit, retried while a worker holds the lock (the I/O thread retries on its next turn).
Handed Submit(HttpWorkerPool* pool, uint64_t connection, size_t max_queued) {
  while (true) {
    HttpJob job = JobFor(connection);
    Handed handed = pool->TrySubmit(&job, max_queued);
    if (handed != Handed::kBusy) return handed;
    std::this_thread::yield();
  }
}

// Every answered job, taken back with TryTakeDone until `count` have come back.
std::vector<HttpJob> TakeAll(HttpWorkerPool* pool, size_t count) {
  std::vector<HttpJob> done;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (done.size() < count && std::chrono::steady_clock::now() < give_up) {
    (void)pool->TryTakeDone(&done);  // appends; false only while a worker holds the lock
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return done;
}

TEST(WorkerPoolTest, AnswersEveryJobAndHandsItBackInOrderWithOneWorker) {
  std::atomic<int> finished{0};
  HttpWorkerPool pool([](HttpJob* job) { job->sent = job->connection * 10; }, [&] { ++finished; });
  pool.Start(1, /*idle=*/false);
  constexpr uint64_t kJobs = 200;
  for (uint64_t i = 1; i <= kJobs; ++i) ASSERT_EQ(Submit(&pool, i, 1024), Handed::kQueued);
  std::vector<HttpJob> done = TakeAll(&pool, kJobs);
  pool.Stop();
  ASSERT_EQ(done.size(), kJobs);
  for (uint64_t i = 0; i < kJobs; ++i) {
    EXPECT_EQ(done[i].connection, i + 1);
    EXPECT_EQ(done[i].sent, (i + 1) * 10) << "job " << i + 1 << " was not answered";
  }
  EXPECT_EQ(finished.load(), static_cast<int>(kJobs));
}

TEST(WorkerPoolTest, RefusesAJobWhenMaxQueuedAreWaitingAndLeavesItUntouched) {
  // The only worker is held inside its first job, so the next ones wait in the queue.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  bool started = false;
  HttpWorkerPool pool(
      [&](HttpJob*) {
        std::unique_lock<std::mutex> lock(mu);
        started = true;
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
      },
      [] {});
  pool.Start(1, /*idle=*/false);
  ASSERT_EQ(Submit(&pool, 1, 2), Handed::kQueued);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return started; });  // job 1 has left the queue
  }
  EXPECT_EQ(Submit(&pool, 2, 2), Handed::kQueued);
  EXPECT_EQ(Submit(&pool, 3, 2), Handed::kQueued);
  HttpJob refused = JobFor(4);
  refused.method_label = "POST";
  Handed handed;
  while ((handed = pool.TrySubmit(&refused, 2)) == Handed::kBusy) std::this_thread::yield();
  EXPECT_EQ(handed, Handed::kFull);
  EXPECT_EQ(refused.connection, 4u);
  EXPECT_EQ(refused.method_label, "POST") << "a refused job must come back as it was";
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  std::vector<HttpJob> done = TakeAll(&pool, 3);
  pool.Stop();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[2].connection, 3u);
}

}  // namespace
}  // namespace cloudfit
