// engine/reply_inbox.h — where replies of asynchronous requests wait for the JS thread.
//
// An Endpoint completes asynchronous requests from other threads (the http I/O thread in-process, a
// frame reader in worker mode). It completes them into a ReplyInbox; the Session's event loop takes
// them out on the JS thread and settles the promises. The inbox is created before the Endpoint (which
// needs a sink to be built) and the Session (which needs the Endpoint), by whoever runs the
// invocation, and must outlive both.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

#include "bus/endpoint.h"
#include "engine/limiter.h"

namespace skillbox::engine {

class ReplyInbox final : public bus::CompletionSink {
 public:
  ReplyInbox() = default;
  ReplyInbox(const ReplyInbox&) = delete;
  ReplyInbox& operator=(const ReplyInbox&) = delete;

  /// Queues the reply and wakes wait_until(). Any thread. If the host is out of memory the reply is
  /// dropped: its request stays pending until the deadline.
  void complete(uint64_t request_id, bus::Reply reply) override;

  /// Every reply queued so far, in arrival order, moved out. JS thread.
  std::deque<std::pair<uint64_t, bus::Reply>> take();

  /// Blocks until a reply is queued, `until` passes or wake() was called. JS thread.
  void wait_until(Clock::time_point until);

  /// Makes every later wait_until() return at once: the invocation is being stopped from outside (its
  /// caller cancelled it) and the event loop must look at its Limiter now, not at the next timer or
  /// the deadline. Any thread; never undone.
  void wake();

  /// Drops every queued reply (the invocation ended).
  void clear();

  /// Worker mode, where no other thread delivers replies (the worker is single-threaded): `pump`
  /// reads replies from the supervisor until its argument's time point and delivers them through
  /// complete(). Once set, wait_until() calls pump(until) instead of sleeping, and take() first calls
  /// pump with a time already past (take what has arrived, never wait). Set before the session runs.
  void set_pump(std::function<void(Clock::time_point)> pump) { pump_ = std::move(pump); }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<uint64_t, bus::Reply>> replies_;
  bool woken_ = false;                           // guarded by mutex_
  std::function<void(Clock::time_point)> pump_;  // set only in worker mode
};

}  // namespace skillbox::engine
