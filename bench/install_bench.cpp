// Cost of installing the host API on a fresh context, as a ratio against the raw QuickJS lifecycle
// (new runtime + context, eval `1+1`, free) measured in the same run.
#include <benchmark/benchmark.h>
#include <quickjs.h>
#include <time.h>

#include <chrono>

#include "bindings/bridge.h"
#include "bindings/install.h"

namespace {

// CPU time of this thread: the machine is shared, so wall time would mostly measure other load.
struct ThreadClock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<ThreadClock, duration>;
  static time_point now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec));
  }
};

class NullBridge final : public skillbox::bindings::Bridge {
 public:
  skillbox::bus::Reply call(skillbox::bus::Request) override { return skillbox::bus::OkReply{}; }
  JSValue call_async(JSContext* ctx, skillbox::bus::Request, skillbox::bindings::ReplyDecoder) override {
    return JS_ThrowInternalError(ctx, "unused");
  }
};

// One lifecycle; with `install`, the host API is installed and used once (log + TextEncoder).
void lifecycle(bool install) {
  static NullBridge bridge;
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = JS_NewContext(rt);
  const char* source = "1+1";
  if (install) {
    JS_SetContextOpaque(ctx, static_cast<skillbox::bindings::Bridge*>(&bridge));
    if (!skillbox::bindings::install_host_api(ctx)) std::abort();
  }
  JSValue v = JS_Eval(ctx, source, 3, "<bench>", JS_EVAL_TYPE_GLOBAL);
  benchmark::DoNotOptimize(v);
  JS_FreeValue(ctx, v);
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}

// Both variants interleaved in one loop, so machine load affects them alike; reports the ratio.
void BM_HostApiInstallRatio(benchmark::State& state) {
  using Clock = ThreadClock;
  Clock::duration raw{};
  Clock::duration installed{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    lifecycle(false);
    const auto t1 = Clock::now();
    lifecycle(true);
    const auto t2 = Clock::now();
    raw += t1 - t0;
    installed += t2 - t1;
  }
  const double n = static_cast<double>(state.iterations());
  const double raw_us = std::chrono::duration<double, std::micro>(raw).count() / n;
  const double installed_us = std::chrono::duration<double, std::micro>(installed).count() / n;
  state.counters["raw_us"] = raw_us;
  state.counters["with_host_api_us"] = installed_us;
  state.counters["ratio"] = installed_us / raw_us;
}
BENCHMARK(BM_HostApiInstallRatio)->Unit(benchmark::kMicrosecond);

// Per-call cost of log() in a warm context, against an empty JS function call as the baseline.
void BM_LogCallRatio(benchmark::State& state) {
  static NullBridge bridge;
  JSRuntime* rt = JS_NewRuntime();
  JSContext* ctx = JS_NewContext(rt);
  JS_SetContextOpaque(ctx, static_cast<skillbox::bindings::Bridge*>(&bridge));
  if (!skillbox::bindings::install_host_api(ctx)) std::abort();
  const char kLog[] = "for (let i = 0; i < 1000; i++) log('value', i, {a: [1, 2, 3], s: 'text'});";
  const char kBase[] =
      "function f() {} for (let i = 0; i < 1000; i++) f('value', i, {a: [1, 2, 3], s: 'text'});";
  using Clock = ThreadClock;
  Clock::duration logged{};
  Clock::duration base{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    JS_FreeValue(ctx, JS_Eval(ctx, kBase, sizeof kBase - 1, "<bench>", JS_EVAL_TYPE_GLOBAL));
    const auto t1 = Clock::now();
    JS_FreeValue(ctx, JS_Eval(ctx, kLog, sizeof kLog - 1, "<bench>", JS_EVAL_TYPE_GLOBAL));
    const auto t2 = Clock::now();
    base += t1 - t0;
    logged += t2 - t1;
  }
  const double calls = static_cast<double>(state.iterations()) * 1000;
  state.counters["log_ns"] = std::chrono::duration<double, std::nano>(logged).count() / calls;
  state.counters["js_call_ns"] = std::chrono::duration<double, std::nano>(base).count() / calls;
  JS_FreeContext(ctx);
  JS_FreeRuntime(rt);
}
BENCHMARK(BM_LogCallRatio)->Unit(benchmark::kMillisecond);

}  // namespace
