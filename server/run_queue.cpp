// server/run_queue.cpp — see run_queue.h.
#include "server/run_queue.h"

#include <algorithm>
#include <utility>

namespace skillbox::server {

RunQueue::RunQueue(size_t threads, size_t queue_limit)
    : threads_(std::max<size_t>(threads, 1)), queue_limit_(queue_limit) {
  pool_.reserve(threads_);
  for (size_t i = 0; i < threads_; ++i) pool_.emplace_back([this] { work(); });
}

RunQueue::~RunQueue() {
  shutdown();
  for (std::thread& t : pool_) t.join();
}

bool RunQueue::submit(std::function<void()> job) {
  {
    base::MutexLock lock(mu_);
    if (stopping_) return false;
    // Idle threads take a job at once; beyond them, at most queue_limit_ wait.
    const size_t idle = threads_ - std::min(running_, threads_);
    if (jobs_.size() >= idle + queue_limit_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

size_t RunQueue::pending() const {
  base::MutexLock lock(mu_);
  return jobs_.size() + running_;
}

void RunQueue::shutdown() {
  {
    base::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
}

void RunQueue::work() {
  for (;;) {
    std::function<void()> job;
    {
      base::MutexLock lock(mu_);
      lock.wait(cv_, [this] {
        mu_.assert_held();
        return stopping_ || !jobs_.empty();
      });
      if (jobs_.empty()) return;  // stopping, and nothing left to run
      job = std::move(jobs_.front());
      jobs_.pop_front();
      ++running_;
    }
    job();  // jobs catch their own exceptions (server/api.cpp)
    base::MutexLock lock(mu_);
    --running_;
  }
}

}  // namespace skillbox::server
