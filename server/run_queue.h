// server/run_queue.h — the pool of threads that run skills and the admission in front of it: a bounded
// queue per tenant ("lane"), served by weighted deficit round robin, so that no run blocks the HTTP I/O
// thread, nothing waits without bound, and a tenant that floods the server cannot starve a quiet one.
//
// Runner::run blocks its caller until the run ends (WorkerRunner supervises the worker on the calling
// thread), so each job takes one of `threads` threads for its whole duration: jobs in progress never
// exceed `threads`. A lane runs at most `max_running` of its jobs at once, and holds at most
// `max_queued` more that wait; server-wide, at most `queue_limit` jobs wait. Beyond either bound a job
// is refused at once (the API answers 429 for the lane's bound, 503 for the server's).
//
// Fair sharing is deficit round robin (Shreedhar and Varghese, "Efficient fair queuing using deficit
// round robin", 1995) with a unit cost per job: visiting a lane that has an eligible job adds its weight
// to its deficit, and each job started spends one. Over any busy period, lanes with work start jobs in
// proportion to their weights; a lane with one waiting job starts it within one round of the others.
// Runs are not preemptible, so a quiet tenant still waits for a thread to free up, but never behind a
// flooding tenant's whole queue.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace skillbox::server {

/// The bounds and the share of one lane (one tenant).
struct LaneConfig {
  /// Share of the threads when lanes compete: a lane of weight 2 starts two jobs for each one a lane
  /// of weight 1 starts. At least 1.
  size_t weight = 1;
  /// Jobs of the lane running at once. At least 1.
  size_t max_running = 4;
  /// Jobs of the lane waiting beyond those it can start at once.
  size_t max_queued = 8;
};

class RunQueue {
 public:
  using Clock = std::chrono::steady_clock;
  /// What a job leaves to do once its thread counts as free again (may be empty): the answer a client
  /// waits for. A client that reads its answer and at once sends the next request must find the thread
  /// free, or a server without a queue (queue_limit = 0) would refuse a strictly sequential client.
  using Then = std::function<void()>;
  /// A job: called once on a pool thread with the time it waited in the queue.
  using Job = std::function<Then(Clock::duration waited)>;

  /// What submit() did with a job.
  enum class Admission : uint8_t {
    queued,       // it will run (unless withdrawn)
    lane_full,    // the lane has max_running jobs running and max_queued waiting
    server_full,  // queue_limit jobs wait server-wide
    stopped,      // after shutdown()
  };
  struct Ticket {
    Admission admission = Admission::stopped;
    uint64_t id = 0;  // for withdraw(); 0 when not queued
  };

  /// Per lane (one per tenant, in order) and server-wide counts, for the metrics.
  struct LaneCounts {
    size_t running = 0;
    size_t queued = 0;
  };

  /// Starts `threads` threads (at least 1) serving `lanes`.
  RunQueue(size_t threads, size_t queue_limit, const std::vector<LaneConfig>& lanes);
  /// Stops taking jobs, runs those already queued, and joins the threads.
  ~RunQueue();
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;

  /// Adds a lane (a tenant a reloaded config brings); returns its index. Any thread.
  size_t add_lane(LaneConfig config);
  /// Gives lane `lane` new bounds and weight (a reloaded config's). Jobs running or queued stay; the
  /// new bounds decide what is admitted and started next. Any thread.
  void configure_lane(size_t lane, LaneConfig config);

  /// Queues `job` on lane `lane` (< the number of lanes). Unless the ticket says `queued`, `job` is
  /// dropped, never run. Any thread.
  [[nodiscard]] Ticket submit(size_t lane, Job job);

  /// Removes the job of ticket `id` if it has not started; true when it was removed (it is destroyed
  /// on this thread, never run), false when it started already or is unknown. Any thread.
  [[nodiscard]] bool withdraw(uint64_t id);

  /// Jobs queued or running, all lanes. Any thread.
  [[nodiscard]] size_t pending() const;

  /// The counts of each lane, in the order of the lanes. Any thread.
  [[nodiscard]] std::vector<LaneCounts> counts() const;

  /// Refuses new jobs from now on; the queued ones still run. Any thread; idempotent.
  void shutdown();
  /// True once shutdown() was called (the server is draining). Any thread.
  [[nodiscard]] bool stopped() const;

 private:
  struct Entry {
    uint64_t id = 0;
    Clock::time_point queued_at;
    Job job;
  };
  struct Lane {
    LaneConfig config;
    std::deque<Entry> jobs;
    size_t running = 0;
    size_t deficit = 0;
  };

  void work();
  bool eligible(const Lane& lane) const SKILLBOX_REQUIRES(mu_);
  bool any_eligible() const SKILLBOX_REQUIRES(mu_);
  size_t pick() SKILLBOX_REQUIRES(mu_);

  const size_t threads_;
  const size_t queue_limit_;
  mutable base::Mutex mu_;
  std::condition_variable cv_;
  std::vector<Lane> lanes_ SKILLBOX_GUARDED_BY(mu_);
  size_t cursor_ SKILLBOX_GUARDED_BY(mu_) = 0;  // the lane deficit round robin visits
  size_t queued_ SKILLBOX_GUARDED_BY(mu_) = 0;
  size_t running_ SKILLBOX_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ SKILLBOX_GUARDED_BY(mu_) = 1;
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::thread> pool_;
};

}  // namespace skillbox::server
