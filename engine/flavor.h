// engine/flavor.h — a skill format other than v1's: its host API and how its entry is called.
//
// The engine knows one calling convention of its own (an ES module's or a script's export, called
// with the input). A Flavor replaces that for another format: compat/ implements the OpenHuman bundle
// lifecycle (evaluate the bundle, init, start, a tool or hook, stop). The Flavor runs inside the
// Session: everything it installs reaches the host through the same Bridge and bus requests as the v1
// API, so the same capabilities and policy serve it in-process and in worker mode. A Flavor is shared
// by many invocations at once (const, no per-invocation state of its own): what it needs per context
// it keeps in the `state` value the Session holds for it.
#pragma once

#include <quickjs.h>

#include "bindings/owners.h"
#include "engine/call.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

class Flavor {
 public:
  virtual ~Flavor() = default;

  /// Installs the flavor's API on `ctx` after the v1 host API and the timers, before the entry runs.
  /// May keep a value for call() in `state`. Returns false with an exception pending on failure.
  [[nodiscard]] virtual bool install(JSContext* ctx, const Call& call, bindings::Value& state) const = 0;

  /// Called once the entry (a classic script) has run, instead of looking up an export. Returns the
  /// value or promise whose settlement ends the run (like an export's return value), or JS_EXCEPTION
  /// with an exception pending. `input` is the parsed Call::input_json.
  [[nodiscard]] virtual JSValue call(JSContext* ctx, const Call& call, JSValueConst state,
                                     JSValueConst input) const = 0;

  /// Called when the value of call() rejected, before the run ends with outcome `error` described by
  /// `error`: returns a value to report beside that error (SessionResult::value_json, e.g. a bundle's
  /// results so far and the failing tool's ToolResult), or JS_UNDEFINED for none. Runs under the
  /// invocation's limits; a limit reached meanwhile decides the outcome and drops the value, and an
  /// exception (JS_EXCEPTION) only drops the value. The default reports none (v1's contract).
  [[nodiscard]] virtual JSValue value_on_error(JSContext* /*ctx*/, JSValueConst /*state*/,
                                               const ErrorInfo& /*error*/) const {
    return JS_UNDEFINED;
  }
};

}  // namespace skillbox::engine
