// server/run_queue.h — a bounded pool of threads that run skills, so that no run blocks the HTTP I/O
// thread, and nothing waits without bound.
//
// Runner::run blocks its caller until the run ends (WorkerRunner supervises the worker on the calling
// thread), so each run takes one of `threads` threads for its whole duration. At most `queue_limit`
// more jobs wait for a thread; a job beyond that is refused at once (the HTTP layer answers 503). This
// is the first slice of admission: per-tenant bounds sit above it (server/api.cpp, 429); weighted fair
// sharing between tenants' queues is not here yet (docs/serve.md "Admission").
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace skillbox::server {

class RunQueue {
 public:
  /// Starts `threads` threads (at least 1).
  RunQueue(size_t threads, size_t queue_limit);
  /// Stops taking jobs, runs those already queued, and joins the threads.
  ~RunQueue();
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;

  /// Queues `job` to run on a pool thread. False (and `job` is dropped, never run) when every thread
  /// is busy and `queue_limit` jobs already wait, or after shutdown(). Any thread.
  [[nodiscard]] bool submit(std::function<void()> job);

  /// Jobs queued or running. Any thread.
  [[nodiscard]] size_t pending() const;

  /// Refuses new jobs from now on; the queued ones still run. Any thread; idempotent.
  void shutdown();

 private:
  void work();

  const size_t threads_;
  const size_t queue_limit_;
  mutable base::Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_ SKILLBOX_GUARDED_BY(mu_);
  size_t running_ SKILLBOX_GUARDED_BY(mu_) = 0;
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::thread> pool_;
};

}  // namespace skillbox::server
