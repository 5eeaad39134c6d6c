// TEMPORARY (engine branch only): minimal stand-ins for functions owned by the bindings and policy
// helpers, so the engine links and its tests run before their branches land. Delete this file when
// merging main: the real definitions (bindings/install.cpp, bindings/errors.cpp, policy/*) replace it,
// and duplicate symbols make a forgotten copy fail the link.
#include <quickjs.h>

#include <algorithm>
#include <cstdlib>

#include "bindings/bridge.h"
#include "skillbox/skillbox.h"

namespace skillbox {

Limits LimitOverrides::apply(Limits base) const {
  if (memory_bytes) base.memory_bytes = std::min(base.memory_bytes, *memory_bytes);
  if (steps) base.steps = std::min(base.steps, *steps);
  if (stack_bytes) base.stack_bytes = std::min(base.stack_bytes, *stack_bytes);
  if (timeout_ms) base.timeout_ms = std::min(base.timeout_ms, *timeout_ms);
  return base;
}

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok:
      return "ok";
    case Outcome::error:
      return "error";
    case Outcome::invalid:
      return "invalid";
    case Outcome::memory_limit:
      return "memory_limit";
    case Outcome::step_limit:
      return "step_limit";
    case Outcome::timeout:
      return "timeout";
    case Outcome::stack_overflow:
      return "stack_overflow";
    case Outcome::crashed:
      return "crashed";
    case Outcome::internal:
      return "internal";
  }
  return "internal";
}

std::filesystem::path resolve_data_dir(const HostOptions& options) {
  if (!options.data_dir.empty()) return options.data_dir;
  if (const char* home = std::getenv("SKILLBOX_HOME")) return home;
  return std::filesystem::temp_directory_path() / "skillbox-engine-shim";
}

}  // namespace skillbox

namespace skillbox::bindings {

void install_host_api(JSContext* /*ctx*/) {}

JSValue make_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  JSValue e = JS_NewError(ctx);
  if (JS_IsException(e)) return e;
  JS_DefinePropertyValueStr(ctx, e, "name", JS_NewString(ctx, bus::error_name(error.code)),
                            JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
  JS_DefinePropertyValueStr(ctx, e, "message",
                            JS_NewStringLen(ctx, error.message.data(), error.message.size()),
                            JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
  JS_DefinePropertyValueStr(ctx, e, "code", JS_NewString(ctx, bus::error_errno(error.code)),
                            JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
  return e;
}

JSValue throw_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  JSValue e = make_host_error(ctx, error);
  if (JS_IsException(e)) return e;
  return JS_Throw(ctx, e);
}

}  // namespace skillbox::bindings
