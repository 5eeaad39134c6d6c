// engine/session.h — one invocation, start to finish, on the calling thread.
//
// A Session builds a fresh QuickJS runtime and context (never reused), installs the limits and the host
// API, evaluates the skill's entry, calls the requested export with the input, drives the event loop
// until the export's promise settles or a limit is hit, turns the outcome into a SessionResult and frees
// everything. It is the bindings::Bridge of its context (the context opaque): every host call becomes a
// bus::Request sent to the invocation's bus::Endpoint, which the caller owns. Replies of asynchronous
// requests come back from other threads into the caller's ReplyInbox (the Endpoint's CompletionSink)
// and are delivered to JS by the event loop. The skill's sources come in memory (bus::SkillSources):
// the engine opens no file. Usage counters and logs of the host side (host_calls, http bytes, log
// lines) are the Endpoint's to report; the Session reports the rest (engine/call.h), and the runner
// puts the two together into a RunResult.
//
// Threading: everything except ReplyInbox::complete() and the DeadlineFlag runs on the thread that
// called run().
// That thread's stack must be larger than Limits::stack_bytes plus kNativeStackReserve (the runner
// guarantees it), because QuickJS only checks the stack limit at calls and in its parsers.
#pragma once

#include <quickjs.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings/bridge.h"
#include "bus/endpoint.h"
#include "bus/memory_budget.h"
#include "bus/skill_sources.h"
#include "bus/stop_token.h"
#include "engine/call.h"
#include "engine/flavor.h"
#include "engine/handles.h"
#include "engine/heap.h"
#include "engine/limiter.h"
#include "engine/pristine.h"
#include "engine/reply_inbox.h"
#include "engine/timers.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Stack a JS thread needs beyond Limits::stack_bytes: room for native frames between two stack checks
/// of the engine (a deep parser step, a regexp compile, a C function with a large frame) and for the
/// host code below the runtime.
inline constexpr uint64_t kNativeStackReserve = 4ull * 1024 * 1024;

/// Everything the engine needs for one invocation, resolved by the runner.
struct SessionParams {
  Call call;                              // what to run: skill id, export, input (engine/call.h)
  Limits limits;                          // effective limits (manifest lowered by the overrides)
  Clock::time_point start;                // when the invocation was accepted (usage.wall_ms counts from here)
  Clock::time_point deadline;             // wall-clock deadline of the invocation
  DeadlineFlag* deadline_flag = nullptr;  // set by the runner's watchdog
  bus::StopToken* stop_token = nullptr;   // raised with the first limit (bus/stop_token.h); may be null
  bus::MemoryBudget* memory_budget = nullptr;  // heap + host bytes (bus/memory_budget.h); may be null
  bus::SkillSources sources;                   // read by the host (runner/skill_reader.h)

  /// The API and calling convention of another skill format (compat/: OpenHuman bundles). Null: v1.
  std::shared_ptr<const Flavor> flavor;
  /// permissions.http.fetch: install the WHATWG fetch globals (bindings/fetch.h) after the host API.
  bool fetch = false;
  /// Worker mode: told the steps, heap in use and heap peak so far right before each host request is sent, so
  /// a supervisor that has to kill the worker knows how far it got. May be empty.
  std::function<void(uint64_t steps, uint64_t heap_bytes, uint64_t heap_peak_bytes)> report_progress;
  /// Worker mode: the process exits right after the result is sent, so the runtime is not freed value
  /// by value (JS_FreeRuntime: a garbage collection and a free per block) before the result can go;
  /// everything else is torn down as usual and the runtime's arena is returned to malloc whole.
  bool leave_runtime_to_process_exit = false;

  /// Start from this thread's pristine realm (engine/pristine.h) rather than building a runtime; the
  /// fresh build remains for when no image can be made. Off only for tests that compare the two.
  bool pristine = true;
  /// Address space of the pristine realm's region when this run builds it (the zygote's is smaller).
  size_t pristine_region_bytes = PristineRealm::kRegionBytes;

  // Testing hooks (not used by the runners).
  /// Called after the host API is installed, to add test-only globals.
  std::function<void(JSContext*)> install_extra_api;
};

/// Runs one invocation on the calling thread, sending its host calls to `endpoint`, whose
/// asynchronous replies must arrive in `inbox`. Both must outlive the call; the endpoint is
/// cancelled (Endpoint::cancel_all) before this returns. Never throws.
SessionResult run_session(SessionParams params, bus::Endpoint& endpoint, ReplyInbox& inbox);

class Session final : public bindings::Bridge {
 public:
  /// `endpoint` and `inbox` as for run_session().
  Session(SessionParams params, bus::Endpoint& endpoint, ReplyInbox& inbox);
  ~Session() override;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Runs the invocation; call once.
  SessionResult run();

  // bindings::Bridge
  bus::Reply call(bus::Request request) override;
  JSValue call_async(JSContext* ctx, bus::Request request, bindings::ReplyDecoder decode) override;
  bus::Reply call_blocking(bus::Request request) override;
  void note_host_error(JSContext* ctx, JSValueConst error, const char* code) override;
  bool stopping() override;
  void rewrite_log_text(std::string& text) override;

  TimerQueue& timers() { return *timers_; }
  /// The runtime's allocator account (tests scan the live heap through it, HeapAccount).
  [[nodiscard]] const HeapAccount& heap() const { return *heap_; }

 private:
  struct PendingCall {
    Value resolve;
    Value reject;
    bindings::ReplyDecoder decode = nullptr;
    // The skill's frames where it made the request (a string, or undefined when they could not be
    // taken): a rejection is made later, from the event loop, where no frame of the skill runs, and
    // gets this as its `stack`, so the error says which line of the skill made the failing call.
    Value caller_stack;
  };
  /// The first kCallerStackFrames lines of the stack of the JS frames running now, as a string of
  /// ctx, or undefined. Never leaves an exception pending (the limiter sees an out-of-memory).
  static Value caller_stack(JSContext* ctx);
  // Frames kept of a request's caller stack: where the call is, and a few callers to say how it got
  // there. A bound, so that many pending requests made deep in recursion hold little heap each.
  static constexpr size_t kCallerStackFrames = 10;
  enum class Stage : uint8_t { running, settled, failed };

  bool start_runtime();
  bool build_runtime();
  bool restore_runtime();
  void bind_runtime();
  bool load_entry(Value& exports_holder, bool& is_module);
  bool parse_input(Value& input);
  [[nodiscard]] std::vector<std::string> export_candidates() const;
  bool call_export(const Value& exports, bool is_module, const Value& input, Value& promise);
  bool call_flavor(const Value& input, Value& promise);
  bool await_value(Value ret, Value& promise);
  void event_loop(const Value& promise);
  bool run_jobs();
  bool deliver_replies();
  bool fire_timer();
  void settle(uint64_t id, bus::Reply reply);
  std::optional<bus::Reply> dispatch(uint64_t id, bus::Request request);
  void fail_with_exception();
  // describe_error(), with `code` set only when `error` is an object the host made (note_host_error).
  ErrorInfo describe(JSValueConst error) const;
  void finish_from_value(JSValueConst value);
  // The flavor's value beside an error outcome (Flavor::value_on_error), into result_.value_json.
  void value_on_error(const ErrorInfo& error);
  void finish(Outcome outcome, ErrorInfo error);
  void limit_result();
  void teardown();

  // Promise rejection tracking (JS_SetHostPromiseRejectionTracker): a rejected promise with no
  // handler is remembered; once the job queue is empty, each one still unhandled is reported (a warn
  // line, Usage::unhandled_rejections) and forgotten. `awaited` is the export's promise, whose
  // rejection is the run's error instead.
  static void track_rejection(JSContext* ctx, JSValueConst promise, JSValueConst reason, JS_BOOL is_handled,
                              void* opaque);
  void report_unhandled_rejections(JSValueConst awaited);

  static char* normalize_module(JSContext* ctx, const char* base, const char* name, void* opaque);
  static JSModuleDef* load_module(JSContext* ctx, const char* name, void* opaque);

  SessionParams params_;
  Limiter limiter_;
  HeapAccount own_heap_;  // the fresh build's; a restored runtime counts on its realm's
  HeapAccount* heap_ = &own_heap_;
  PristineRealm* pristine_ = nullptr;  // the realm this run borrowed, if any
  RuntimePtr rt_;
  ContextPtr ctx_;
  bus::Endpoint& endpoint_;
  ReplyInbox& inbox_;  // replies of asynchronous requests, filled from other threads
  std::unique_ptr<TimerQueue> timers_;
  std::map<uint64_t, PendingCall> pending_;
  // Replies that arrived while call_blocking() waited for another one; delivered by the event loop.
  std::deque<std::pair<uint64_t, bus::Reply>> deferred_;
  // The flavor's per-context state (Flavor::install), freed with the context.
  Value flavor_state_;
  uint64_t next_request_id_ = 1;

  // For a classic script: the candidate export names' global values before the script ran. A value
  // still there afterwards is a built-in (eval, Function, log, ...), not a function of the skill.
  std::vector<Value> script_globals_before_;

  // The host errors of this run, newest last, each held so that its address is not reused while it
  // is remembered. Bounded: past kMaxHostErrors the oldest is forgotten, and a run that ends with it
  // reports no code (a skill that makes this many errors and rethrows an old one).
  static constexpr size_t kMaxHostErrors = 1024;
  struct HostError {
    Value error;
    const char* code;
  };
  std::deque<HostError> host_errors_;

  // Rejected promises without a handler, not yet reported, oldest first. Bounded: a rejection past
  // kMaxUnhandled is counted as unhandled at once, since it cannot be watched for a later handler.
  static constexpr size_t kMaxUnhandled = 1024;
  // Warn lines per run; further unhandled rejections are only counted.
  static constexpr uint64_t kMaxUnhandledLines = 10;
  struct Rejection {
    Value promise;
    Value reason;
  };
  std::vector<Rejection> unhandled_;
  uint64_t unhandled_lines_ = 0;  // warn lines written so far

  // Set when the module loader refused a specifier or a file (resolve_specifier, find_module_source):
  // such a refusal while the entry compiles is in the skill's static import graph, so the skill is
  // `invalid`, as `skillbox check` says, rather than a run that threw.
  bool module_refused_ = false;
  // The import the loader normalized last (the importing file's name, the specifier as written): the
  // one a refusal is about, so that the error can say where the import is written.
  std::string last_importer_;
  std::string last_specifier_;
  /// Log lines whose stack frames rewrite_log_text has source-mapped, at most kMaxMappedLogLines.
  static constexpr int kMaxMappedLogLines = 8;
  int mapped_log_lines_ = 0;

  bool finished_ = false;
  SessionResult result_;
};

}  // namespace skillbox::engine
