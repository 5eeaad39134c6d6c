// Patch 0010 (JS_RequestInterrupt) and the watchdog's use of it through engine::DeadlineFlag
// (engine/limiter.h): another thread makes the JS thread poll its interrupt handler at the next tick.
#include <gtest/gtest.h>
#include <quickjs.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "engine/limiter.h"

namespace skillbox::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct HandlerState {
  std::atomic<bool> stop{false};
  int calls = 0;
  int counter_seen = -1;  // JS_GetInterruptCounter inside the last call
  JSContext* ctx = nullptr;
};

int stop_when_asked(JSRuntime* /*rt*/, void* opaque) {
  auto* st = static_cast<HandlerState*>(opaque);
  ++st->calls;
  st->counter_seen = JS_GetInterruptCounter(st->ctx);
  if (!st->stop.load(std::memory_order_relaxed)) {
    JS_SetInterruptCounter(st->ctx, INT_MAX);  // the next countdown is practically endless
    return 0;
  }
  return 1;
}

std::string exception_text(JSContext* ctx) {
  JSValue e = JS_GetException(ctx);
  const char* s = JS_ToCString(ctx, e);
  std::string text = s != nullptr ? s : "";
  JS_FreeCString(ctx, s);
  JS_FreeValue(ctx, e);
  return text;
}

// A countdown of INT_MAX ticks (a loop would run for many seconds before the handler): only the
// request from the other thread can end it early.
TEST(InterruptRequest, AnotherThreadMakesTheEngineCallTheHandlerAtOnce) {
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = JS_NewContext(rt);
  HandlerState st;
  st.ctx = ctx;
  JS_SetInterruptHandler(rt, &stop_when_asked, &st);
  JS_SetInterruptCounter(ctx, INT_MAX);

  std::thread watchdog([&] {
    std::this_thread::sleep_for(milliseconds(100));
    st.stop.store(true, std::memory_order_relaxed);
    JS_RequestInterrupt(rt);
  });
  const auto t0 = steady_clock::now();
  const char* src = "let n = 0; for (;;) n++;";
  JSValue v = JS_Eval(ctx, src, std::strlen(src), "<loop>", JS_EVAL_TYPE_GLOBAL);
  const auto elapsed = steady_clock::now() - t0;
  watchdog.join();

  ASSERT_TRUE(JS_IsException(v));
  EXPECT_EQ(exception_text(ctx), "InternalError: interrupted");
  EXPECT_LT(elapsed, std::chrono::seconds(5));  // INT_MAX ticks take far longer
  EXPECT_EQ(st.calls, 1);
  // The handler of an early poll sees the ticks that were left, not 0.
  EXPECT_GT(st.counter_seen, 0);
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}

TEST(InterruptRequest, ARequestBeforeTheRunIsServedAtTheFirstTick) {
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = JS_NewContext(rt);
  HandlerState st;
  st.ctx = ctx;
  JS_SetInterruptHandler(rt, &stop_when_asked, &st);
  JS_SetInterruptCounter(ctx, INT_MAX);
  st.stop = true;
  JS_RequestInterrupt(rt);
  const char* src = "for (;;) {}";
  JSValue v = JS_Eval(ctx, src, std::strlen(src), "<loop>", JS_EVAL_TYPE_GLOBAL);
  ASSERT_TRUE(JS_IsException(v));
  EXPECT_EQ(exception_text(ctx), "InternalError: interrupted");
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}

// The watchdog raises the flag while the JS thread creates, runs and frees runtimes as fast as it
// can: raise() must never touch a runtime being freed (ASan reports a use after free otherwise), and
// a raise that lands during a run stops it as a timeout.
TEST(InterruptRequest, DeadlineFlagNeverTouchesAFreedRuntime) {
  int stopped = 0;
  for (int i = 0; i < 50; ++i) {
    engine::DeadlineFlag flag;
    Limits limits;
    limits.steps = Limits::kMaxSteps;
    engine::Limiter limiter(limits, engine::Clock::now() + std::chrono::hours(1), flag);
    std::thread watchdog([&flag, i] {
      std::this_thread::sleep_for(std::chrono::microseconds((i * 37) % 500));
      flag.raise();
    });
    JSRuntime* rt = JS_NewRuntime();
    JSContext* ctx = JS_NewContext(rt);
    limiter.attach(rt, ctx);
    const char* src = "for (let i = 0; i < 2000; i++) {}";
    JSValue v = JS_Eval(ctx, src, std::strlen(src), "<loop>", JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(v)) {
      EXPECT_EQ(limiter.tripped(), engine::LimitKind::timeout);
      JS_FreeValue(ctx, JS_GetException(ctx));
      ++stopped;
    }
    JS_FreeValue(ctx, v);
    limiter.detach();
    JS_FreeContext(ctx);
    JS_FreeRuntime(rt);
    watchdog.join();
  }
  std::printf("[ info ] %d of 50 runs stopped by the watchdog\n", stopped);
}

}  // namespace
}  // namespace skillbox::testing
