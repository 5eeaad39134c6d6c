// engine/session.h — one invocation, start to finish, on the calling thread.
//
// A Session builds a fresh QuickJS runtime and context (never reused), installs the limits and the host
// API, evaluates the skill's entry, calls the requested export with the input, drives the event loop
// until the export's promise settles or a limit is hit, turns the outcome into a RunResult and frees
// everything. It is the bindings::Bridge of its context (the context opaque) and owns the invocation's
// bus::Dispatcher; replies of asynchronous requests come back through bus::CompletionSink::complete
// from other threads and are delivered to JS by the event loop.
//
// Threading: everything except complete() and the DeadlineFlag runs on the thread that called run().
// That thread's stack must be larger than Limits::stack_bytes plus kNativeStackReserve (the runner
// guarantees it), because QuickJS only checks the stack limit at calls and in its parsers.
#pragma once

#include <quickjs.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings/bridge.h"
#include "bus/dispatcher.h"
#include "engine/handles.h"
#include "engine/heap.h"
#include "engine/limiter.h"
#include "engine/skill_files.h"
#include "engine/timers.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Stack a JS thread needs beyond Limits::stack_bytes: room for native frames between two stack checks
/// of the engine (a deep parser step, a regexp compile, a C function with a large frame) and for the
/// host code below the runtime.
inline constexpr uint64_t kNativeStackReserve = 4ull * 1024 * 1024;

/// Everything the engine needs for one invocation, resolved by the runner.
struct SessionParams {
  const Invocation* invocation = nullptr;
  Limits limits;                          // effective limits (manifest lowered by the overrides)
  Clock::time_point start;                // when the invocation was accepted (usage.wall_ms counts from here)
  Clock::time_point deadline;             // wall-clock deadline of the invocation
  DeadlineFlag* deadline_flag = nullptr;  // set by the runner's watchdog
  bus::InvocationContext bus_context;

  // Testing hooks (not used by the runners).
  /// Called after the host API is installed, to add test-only globals.
  std::function<void(JSContext*)> install_extra_api;
  /// Sees every request before the dispatcher. Returning a reply answers it; returning nullopt makes
  /// it asynchronous: the test later calls sink.complete(id, reply), from any thread.
  std::function<std::optional<bus::Reply>(uint64_t id, const bus::Request& request,
                                          bus::CompletionSink& sink)>
      intercept;
};

/// Runs one invocation on the calling thread. Never throws.
RunResult run_session(SessionParams params);

class Session final : public bindings::Bridge, public bus::CompletionSink {
 public:
  explicit Session(SessionParams params);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Runs the invocation; call once.
  RunResult run();

  // bindings::Bridge
  bus::Reply call(bus::Request request) override;
  JSValue call_async(JSContext* ctx, bus::Request request, bindings::ReplyDecoder decode) override;
  // bus::CompletionSink (any thread)
  void complete(uint64_t request_id, bus::Reply reply) override;

  TimerQueue& timers() { return *timers_; }

 private:
  struct PendingCall {
    Value resolve;
    Value reject;
    bindings::ReplyDecoder decode = nullptr;
  };
  enum class Stage : uint8_t { running, settled, failed };

  bool start_runtime();
  bool load_entry(Value& exports_holder, bool& is_module);
  bool parse_input(Value& input);
  [[nodiscard]] std::vector<std::string> export_candidates() const;
  bool call_export(const Value& exports, bool is_module, const Value& input, Value& promise);
  void event_loop(const Value& promise);
  bool run_jobs();
  bool deliver_replies();
  bool fire_timer();
  void settle(uint64_t id, bus::Reply reply);
  std::optional<bus::Reply> dispatch(uint64_t id, bus::Request request);
  void fail_with_exception();
  void finish_from_value(JSValueConst value);
  void finish(Outcome outcome, ErrorInfo error);
  void limit_result();
  void teardown();

  static char* normalize_module(JSContext* ctx, const char* base, const char* name, void* opaque);
  static JSModuleDef* load_module(JSContext* ctx, const char* name, void* opaque);

  SessionParams params_;
  Limiter limiter_;
  HeapAccount heap_;
  RuntimePtr rt_;
  ContextPtr ctx_;
  std::optional<SkillFiles> files_;
  std::unique_ptr<bus::Dispatcher> dispatcher_;
  std::unique_ptr<TimerQueue> timers_;
  std::map<uint64_t, PendingCall> pending_;
  uint64_t next_request_id_ = 1;

  // Replies of asynchronous requests, filled by complete() from other threads.
  std::mutex inbox_mutex_;
  std::condition_variable inbox_cv_;
  std::deque<std::pair<uint64_t, bus::Reply>> inbox_;

  // For a classic script: the candidate export names' global values before the script ran. A value
  // still there afterwards is a built-in (eval, Function, log, ...), not a function of the skill.
  std::vector<Value> script_globals_before_;

  bool finished_ = false;
  RunResult result_;
};

}  // namespace skillbox::engine
