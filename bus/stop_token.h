// bus/stop_token.h — "this invocation must stop": read by the host side before and during requests.
//
// Once any limit of an invocation has tripped, the deadline included, no host request of it may take
// effect (SECURITY-CASES "Nothing happens after a limit": a skill looping on a costly native call and
// `store.delete` deleted hundreds of keys after its caller had been told it timed out). The engine
// raises the token when its Limiter records a limit; the watchdog raises it at the deadline; and
// because the engine may not have noticed the deadline yet (it is inside a native call), the token
// also compares the clock with the deadline itself. The Endpoint checks it before it dispatches a
// request; capabilities check it between the steps of a long operation (a recursive remove, an
// http transfer). A plain value with no engine type in it, so capabilities need not know the engine.
#pragma once

#include <atomic>
#include <chrono>

namespace skillbox::bus {

class StopToken {
 public:
  using Clock = std::chrono::steady_clock;

  /// A token that stops only when raised (no deadline): for capabilities used outside a run.
  StopToken() = default;
  /// A token that stops when raised or at `deadline`, whichever comes first.
  explicit StopToken(Clock::time_point deadline) : deadline_(deadline) {}
  StopToken(const StopToken&) = delete;
  StopToken& operator=(const StopToken&) = delete;

  /// Marks the invocation as ending (a limit tripped). Any thread; idempotent; never undone.
  void raise() noexcept { raised_.store(true, std::memory_order_release); }

  /// True once raise() was called or the deadline has passed. Any thread; one atomic load and at
  /// most one read of the monotonic clock (tens of nanoseconds).
  [[nodiscard]] bool stop_requested() const noexcept {
    return raised_.load(std::memory_order_acquire) || Clock::now() >= deadline_;
  }

  /// The deadline the token compares with (Clock::time_point::max() when it has none).
  [[nodiscard]] Clock::time_point deadline() const noexcept { return deadline_; }

  /// A token that never stops: the default for capabilities built without an invocation.
  static const StopToken& never() {
    static const StopToken token;
    return token;
  }

 private:
  std::atomic<bool> raised_{false};
  Clock::time_point deadline_ = Clock::time_point::max();
};

}  // namespace skillbox::bus
