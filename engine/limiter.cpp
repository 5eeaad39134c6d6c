#include "engine/limiter.h"

#include <algorithm>

namespace skillbox::engine {

void Limiter::attach(JSRuntime* rt, JSContext* ctx) {
  rt_ = rt;
  ctx_ = ctx;
  JS_SetInterruptHandler(rt, &Limiter::on_interrupt, this);
  arm();
  deadline_flag_.attach_runtime(rt);
}

// Starts the next countdown so that the handler runs at the step that would exceed the budget:
// with a budget of N steps the handler interrupts at step N + 1, so a run can take exactly N steps.
void Limiter::arm() {
  if (ctx_ == nullptr) return;
  const uint64_t budget = limits_.steps;
  const uint64_t left = budget >= steps_ ? budget - steps_ + 1 : 1;
  armed_ = static_cast<int>(std::min<uint64_t>(left, kTicksPerPoll));
  JS_SetInterruptCounter(ctx_, armed_);
}

int Limiter::on_interrupt(JSRuntime* /*rt*/, void* opaque) {
  return static_cast<Limiter*>(opaque)->interrupt();
}

int Limiter::interrupt() {
  // The countdown that just ended started at armed_. The engine leaves the counter at 0 when it ran
  // out, and at the ticks that were left when the poll came early because the watchdog asked for it
  // (DeadlineFlag::raise, JS_RequestInterrupt): only the ticks used are steps.
  const int left = ctx_ != nullptr ? JS_GetInterruptCounter(ctx_) : 0;
  steps_ += static_cast<uint64_t>(left <= 0 ? armed_ : std::max(armed_ - left, 0));
  armed_ = 0;
  if (tripped_ == LimitKind::none) {
    if (JS_HasCallStackOverflowed(rt_)) {
      record(LimitKind::stack);
    } else if (steps_ > limits_.steps) {
      record(LimitKind::steps);
    } else if (deadline_passed()) {
      record(LimitKind::timeout);
    }
  }
  if (tripped_ != LimitKind::none) {
    // Interrupt again at the next tick: code that survives the uncatchable error (e.g. the caller of
    // an async function that turned it into a rejection) must not run either.
    armed_ = 1;
    if (ctx_ != nullptr) JS_SetInterruptCounter(ctx_, 1);
    return 1;
  }
  arm();
  return 0;
}

// The one place a limit becomes the invocation's: from here on the host serves none of its requests.
void Limiter::record(LimitKind kind) {
  // The deadline flag also carries the caller's cancellation; everything that sees the flag (the
  // allocator, the interrupt handler) reports a timeout, which is then the cancellation.
  if (kind == LimitKind::timeout && deadline_flag_.cancelled.load(std::memory_order_relaxed))
    kind = LimitKind::cancelled;
  if (tripped_ == LimitKind::none) tripped_ = kind;
  if (stop_ != nullptr) stop_->raise();
}

void Limiter::trip(LimitKind kind) {
  record(kind);
  if (kind == LimitKind::timeout) deadline_flag_.passed.store(true, std::memory_order_relaxed);
  if (ctx_ != nullptr && armed_ != 1) {
    // Account the ticks of the interrupted countdown, then poll at the next tick.
    const int left = JS_GetInterruptCounter(ctx_);
    if (left >= 0 && left <= armed_) steps_ += static_cast<uint64_t>(armed_ - left);
    armed_ = 1;
    JS_SetInterruptCounter(ctx_, 1);
  }
}

bool Limiter::check() {
  if (tripped_ != LimitKind::none) return true;
  if (rt_ != nullptr && JS_HasCallStackOverflowed(rt_)) {
    trip(LimitKind::stack);
  } else if (deadline_passed()) {
    trip(LimitKind::timeout);
  }
  return tripped_ != LimitKind::none;
}

bool Limiter::deadline_passed() const {
  if (deadline_flagged()) return true;
  if (Clock::now() >= deadline_) {
    deadline_flag_.passed.store(true, std::memory_order_relaxed);
    if (stop_ != nullptr) stop_->raise();
    return true;
  }
  return false;
}

uint64_t Limiter::steps() const {
  if (ctx_ == nullptr) return steps_;
  const int left = JS_GetInterruptCounter(ctx_);
  if (left < 0 || left > armed_) return steps_;
  return steps_ + static_cast<uint64_t>(armed_ - left);
}

}  // namespace skillbox::engine
