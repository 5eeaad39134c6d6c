#include "engine/session.h"

#include <sys/random.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "bindings/fetch.h"
#include "bindings/install.h"
#include "engine/realm.h"
#include "engine/result.h"
#include "engine/skill_files.h"
#include "engine/source_map.h"

namespace skillbox::engine {
namespace {

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

std::string type_name(JSContext* ctx, JSValueConst v) {
  if (JS_IsUndefined(v)) return "undefined";
  if (JS_IsNull(v)) return "null";
  if (JS_IsFunction(ctx, v)) return "a function";
  if (JS_IsNumber(v)) return "a number";
  if (JS_IsString(v)) return "a string";
  if (JS_IsBool(v)) return "a boolean";
  if (JS_IsSymbol(v)) return "a symbol";
  if (JS_IsBigInt(ctx, v)) return "a bigint";
  return "an object";
}

ErrorInfo host_error(std::string name, std::string message) {
  return ErrorInfo{std::move(name), std::move(message), "", ""};
}

}  // namespace

TimerQueue& timer_queue(JSContext* ctx) {
  return static_cast<Session*>(JS_GetRuntimeOpaque(JS_GetRuntime(ctx)))->timers();
}

SessionResult run_session(SessionParams params, bus::Endpoint& endpoint, ReplyInbox& inbox) {
  try {
    Session session(std::move(params), endpoint, inbox);
    return session.run();
  } catch (const std::exception& e) {
    endpoint.cancel_all();
    SessionResult r;
    r.outcome = Outcome::internal;
    r.error =
        host_error("InternalError", std::string("skillbox failed while running the skill: ") + e.what());
    return r;
  }
}

Session::Session(SessionParams params, bus::Endpoint& endpoint, ReplyInbox& inbox)
    : params_(std::move(params)),
      limiter_(params_.limits, params_.deadline, *params_.deadline_flag, params_.stop_token),
      own_heap_(limiter_, params_.memory_budget),
      endpoint_(endpoint),
      inbox_(inbox) {}

Session::~Session() {
  teardown();
}

SessionResult Session::run() {
  // Wall time counts from when the invocation was accepted, the same origin as the deadline, so a
  // timed-out run never reports less wall time than its limit. Direct users may leave start unset.
  const Clock::time_point wall_start =
      params_.start == Clock::time_point{} ? Clock::now() : std::min(params_.start, Clock::now());
  const uint64_t cpu_start = thread_cpu_ns();
  if (start_runtime()) {
    // Every JS value of the run lives in this scope, so all are freed before the runtime.
    // The input first: bad input is the caller's error and no skill code runs for it.
    Value input;
    Value exports;
    bool is_module = false;
    Value promise;
    if (parse_input(input) && load_entry(exports, is_module)) {
      const bool called =
          params_.flavor ? call_flavor(input, promise) : call_export(exports, is_module, input, promise);
      if (called) event_loop(promise);
    }
  }
  if (limiter_.tripped() != LimitKind::none) limit_result();
  result_.usage.steps = limiter_.steps();
  teardown();
  result_.usage.heap_peak_bytes = heap_->peak_bytes();
  result_.usage.wall_ms = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - wall_start).count());
  result_.usage.cpu_ms = (thread_cpu_ns() - cpu_start) / 1'000'000;
  return std::move(result_);
}

// A seed for Math.random from the OS CSPRNG: each run draws its own numbers, a restored realm
// included (its image holds the state it was saved with).
namespace {
uint64_t random_seed() {
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed))
    seed =
        static_cast<uint64_t>(Clock::now().time_since_epoch().count()) ^ reinterpret_cast<uintptr_t>(&seed);
  return seed;
}
}  // namespace

bool Session::start_runtime() {
  if (!restore_runtime() && !build_runtime()) return false;
  JSContext* ctx = ctx_.get();
  JS_SetRandomSeed(ctx, random_seed());
  timers_ = std::make_unique<TimerQueue>(ctx);
  bool ok = true;
  if (params_.flavor) ok = params_.flavor->install(ctx, params_.call, flavor_state_);
  if (ok && params_.install_extra_api) params_.install_extra_api(ctx);
  // From here on the heap limit and the deadline apply (see HeapAccount::enforce). The realm and the
  // host API take a fixed ~70 KB, far below Limits::kMinMemoryBytes.
  JS_SetMemoryLimit(rt_.get(), static_cast<size_t>(params_.limits.memory_bytes));
  heap_->enforce();
  if (heap_->current_bytes() > params_.limits.memory_bytes) limiter_.trip(LimitKind::memory);
  Value exc(ctx, JS_GetException(ctx));
  if (!ok || !JS_IsNull(exc.get()) || limiter_.tripped() != LimitKind::none) {
    if (limiter_.tripped() == LimitKind::none) {
      ErrorInfo e = describe_error(ctx, exc.get());
      finish(Outcome::internal, host_error("InternalError", "installing the host API failed: " + e.message));
    }
    return false;
  }
  return true;
}

// The runtime of this thread's pristine realm, restored (engine/pristine.h). False when there is none
// to take (no image could be made, the run asked for a fresh build, or a nested run holds it).
bool Session::restore_runtime() {
  if (!params_.pristine) return false;
  PristineRealm* realm = thread_realm(params_.fetch, params_.pristine_region_bytes);
  if (realm == nullptr || !realm->acquire()) return false;
  pristine_ = realm;
  heap_ = &realm->heap();
  heap_->rebind(limiter_, params_.memory_budget);
  rt_.reset(realm->runtime());
  ctx_.reset(realm->context());
  // The stack limit is measured from here, as JS_NewRuntime2 would.
  JS_UpdateStackTop(rt_.get());
  bind_runtime();
  return true;
}

// A new runtime and context with the host API installed: the path without a pristine realm.
bool Session::build_runtime() {
  rt_.reset(JS_NewRuntime2(&HeapAccount::kFunctions, heap_));
  if (!rt_) {
    finish(Outcome::internal,
           host_error("InternalError", "could not create a JS runtime (host out of memory)"));
    return false;
  }
  ctx_.reset(new_skill_context(rt_.get(), *heap_));
  if (!ctx_) {
    if (limiter_.tripped() == LimitKind::none)
      finish(Outcome::internal, host_error("InternalError", "could not create the JS context"));
    return false;
  }
  // The stack limit is measured from here (JS_NewRuntime2 recorded this thread's stack position).
  bind_runtime();
  JSContext* ctx = ctx_.get();
  bool ok = bindings::install_host_api(ctx) && install_timers(ctx);
  if (ok && params_.fetch) ok = bindings::install_fetch(ctx);
  Value exc(ctx, JS_GetException(ctx));
  if (!ok || !JS_IsNull(exc.get())) {
    if (limiter_.tripped() == LimitKind::none) {
      ErrorInfo e = describe_error(ctx, exc.get());
      finish(Outcome::internal, host_error("InternalError", "installing the host API failed: " + e.message));
    }
    return false;
  }
  return true;
}

// What differs between runs of one runtime: this run's stack limit, hooks and opaques.
void Session::bind_runtime() {
  JSRuntime* rt = rt_.get();
  JSContext* ctx = ctx_.get();
  JS_SetMaxStackSize(rt, static_cast<size_t>(params_.limits.stack_bytes));
  JS_SetRuntimeOpaque(rt, this);
  JS_SetModuleLoaderFunc(rt, &Session::normalize_module, &Session::load_module, this);
  JS_SetHostPromiseRejectionTracker(rt, &Session::track_rejection, this);
  JS_SetContextOpaque(ctx, static_cast<bindings::Bridge*>(this));
  limiter_.attach(rt, ctx);
}

bool Session::load_entry(Value& exports, bool& is_module) {
  JSContext* ctx = ctx_.get();
  // The host checked and read the entry (runner/skill_reader.h); sources built in code may lack it.
  const std::string* name = &params_.sources.entry;
  auto found = find_module_source(params_.sources, *name);
  if (!found) {
    finish(Outcome::invalid, host_error("InvalidSkill", "entry file " + found.error().message));
    return false;
  }
  const std::string* source = *found;
  // A module or a classic script by entry_kind's rule. Compiling never runs code, so nothing is
  // evaluated twice.
  const EntryKind kind = entry_kind(*name, *source);
  Value compiled;
  is_module = kind == EntryKind::module;
  if (kind == EntryKind::script_else_module) {
    compiled = Value(ctx, JS_Eval(ctx, source->c_str(), source->size(), name->c_str(),
                                  JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY));
    if (compiled.is_exception() && limiter_.tripped() == LimitKind::none) {
      Value script_error(ctx, JS_GetException(ctx));
      is_module = true;  // report the module's syntax error if it is not one either
    }
  }
  if (is_module) {
    // Compiling a module also loads and compiles what it imports, transitively (its static graph).
    module_refused_ = false;
    compiled = Value(ctx, JS_Eval(ctx, source->c_str(), source->size(), name->c_str(),
                                  JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY));
  } else if (compiled.is_undefined()) {
    compiled = Value(ctx, JS_Eval(ctx, source->c_str(), source->size(), name->c_str(),
                                  JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY));
  }
  if (compiled.is_exception()) {
    if (limiter_.check()) {
      fail_with_exception();  // the heap or stack limit while compiling: the limiter names it
      return false;
    }
    // Nothing of the skill has run: the code itself is wrong, as `skillbox check` reports it. A
    // static import the skill's files cannot satisfy is InvalidSkill; a syntax error (in the entry
    // or in a file it imports, top-level `await` included) keeps the engine's name, message and
    // the "at file:line" of where the parser stopped.
    ErrorInfo e = take_exception(ctx);
    if (is_module && module_refused_) {
      ErrorInfo refused = host_error("InvalidSkill", e.message);
      auto importer = params_.sources.files.find(last_importer_);
      const uint32_t line =
          importer == params_.sources.files.end() ? 0 : line_of_specifier(importer->second, last_specifier_);
      if (line != 0) refused.stack = "    at " + last_importer_ + ":" + std::to_string(line) + "\n";
      e = std::move(refused);
    }
    finish(Outcome::invalid, std::move(e));
    return false;
  }
  // A compiled module is kept by the context; its definition stays valid after evaluation.
  auto* module = is_module ? static_cast<JSModuleDef*>(JS_VALUE_GET_PTR(compiled.get())) : nullptr;
  if (!is_module) {
    // A script's exports are the functions it defines, never a built-in global: otherwise a caller
    // choosing the export name (`eval`, `Function`, `constructor`) would run its input as code with
    // the skill's permissions. No skill code has run yet, so reading the globals runs none.
    Value global(ctx, JS_GetGlobalObject(ctx));
    for (const std::string& candidate : export_candidates()) {
      Value before(ctx, JS_GetPropertyStr(ctx, global.get(), candidate.c_str()));
      if (before.is_exception()) {
        fail_with_exception();
        return false;
      }
      script_globals_before_.push_back(std::move(before));
    }
  }
  Value evaluated(ctx, JS_EvalFunction(ctx, compiled.release()));
  if (evaluated.is_exception()) {
    fail_with_exception();
    return false;
  }
  exports = Value(ctx, is_module ? JS_GetModuleNamespace(ctx, module) : JS_GetGlobalObject(ctx));
  if (exports.is_exception()) {
    fail_with_exception();
    return false;
  }
  return true;
}

bool Session::parse_input(Value& input) {
  JSContext* ctx = ctx_.get();
  static const std::string kNull = "null";
  const std::string& text = params_.call.input_json.empty() ? kNull : params_.call.input_json;
  input = Value(ctx, JS_ParseJSON(ctx, text.c_str(), text.size(), "<input>"));
  if (input.is_exception()) {
    ErrorInfo e = take_exception(ctx);
    // The engine's parser reports nesting deeper than its stack allows as "stack overflow"; the
    // text is valid JSON then, so say what is wrong with it.
    if (limiter_.tripped() == LimitKind::none && e.message == "stack overflow")
      finish(Outcome::invalid, host_error("InvalidInput",
                                          "the input JSON is nested too deeply for the engine's parser; "
                                          "pass flatter input (or raise limits.stack_kb)"));
    else if (limiter_.tripped() == LimitKind::none)
      finish(Outcome::invalid, host_error("InvalidInput", "the input is not valid JSON: " + e.message));
    return false;
  }
  return true;
}

std::vector<std::string> Session::export_candidates() const {
  const std::string& name = params_.call.export_name;
  if (name.empty()) return {"default", "run"};
  return {name};
}

namespace {

/// "; its exports are 'a', 'b'" (at most kListed names), or "; it exports nothing": what a caller who
/// asked for a missing export can call instead. Empty when the names cannot be listed (out of memory).
std::string exports_of(JSContext* ctx, const Value& exports) {
  constexpr size_t kListed = 20;
  JSPropertyEnum* props = nullptr;
  uint32_t count = 0;
  if (JS_GetOwnPropertyNames(ctx, &props, &count, exports.get(), JS_GPN_STRING_MASK | JS_GPN_ENUM_ONLY) < 0) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return "";
  }
  std::string listed;
  for (uint32_t i = 0; i < count; ++i) {
    if (i < kListed) {
      if (const char* name = JS_AtomToCString(ctx, props[i].atom)) {
        listed += std::string(listed.empty() ? "" : ", ") + "'" + name + "'";
        JS_FreeCString(ctx, name);
      }
    }
    JS_FreeAtom(ctx, props[i].atom);
  }
  js_free(ctx, props);
  if (count == 0) return "; it exports nothing";
  if (count > kListed) listed += " and " + std::to_string(count - kListed) + " more";
  return "; its exports are " + listed;
}

}  // namespace

bool Session::call_export(const Value& exports, bool is_module, const Value& input, Value& promise) {
  JSContext* ctx = ctx_.get();
  const std::string& entry = params_.sources.entry;

  const std::vector<std::string> names = export_candidates();
  Value fn;
  std::string found;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    Value v(ctx, JS_GetPropertyStr(ctx, exports.get(), name.c_str()));
    if (v.is_exception()) {
      fail_with_exception();
      return false;
    }
    const bool builtin = !is_module && i < script_globals_before_.size() && v.is_object() &&
                         JS_VALUE_GET_PTR(v.get()) == JS_VALUE_GET_PTR(script_globals_before_[i].get());
    if (!v.is_undefined() && !builtin) {
      fn = std::move(v);
      found = name;
      break;
    }
  }
  const char* kind = is_module ? "export" : "global function";
  if (found.empty()) {
    std::string wanted =
        params_.call.export_name.empty() ? "'default' or 'run'" : "'" + params_.call.export_name + "'";
    finish(Outcome::invalid,
           host_error("InvalidSkill",
                      entry + " has no " + kind + " named " + wanted +
                          (is_module ? exports_of(ctx, exports)
                                     : " (a script's own top-level functions are its exports; built-in "
                                       "globals are not)")));
    return false;
  }
  if (!JS_IsFunction(ctx, fn.get())) {
    finish(Outcome::invalid,
           host_error("InvalidSkill", "the " + std::string(kind) + " '" + found + "' of " + entry + " is " +
                                          type_name(ctx, fn.get()) + ", not a function"));
    return false;
  }

  JSValue arg = input.get();
  return await_value(Value(ctx, JS_Call(ctx, fn.get(), JS_UNDEFINED, 1, &arg)), promise);
}

bool Session::call_flavor(const Value& input, Value& promise) {
  JSContext* ctx = ctx_.get();
  return await_value(Value(ctx, params_.flavor->call(ctx, params_.call, flavor_state_.get(), input.get())),
                     promise);
}

bool Session::await_value(Value ret, Value& promise) {
  JSContext* ctx = ctx_.get();
  if (ret.is_exception()) {
    fail_with_exception();
    return false;
  }
  if (JS_PromiseState(ctx, ret.get()) != JS_PROMISE_NOT_A_PROMISE) {
    promise = std::move(ret);  // a native promise is watched directly: no `then` lookup
    return true;
  }
  // Anything else is awaited: resolve a promise of ours with it (thenables are followed per spec).
  JSValue funcs[2];
  Value own(ctx, JS_NewPromiseCapability(ctx, funcs));
  if (own.is_exception()) {
    fail_with_exception();
    return false;
  }
  Value resolve(ctx, funcs[0]);
  Value reject(ctx, funcs[1]);
  JSValue value = ret.get();
  Value r(ctx, JS_Call(ctx, resolve.get(), JS_UNDEFINED, 1, &value));
  if (r.is_exception()) {
    fail_with_exception();
    return false;
  }
  promise = std::move(own);
  return true;
}

void Session::event_loop(const Value& promise) {
  JSContext* ctx = ctx_.get();
  for (;;) {
    if (limiter_.check() || !run_jobs()) return;
    report_unhandled_rejections(promise.get());
    if (limiter_.check()) return;
    const JSPromiseStateEnum state = JS_PromiseState(ctx, promise.get());
    if (state != JS_PROMISE_PENDING) {
      Value settled(ctx, JS_PromiseResult(ctx, promise.get()));
      if (state == JS_PROMISE_FULFILLED) {
        finish_from_value(settled.get());
      } else {
        ErrorInfo e = describe(settled.get());
        if (params_.flavor) value_on_error(e);
        finish(Outcome::error, std::move(e));
      }
      return;
    }
    if (deliver_replies()) continue;
    if (finished_ || limiter_.tripped() != LimitKind::none) return;
    if (fire_timer()) continue;
    if (finished_ || limiter_.tripped() != LimitKind::none) return;

    if (timers_->size() == 0 && pending_.empty()) {
      finish(Outcome::error,
             host_error("Error",
                        "the export returned a promise that can never settle: no jobs, timers or host "
                        "requests are left that could settle it"));
      return;
    }
    Clock::time_point until = limiter_.deadline();
    if (auto due = timers_->next_due(); due && *due < until) until = *due;
    inbox_.wait_until(until);
  }
}

bool Session::run_jobs() {
  JSRuntime* rt = rt_.get();
  while (JS_IsJobPending(rt)) {
    JSContext* job_ctx = nullptr;
    const int r = JS_ExecutePendingJob(rt, &job_ctx);
    if (limiter_.check()) {
      if (r < 0) JS_FreeValue(job_ctx, JS_GetException(job_ctx));
      return false;
    }
    if (r < 0) {
      // An exception no promise could take: a queueMicrotask callback threw. Like an uncaught
      // exception in Node, it ends the run.
      fail_with_exception();
      return false;
    }
  }
  return true;
}

bool Session::deliver_replies() {
  std::deque<std::pair<uint64_t, bus::Reply>> replies = std::move(deferred_);
  deferred_.clear();
  for (auto& reply : inbox_.take()) replies.push_back(std::move(reply));
  for (auto& [id, reply] : replies) {
    if (limiter_.check()) return false;
    settle(id, std::move(reply));
  }
  return !replies.empty();
}

bool Session::fire_timer() {
  JSContext* ctx = ctx_.get();
  auto due = timers_->take_due(Clock::now());
  if (!due) return false;
  std::vector<JSValue> args;
  if (JS_IsObject(due->args.get())) {
    uint32_t n = 0;
    Value len(ctx, JS_GetPropertyStr(ctx, due->args.get(), "length"));
    if (len.is_exception() || JS_ToUint32(ctx, &n, len.get()) < 0) {
      fail_with_exception();
      return true;
    }
    for (uint32_t i = 0; i < n; ++i) {
      JSValue a = JS_GetPropertyUint32(ctx, due->args.get(), i);
      if (JS_IsException(a)) {
        for (JSValue v : args) JS_FreeValue(ctx, v);
        fail_with_exception();
        return true;
      }
      args.push_back(a);
    }
  }
  Value r(ctx, JS_Call(ctx, due->callback.get(), JS_UNDEFINED, static_cast<int>(args.size()), args.data()));
  for (JSValue v : args) JS_FreeValue(ctx, v);
  if (r.is_exception()) fail_with_exception();  // an uncaught exception in a timer ends the run
  return true;
}

void Session::settle(uint64_t id, bus::Reply reply) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // cancelled or not ours
  PendingCall call = std::move(it->second);
  pending_.erase(it);
  JSContext* ctx = ctx_.get();
  Value arg;
  bool fulfilled = true;
  if (const auto* err = std::get_if<bus::ErrorReply>(&reply)) {
    arg = Value(ctx, bindings::make_host_error(ctx, *err));
    fulfilled = false;
    // Made here, in the event loop, its stack holds no frame of the skill: it gets the stack of the
    // call that made the request, so the error says which line of the skill made the failing call.
    if (arg.is_object() && !stopping() && JS_IsString(call.caller_stack.get()) &&
        JS_DefinePropertyValueStr(ctx, arg.get(), "stack", call.caller_stack.dup(),
                                  JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) < 0)
      arg = Value(ctx, JS_EXCEPTION);  // only out of memory: rejected with that below
  } else {
    arg = Value(ctx, call.decode(ctx, reply));
  }
  if (arg.is_exception()) {
    arg = Value(ctx, JS_GetException(ctx));
    fulfilled = false;
  }
  JSValue v = arg.get();
  Value r(ctx, JS_Call(ctx, fulfilled ? call.resolve.get() : call.reject.get(), JS_UNDEFINED, 1, &v));
  if (r.is_exception()) JS_FreeValue(ctx, JS_GetException(ctx));  // only out of memory; the limiter knows
}

namespace {
// The reply of a request made or finished after a limit tripped. No skill code sees it: the binding
// turns it into the uncatchable interrupt (bindings::make_host_error, Bridge::stopping).
bus::ErrorReply limit_reached() {
  return {bus::ErrorCode::IoError, "the invocation is ending: a limit was reached"};
}
}  // namespace

bool Session::stopping() {
  return limiter_.tripped() != LimitKind::none;
}

bus::Reply Session::call(bus::Request request) {
  // check(), not tripped(): a deadline that passed while the skill was inside a native call is
  // recorded here, before the request could take effect (the Endpoint refuses it too).
  if (limiter_.check()) return limit_reached();
  std::optional<bus::Reply> reply = dispatch(next_request_id_++, std::move(request));
  // A limit that tripped while the host served the request (the deadline passed during a lock wait
  // or a long statement): whatever the host answered, the skill must not see it.
  if (limiter_.check()) return limit_reached();
  if (reply) return std::move(*reply);
  return bus::ErrorReply{bus::ErrorCode::IoError,
                         "internal error: an asynchronous request was sent synchronously"};
}

JSValue Session::call_async(JSContext* ctx, bus::Request request, bindings::ReplyDecoder decode) {
  if (limiter_.check()) return JS_ThrowInterrupted(ctx);
  JSValue funcs[2];
  JSValue promise = JS_NewPromiseCapability(ctx, funcs);
  if (JS_IsException(promise)) return promise;
  const uint64_t id = next_request_id_++;
  try {
    pending_.emplace(id, PendingCall{Value(ctx, funcs[0]), Value(ctx, funcs[1]), decode, caller_stack(ctx)});
  } catch (const std::bad_alloc&) {
    JS_FreeValue(ctx, promise);
    return JS_ThrowOutOfMemory(ctx);
  }
  std::optional<bus::Reply> reply = dispatch(id, std::move(request));
  if (limiter_.check()) {
    // The limit tripped while the host took the request: the promise never settles, and no skill
    // code runs after this call.
    pending_.erase(id);
    JS_FreeValue(ctx, promise);
    return JS_ThrowInterrupted(ctx);
  }
  if (reply) settle(id, std::move(*reply));  // refused at once (e.g. by policy): settle now
  return promise;
}

Value Session::caller_stack(JSContext* ctx) {
  // QuickJS builds an error's `stack` when it throws one (build_backtrace); there is no other public
  // way to read the frames. The error is taken back at once: no skill code sees it or runs.
  JS_ThrowTypeError(ctx, "%s", "");
  const Value error(ctx, JS_GetException(ctx));
  if (!JS_IsObject(error.get())) return {ctx, JS_UNDEFINED};  // out of memory
  Value stack(ctx, JS_GetPropertyStr(ctx, error.get(), "stack"));
  if (stack.is_exception()) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return {ctx, JS_UNDEFINED};
  }
  if (!JS_IsString(stack.get())) return {ctx, JS_UNDEFINED};
  size_t len = 0;
  const char* text = JS_ToCStringLen(ctx, &len, stack.get());
  if (text == nullptr) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return {ctx, JS_UNDEFINED};
  }
  const std::string_view view(text, len);
  size_t cut = 0;
  for (size_t frames = 0; frames < kCallerStackFrames && cut < view.size(); ++frames) {
    const size_t nl = view.find('\n', cut);
    cut = nl == std::string_view::npos ? view.size() : nl + 1;
  }
  if (cut < view.size()) stack = Value(ctx, JS_NewStringLen(ctx, text, cut));
  JS_FreeCString(ctx, text);
  if (stack.is_exception()) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return {ctx, JS_UNDEFINED};
  }
  return stack;
}

bus::Reply Session::call_blocking(bus::Request request) {
  if (limiter_.check()) return limit_reached();
  const uint64_t id = next_request_id_++;
  std::optional<bus::Reply> reply = dispatch(id, std::move(request));
  if (limiter_.check()) return limit_reached();
  if (reply) return std::move(*reply);  // refused at once (policy)
  // The JS thread blocks here, as the bundle's synchronous API requires; the wait is bounded by the
  // deadline, and the limiter (deadline, watchdog) is checked at every wake-up.
  for (;;) {
    for (auto& [rid, r] : inbox_.take()) {
      if (rid == id && !reply) {
        reply = std::move(r);
      } else {
        deferred_.emplace_back(rid, std::move(r));
      }
    }
    if (limiter_.check()) return limit_reached();  // even if its reply came: the limit was first seen now
    if (reply) return std::move(*reply);
    inbox_.wait_until(limiter_.deadline());
  }
}

std::optional<bus::Reply> Session::dispatch(uint64_t id, bus::Request request) {
  // Called from JS (through a binding): a C++ exception must not unwind through QuickJS's C frames.
  try {
    if (params_.report_progress)
      params_.report_progress(limiter_.steps(), heap_->current_bytes(), heap_->peak_bytes());
    return endpoint_.send(id, std::move(request));
  } catch (const std::exception& e) {
    return bus::ErrorReply{bus::ErrorCode::IoError,
                           std::string("the host failed to handle the request: ") + e.what()};
  }
}

void Session::fail_with_exception() {
  JSContext* ctx = ctx_.get();
  if (limiter_.check()) {
    // The exception is the engine's reaction to a limit (or a fake of one): the limiter decides.
    JS_FreeValue(ctx, JS_GetException(ctx));
    return;
  }
  const Value exception(ctx, JS_GetException(ctx));
  finish(Outcome::error, describe(exception.get()));
}

ErrorInfo Session::describe(JSValueConst error) const {
  ErrorInfo e = describe_error(ctx_.get(), error);
  if (JS_IsObject(error)) {
    for (const HostError& h : host_errors_)
      if (JS_VALUE_GET_PTR(h.error.get()) == JS_VALUE_GET_PTR(error)) e.code = h.code;
  }
  return e;
}

void Session::track_rejection(JSContext* ctx, JSValueConst promise, JSValueConst reason, JS_BOOL is_handled,
                              void* opaque) {
  // Called by the engine in the middle of JS: no JS may run here, so nothing is described yet.
  auto* self = static_cast<Session*>(opaque);
  auto& list = self->unhandled_;
  if (is_handled) {
    std::erase_if(list, [&](const Rejection& r) {
      return JS_VALUE_GET_PTR(r.promise.get()) == JS_VALUE_GET_PTR(promise);
    });
    return;
  }
  if (list.size() >= kMaxUnhandled) {
    ++self->result_.usage.unhandled_rejections;
    return;
  }
  list.push_back({Value(ctx, JS_DupValue(ctx, promise)), Value(ctx, JS_DupValue(ctx, reason))});
}

void Session::report_unhandled_rejections(JSValueConst awaited) {
  if (unhandled_.empty()) return;  // every turn of the event loop: nothing to do in almost every run
  std::vector<Rejection> list = std::move(unhandled_);
  unhandled_.clear();
  for (Rejection& r : list) {
    if (JS_VALUE_GET_PTR(r.promise.get()) == JS_VALUE_GET_PTR(awaited) && JS_IsObject(awaited)) {
      unhandled_.push_back(std::move(r));  // the export's own promise: its rejection is the run's error
      continue;
    }
    ++result_.usage.unhandled_rejections;
    if (unhandled_lines_ == kMaxUnhandledLines || limiter_.tripped() != LimitKind::none) continue;
    // Describing runs the reason's getters (name, message): skill code, under the run's limits.
    const ErrorInfo e = describe(r.reason.get());
    if (limiter_.tripped() != LimitKind::none) continue;
    std::string text = "[skillbox] unhandled promise rejection: " + e.name + ": " + e.message;
    if (++unhandled_lines_ == kMaxUnhandledLines)
      text += " (later ones are only counted, in usage.unhandled_rejections)";
    (void)call(bus::LogRequest{bus::LogLevel::warn, std::move(text)});
  }
}

void Session::note_host_error(JSContext* ctx, JSValueConst error, const char* code) {
  if (host_errors_.size() == kMaxHostErrors) host_errors_.pop_front();
  host_errors_.push_back({Value(ctx, JS_DupValue(ctx, error)), code});
}

void Session::finish_from_value(JSValueConst value) {
  auto json = result_to_json(ctx_.get(), value);
  if (json) {
    if (!finished_) result_.value_json = std::move(*json);
    finish(Outcome::ok, {});
  } else {
    finish(Outcome::error, std::move(json.error()));
  }
}

void Session::value_on_error(const ErrorInfo& error) {
  JSContext* ctx = ctx_.get();
  if (finished_ || limiter_.check()) return;
  Value value(ctx, params_.flavor->value_on_error(ctx, flavor_state_.get(), error));
  if (value.is_exception()) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    return;
  }
  if (JS_IsUndefined(value.get()) || limiter_.check()) return;
  auto json = result_to_json(ctx, value.get());
  if (json && !limiter_.check()) result_.value_json = std::move(*json);
}

void Session::finish(Outcome outcome, ErrorInfo error) {
  if (finished_) return;
  finished_ = true;
  result_.outcome = outcome;
  if (outcome == Outcome::ok) return;
  // Frames of a built file with an inline source map name the file it was built from (a TypeScript
  // skill's index.ts rather than dist/index.js).
  if (!error.stack.empty()) error.stack = map_stack(error.stack, params_.sources);
  result_.error = std::move(error);
}

void Session::rewrite_log_text(std::string& text) {
  // A logged error's stack (console.error(e), log(e.stack)) gets the same frames as the run's error.
  // Only text that holds a frame is looked at, so ordinary lines cost one search.
  // map_stack reads the inline map again each time (up to kMaxSourceMapBytes), host work no deadline
  // interrupts: only the first kMaxMappedLogLines lines with frames are mapped.
  if (text.find("    at ") == std::string::npos || mapped_log_lines_ >= kMaxMappedLogLines) return;
  ++mapped_log_lines_;
  text = map_stack(text, params_.sources);
}

void Session::limit_result() {
  const Limits& l = params_.limits;
  ErrorInfo e;
  switch (limiter_.tripped()) {
    case LimitKind::memory:
      result_.outcome = Outcome::memory_limit;
      e = host_error("MemoryLimitExceeded",
                     "the heap limit was reached (limit is " + std::to_string(l.memory_bytes) + " bytes)");
      break;
    case LimitKind::steps:
      result_.outcome = Outcome::step_limit;
      e = host_error("StepLimitExceeded",
                     "the step budget ran out (limit is " + std::to_string(l.steps) + " steps)");
      break;
    case LimitKind::timeout:
      result_.outcome = Outcome::timeout;
      e = host_error("TimeoutExceeded",
                     "the wall-clock deadline passed (limit is " + std::to_string(l.timeout_ms) + " ms)");
      break;
    case LimitKind::stack:
      result_.outcome = Outcome::stack_overflow;
      e = host_error("StackOverflow",
                     "the JS stack limit was reached (limit is " + std::to_string(l.stack_bytes) + " bytes)");
      break;
    case LimitKind::cancelled:
      result_.outcome = Outcome::cancelled;
      e = host_error("Cancelled", "the run was cancelled by its caller before it finished");
      break;
    case LimitKind::none:
      return;
  }
  finished_ = true;
  result_.value_json.clear();
  result_.error = std::move(e);
}

void Session::teardown() {
  endpoint_.cancel_all();  // no completion arrives after this
  inbox_.clear();
  deferred_.clear();
  pending_.clear();
  flavor_state_.reset();
  script_globals_before_.clear();
  host_errors_.clear();
  unhandled_.clear();
  if (timers_) {
    result_.usage.timers_dropped += timers_->clear();
    timers_.reset();
  }
  limiter_.detach();
  if (params_.leave_runtime_to_process_exit || pristine_ != nullptr) {
    // Nothing touches them again: their memory is the arena's, which heap_ frees with the Session,
    // or the realm's, which restores its image now for the thread's next run.
    (void)ctx_.release();
    (void)rt_.release();
    if (pristine_ != nullptr && !params_.leave_runtime_to_process_exit) pristine_->release();
    pristine_ = nullptr;
    return;
  }
  ctx_.reset();
  rt_.reset();
}

char* Session::normalize_module(JSContext* ctx, const char* base, const char* name, void* opaque) {
  auto* self = static_cast<Session*>(opaque);
  try {
    self->last_importer_ = base;
    self->last_specifier_ = name;
  } catch (const std::bad_alloc&) {
    JS_ThrowOutOfMemory(ctx);  // no C++ exception may cross the engine's C frames
    return nullptr;
  }
  auto resolved = resolve_specifier(base, name);
  if (!resolved) {
    self->module_refused_ = true;
    JS_ThrowTypeError(ctx, "%s", resolved.error().message.c_str());
    return nullptr;
  }
  auto* out = static_cast<char*>(js_malloc(ctx, resolved->size() + 1));
  if (out == nullptr) return nullptr;
  std::memcpy(out, resolved->c_str(), resolved->size() + 1);
  return out;
}

JSModuleDef* Session::load_module(JSContext* ctx, const char* name, void* opaque) {
  auto* self = static_cast<Session*>(opaque);
  auto found = find_module_source(self->params_.sources, name);
  if (!found) {
    self->module_refused_ = true;
    JS_ThrowReferenceError(ctx, "cannot load module: %s", found.error().message.c_str());
    return nullptr;
  }
  const std::string& source = **found;  // NUL-terminated, as JS_Eval requires
  Value compiled(ctx, JS_Eval(ctx, source.c_str(), source.size(), name,
                              JS_EVAL_TYPE_MODULE | JS_EVAL_FLAG_COMPILE_ONLY));
  if (compiled.is_exception()) return nullptr;
  // The context keeps the module in its list; the value we got is an extra reference.
  return static_cast<JSModuleDef*>(JS_VALUE_GET_PTR(compiled.get()));
}

}  // namespace skillbox::engine
