// engine/timers.h — setTimeout/setInterval/clearTimeout/clearInterval and queueMicrotask.
//
// Timers are macrotasks of the invocation's event loop (engine/session.cpp): a due timer runs only when
// the job queue is empty, one timer per turn, earliest due first, ties in creation order. Callbacks run
// under the same step budget and deadline as all other skill code. Timers still pending when the
// export's promise settles are dropped and counted (Usage::timers_dropped).
#pragma once

#include <quickjs.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "engine/handles.h"
#include "engine/limiter.h"

namespace skillbox::engine {

class TimerQueue {
 public:
  /// Live (scheduled, not yet fired or cleared) timers one invocation may hold. Bounds the host memory
  /// a skill can pin with timers; setTimeout/setInterval throw a RangeError that names it beyond it.
  static constexpr size_t kMaxLiveTimers = 10'000;
  /// Delays are clamped to [0, kMaxDelayMs]: no invocation lives longer (Limits::kMaxTimeoutMs).
  static constexpr double kMaxDelayMs = 10.0 * 60 * 1000;
  /// setInterval runs at most once per millisecond, so an interval of 0 cannot starve the loop.
  static constexpr double kMinIntervalMs = 1.0;

  explicit TimerQueue(JSContext* ctx) : ctx_(ctx) {}
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  /// Schedules `callback(...args)` (`args` is a JS array or undefined). Returns the timer id (> 0), or
  /// 0 if kMaxLiveTimers timers are live already.
  uint64_t add(Value callback, Value args, double delay_ms, bool repeat, Clock::time_point now);
  /// Cancels a timer; unknown ids are ignored (as in browsers).
  void cancel(uint64_t id);

  /// When the earliest timer is due, if any.
  [[nodiscard]] std::optional<Clock::time_point> next_due() const;
  [[nodiscard]] size_t size() const { return timers_.size(); }

  /// A timer taken from the queue to be called.
  struct Due {
    Value callback;
    Value args;
  };
  /// Takes the earliest timer due at `now`; an interval is rescheduled before its callback runs, so
  /// the callback can clear it.
  std::optional<Due> take_due(Clock::time_point now);

  /// Drops every timer, freeing their values. Returns how many were dropped.
  size_t clear();

 private:
  struct Timer {
    Value callback;
    Value args;
    double interval_ms = -1;  // < 0 for setTimeout
    Clock::time_point due;
    uint64_t seq = 0;
  };
  using Key = std::tuple<Clock::time_point, uint64_t /*seq*/, uint64_t /*id*/>;

  JSContext* ctx_;
  std::map<uint64_t, Timer> timers_;
  std::set<Key> order_;
  uint64_t next_id_ = 1;
  uint64_t next_seq_ = 1;
};

/// The timer queue of the invocation running in `ctx` (implemented by engine/session.cpp).
TimerQueue& timer_queue(JSContext* ctx);

/// Adds setTimeout, setInterval, clearTimeout, clearInterval and queueMicrotask to the global object of
/// `ctx`. Returns false with a pending exception on failure.
bool install_timers(JSContext* ctx);

}  // namespace skillbox::engine
