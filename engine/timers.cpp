#include "engine/timers.h"

#include <chrono>
#include <cmath>
#include <string>

namespace skillbox::engine {

uint64_t TimerQueue::add(Value callback, Value args, double delay_ms, bool repeat, Clock::time_point now) {
  if (timers_.size() >= kMaxLiveTimers) return 0;
  if (!(delay_ms >= 0)) delay_ms = 0;  // NaN and negative delays run as soon as possible
  if (delay_ms > kMaxDelayMs) delay_ms = kMaxDelayMs;
  if (repeat && delay_ms < kMinIntervalMs) delay_ms = kMinIntervalMs;
  const uint64_t id = next_id_++;
  Timer t;
  t.callback = std::move(callback);
  t.args = std::move(args);
  t.interval_ms = repeat ? delay_ms : -1;
  t.due =
      now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(delay_ms));
  t.seq = next_seq_++;
  order_.emplace(t.due, t.seq, id);
  timers_.emplace(id, std::move(t));
  return id;
}

void TimerQueue::cancel(uint64_t id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  order_.erase(Key{it->second.due, it->second.seq, id});
  timers_.erase(it);
}

std::optional<Clock::time_point> TimerQueue::next_due() const {
  if (order_.empty()) return std::nullopt;
  return std::get<0>(*order_.begin());
}

std::optional<TimerQueue::Due> TimerQueue::take_due(Clock::time_point now) {
  if (order_.empty() || std::get<0>(*order_.begin()) > now) return std::nullopt;
  const uint64_t id = std::get<2>(*order_.begin());
  order_.erase(order_.begin());
  auto it = timers_.find(id);
  Timer& t = it->second;
  if (t.interval_ms < 0) {
    Due due{std::move(t.callback), std::move(t.args)};
    timers_.erase(it);
    return due;
  }
  t.due = now + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double, std::milli>(t.interval_ms));
  t.seq = next_seq_++;
  order_.emplace(t.due, t.seq, id);
  return Due{Value::dup(ctx_, t.callback.get()), Value::dup(ctx_, t.args.get())};
}

size_t TimerQueue::clear() {
  const size_t n = timers_.size();
  order_.clear();
  timers_.clear();
  return n;
}

namespace {

JSValue schedule(JSContext* ctx, int argc, JSValueConst* argv, bool repeat) {
  const char* fn = repeat ? "setInterval" : "setTimeout";
  if (argc < 1 || !JS_IsFunction(ctx, argv[0]))
    return JS_ThrowTypeError(ctx, "%s: the callback must be a function (strings are not evaluated)", fn);
  double delay = 0;
  // One conversion of the delay (ToNumber, as in HTML); it may run the skill's valueOf.
  if (argc >= 2 && !JS_IsUndefined(argv[1]) && JS_ToFloat64(ctx, &delay, argv[1]) < 0) return JS_EXCEPTION;
  TimerQueue& queue = timer_queue(ctx);
  if (queue.size() >= TimerQueue::kMaxLiveTimers)
    return JS_ThrowRangeError(ctx, "%s: too many live timers (limit is %zu)", fn, TimerQueue::kMaxLiveTimers);
  Value args(ctx, JS_UNDEFINED);
  if (argc > 2) {
    // Extra arguments live in a JS array, so their memory counts against the heap limit.
    args = Value(ctx, JS_NewArray(ctx));
    if (args.is_exception()) return JS_EXCEPTION;
    for (int i = 2; i < argc; ++i) {
      if (JS_SetPropertyUint32(ctx, args.get(), static_cast<uint32_t>(i - 2), JS_DupValue(ctx, argv[i])) < 0)
        return JS_EXCEPTION;
    }
  }
  try {
    const uint64_t id = queue.add(Value::dup(ctx, argv[0]), std::move(args), delay, repeat, Clock::now());
    return JS_NewInt64(ctx, static_cast<int64_t>(id));
  } catch (const std::bad_alloc&) {
    // Called from JS: a C++ exception must not unwind through QuickJS's C frames.
    return JS_ThrowOutOfMemory(ctx);
  }
}

JSValue js_set_timeout(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  return schedule(ctx, argc, argv, false);
}

JSValue js_set_interval(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  return schedule(ctx, argc, argv, true);
}

JSValue js_clear_timer(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  // Only numbers name timers; anything else is ignored without running skill code.
  if (argc >= 1 && JS_IsNumber(argv[0])) {
    double id = 0;
    if (JS_ToFloat64(ctx, &id, argv[0]) == 0 && id >= 1 && id <= 9007199254740991.0 && std::floor(id) == id)
      timer_queue(ctx).cancel(static_cast<uint64_t>(id));
  }
  return JS_UNDEFINED;
}

JSValue run_microtask(JSContext* ctx, int /*argc*/, JSValueConst* argv) {
  return JS_Call(ctx, argv[0], JS_UNDEFINED, 0, nullptr);
}

JSValue js_queue_microtask(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  if (argc < 1 || !JS_IsFunction(ctx, argv[0]))
    return JS_ThrowTypeError(ctx, "queueMicrotask: the callback must be a function");
  if (JS_EnqueueJob(ctx, run_microtask, 1, argv) < 0) return JS_EXCEPTION;
  return JS_UNDEFINED;
}

struct GlobalFunction {
  const char* name;
  JSCFunction* fn;
  int length;
};

constexpr GlobalFunction kTimerGlobals[] = {
    {"setTimeout", js_set_timeout, 2},         {"setInterval", js_set_interval, 2},
    {"clearTimeout", js_clear_timer, 1},       {"clearInterval", js_clear_timer, 1},
    {"queueMicrotask", js_queue_microtask, 1},
};

}  // namespace

bool install_timers(JSContext* ctx) {
  Value global(ctx, JS_GetGlobalObject(ctx));
  for (const GlobalFunction& g : kTimerGlobals) {
    JSValue f = JS_NewCFunction(ctx, g.fn, g.name, g.length);
    if (JS_IsException(f)) return false;
    // Writable and configurable like the built-ins, not enumerable.
    if (JS_DefinePropertyValueStr(ctx, global.get(), g.name, f, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
      return false;
  }
  return true;
}

}  // namespace skillbox::engine
