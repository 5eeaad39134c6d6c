// engine/module_requests.cpp — see module_requests.h.
#include "engine/module_requests.h"

#include <algorithm>
#include <atomic>
#include <new>

#include "engine/skill_files.h"

namespace skillbox::engine {
namespace {

std::atomic<uint64_t> g_parses{0};

/// The parse's heap limit: the skill's, but never below what a runtime needs to start.
Limits parse_limits(Limits limits) {
  limits.memory_bytes = std::max(limits.memory_bytes, Limits::kMinMemoryBytes);
  return limits;
}

/// JSModuleRequestFunc: appends the specifier to the ModuleRequests in `opaque`, once.
int on_request(JSContext* ctx, JSAtom specifier, int /*is_dynamic*/, void* opaque) {
  auto& out = *static_cast<ModuleRequests*>(opaque);
  const Value value(ctx, JS_AtomToString(ctx, specifier));
  if (value.is_exception()) return -1;   // out of memory, thrown
  const CString text(ctx, value.get());  // a string: no skill code runs to convert it
  if (!text.ok()) return -1;
  try {
    std::string s(text.view());  // NUL bytes kept: resolve_specifier refuses them
    // A file names few modules; a linear look keeps source order without a second container.
    if (std::find(out.specifiers.begin(), out.specifiers.end(), s) == out.specifiers.end())
      out.specifiers.push_back(std::move(s));
  } catch (const std::bad_alloc&) {
    JS_ThrowOutOfMemory(ctx);  // no C++ exception may cross the engine's C frames
    return -1;
  }
  return 0;
}

}  // namespace

ModuleRequestParser::ModuleRequestParser(const Limits& limits)
    : limits_(parse_limits(limits)), limiter_(limits_, Clock::time_point::max(), flag_), heap_(limiter_) {
  rt_.reset(JS_NewRuntime2(&HeapAccount::kFunctions, &heap_));
  if (!rt_) return;
  // The stack limit is measured from here (JS_NewRuntime2 recorded this thread's stack position).
  JS_SetMaxStackSize(rt_.get(), static_cast<size_t>(limits_.stack_bytes));
  // A bare context with what parsing needs of the realm (engine/realm.cpp), so that a file parses
  // here exactly when it compiles in a run: atoms and the basic objects (a tagged template's strings
  // array), the regexp compiler (a regexp literal is compiled where it is parsed) and BigInt (a `1n`
  // literal is made where it is parsed). Nothing else of the realm, and no host API.
  ctx_.reset(JS_NewContextRaw(rt_.get()));
  if (!ctx_) return;
  JS_AddIntrinsicRegExpCompiler(ctx_.get());
  JS_AddIntrinsicBigInt(ctx_.get());
  JS_SetMemoryLimit(rt_.get(), static_cast<size_t>(limits_.memory_bytes));
  heap_.enforce();
}

uint64_t ModuleRequestParser::parses_in_this_process() {
  return g_parses.load(std::memory_order_relaxed);
}

ModuleRequestParser::~ModuleRequestParser() {
  ctx_.reset();
  rt_.reset();
}

ModuleRequests ModuleRequestParser::entry(const std::string& name, const std::string& source) {
  ModuleRequests out;
  const EntryKind kind = entry_kind(name, source);
  if (kind == EntryKind::module) {
    parse(name, source, true, out);
  } else if (!parse(name, source, false, out) && kind == EntryKind::script_else_module) {
    // Session::load_entry compiles it as a module when it does not compile as a script.
    out = ModuleRequests{};
    parse(name, source, true, out);
  }
  return out;
}

ModuleRequests ModuleRequestParser::module(const std::string& name, const std::string& source) {
  ModuleRequests out;
  parse(name, source, true, out);
  return out;
}

bool ModuleRequestParser::parse(const std::string& name, const std::string& source, bool is_module,
                                ModuleRequests& out) {
  if (!ctx_) {
    out.complete = false;  // no runtime (host out of memory): the run's compile says what is wrong
    return false;
  }
  g_parses.fetch_add(1, std::memory_order_relaxed);
  JSContext* ctx = ctx_.get();
  // source.c_str(): NUL-terminated, as the parser requires.
  if (JS_ParseModuleRequests(ctx, source.c_str(), source.size(), name.c_str(), is_module ? 1 : 0, &on_request,
                             &out) == 0)
    return true;
  const Value ignored(ctx, JS_GetException(ctx));
  out.complete = false;
  return false;
}

}  // namespace skillbox::engine
