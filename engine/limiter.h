// engine/limiter.h — the resource limits of one invocation and the state that decides its outcome.
//
// The Limiter is the single record of "a limit was hit". The allocator (heap.h), the interrupt handler,
// the call-stack check of the engine (patch 0002) and the event loop report to it; the outcome of the
// invocation is read from it, never from the value a skill threw. Once tripped it stays tripped: the
// interrupt handler keeps interrupting, the allocator refuses after the deadline, the event loop stops.
//
// What a step is, and how precisely each limit is enforced, is documented in docs/limits.md.
#pragma once

#include <quickjs.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

#include "bus/stop_token.h"
#include "skillbox/policy.h"

namespace skillbox::engine {

using Clock = std::chrono::steady_clock;

/// Which limit ended the invocation. `none` while no limit was hit. `cancelled` is the caller's stop
/// (skillbox::CancelToken), enforced exactly like the deadline.
enum class LimitKind : uint8_t { none, memory, steps, timeout, stack, cancelled };

/// Set from outside the JS thread (the runner's watchdog) when the wall-clock deadline passes. The
/// allocator and the interrupt handler read it; it is the only cross-thread state of an invocation.
///
/// While a Limiter is attached, the flag also knows the invocation's runtime, so that raise() can make
/// the engine poll its interrupt handler at its next tick (JS_RequestInterrupt, patch 0010) instead of
/// up to 10,000 ticks, or one long native operation, later. The runtime is registered and forgotten
/// under a mutex that raise() holds while it calls the engine: the watchdog never touches a runtime
/// that JS_FreeRuntime may be freeing (the Limiter forgets it before the session frees it).
struct DeadlineFlag {
  std::atomic<bool> passed{false};
  /// Set (before `passed`) when the stop is the caller's cancellation rather than the deadline: the
  /// Limiter then records `cancelled` where it would record `timeout`.
  std::atomic<bool> cancelled{false};

  /// The caller cancelled the run: stops it as the deadline would, recorded as `cancelled`. Any thread.
  void raise_cancel() {
    cancelled.store(true, std::memory_order_relaxed);
    raise();
  }

  /// Marks the deadline as passed and asks the attached runtime, if any, to poll at once. Any thread;
  /// holds the mutex only for one atomic store. Idempotent.
  void raise() {
    passed.store(true, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    if (rt_ != nullptr) JS_RequestInterrupt(rt_);
  }

 private:
  friend class Limiter;
  // JS thread: the runtime becomes reachable from raise(); a deadline raised before is served at once.
  void attach_runtime(JSRuntime* rt) {
    std::lock_guard<std::mutex> lock(mutex_);
    rt_ = rt;
    if (passed.load(std::memory_order_relaxed)) JS_RequestInterrupt(rt_);
  }
  // JS thread, before the runtime is freed: after this returns, no raise() touches it.
  void detach_runtime() {
    std::lock_guard<std::mutex> lock(mutex_);
    rt_ = nullptr;
  }

  std::mutex mutex_;
  JSRuntime* rt_ = nullptr;  // guarded by mutex_
};

class Limiter {
 public:
  /// QuickJS calls the interrupt handler when its tick counter reaches zero, then counts down again
  /// from this value unless the handler sets another one (JS_INTERRUPT_COUNTER_INIT in quickjs.c).
  static constexpr int kTicksPerPoll = 10'000;

  /// `stop`, when given, is raised as soon as any limit is recorded (or the deadline is seen to have
  /// passed), so the host side refuses the invocation's requests from then on (bus/stop_token.h). It
  /// must outlive the Limiter.
  Limiter(const Limits& limits, Clock::time_point deadline, DeadlineFlag& deadline_flag,
          bus::StopToken* stop = nullptr)
      : limits_(limits), deadline_(deadline), deadline_flag_(deadline_flag), stop_(stop) {}
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  ~Limiter() { detach(); }

  /// Installs the interrupt handler on `rt`, arms the tick counter of `ctx` for the step budget and
  /// registers `rt` with the DeadlineFlag (so the watchdog's raise() makes it poll at once).
  void attach(JSRuntime* rt, JSContext* ctx);
  /// Forgets the runtime and context (before they are freed); later trips, and the watchdog, no
  /// longer touch them. Idempotent.
  void detach() {
    if (rt_ != nullptr) deadline_flag_.detach_runtime();
    rt_ = nullptr;
    ctx_ = nullptr;
  }

  /// Records that `kind` was hit, unless another limit was hit first, and makes the engine call the
  /// interrupt handler at its very next tick (which then interrupts). JS thread only.
  void trip(LimitKind kind);
  /// The limit that was hit first, or `none`. Includes a call-stack overflow the engine recorded since
  /// the last poll: one inside a getter, toJSON or trap that host code ran (describing a thrown value,
  /// serializing the result) returns to the host without another tick, so no poll would see it.
  [[nodiscard]] LimitKind tripped() {
    if (tripped_ == LimitKind::none && rt_ != nullptr && JS_HasCallStackOverflowed(rt_))
      trip(LimitKind::stack);
    return tripped_;
  }

  /// Polls every limit that can be polled: engine stack flag, deadline. Trips and returns true if one
  /// was hit (or was hit before). Called by the event loop between jobs.
  bool check();

  /// True once the deadline passed, as seen by the watchdog or by this thread's clock.
  [[nodiscard]] bool deadline_passed() const;
  /// Fast check for the allocator: only the flag, no clock read.
  [[nodiscard]] bool deadline_flagged() const {
    return deadline_flag_.passed.load(std::memory_order_relaxed);
  }
  [[nodiscard]] Clock::time_point deadline() const { return deadline_; }
  [[nodiscard]] const Limits& limits() const { return limits_; }

  /// Steps counted so far, including the ticks since the last interrupt poll.
  [[nodiscard]] uint64_t steps() const;

 private:
  static int on_interrupt(JSRuntime* rt, void* opaque);
  int interrupt();
  void arm();
  void record(LimitKind kind);

  Limits limits_;
  Clock::time_point deadline_;
  DeadlineFlag& deadline_flag_;
  bus::StopToken* stop_;  // raised with the first recorded limit; may be null
  JSRuntime* rt_ = nullptr;
  JSContext* ctx_ = nullptr;
  LimitKind tripped_ = LimitKind::none;
  uint64_t steps_ = 0;  // ticks of completed countdowns
  int armed_ = 0;       // the value the current countdown started from
};

}  // namespace skillbox::engine
