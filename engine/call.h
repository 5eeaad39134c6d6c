// engine/call.h — what the engine is asked to run and what it answers: plain values, no host types.
//
// The public Invocation carries a Skill (a folder, a whole manifest), overrides, an observer, a cancel
// token and a tenant: the runner's concerns, resolved before the engine starts. The engine reads only
// the few values below, so both runners can build a Call from what they have (the in-process runner
// from the Invocation, the worker child from its InvocationFrame) without faking the rest. Likewise the
// engine answers only what it knows; the host side (the Endpoint) adds logs, events and its own usage
// counters when the runner turns a SessionResult into a RunResult.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// One call of a skill's code.
struct Call {
  /// The manifest's `id`. Read by flavors (an OpenHuman bundle sees it as its skill id).
  std::string skill_id;
  /// Export to call (Invocation::export_name): empty means `default`, then `run`. A flavor reads it
  /// its own way (compat/bundle_flavor.h).
  std::string export_name;
  /// Input as JSON text, passed to the export parsed. Empty is read as `null`.
  std::string input_json = "null";
};

/// The usage counters the engine measures itself (the others of skillbox::Usage are the host's).
struct SessionUsage {
  uint64_t wall_ms = 0;               // from SessionParams::start (or the session's start) to disposal
  uint64_t cpu_ms = 0;                // CPU time of the thread that ran the session
  uint64_t steps = 0;                 // steps counted, see docs/limits.md
  uint64_t heap_peak_bytes = 0;       // peak footprint of the runtime's arena
  uint64_t timers_dropped = 0;        // timers still pending when the run ended
  uint64_t unhandled_rejections = 0;  // as skillbox::Usage::unhandled_rejections
};

/// How a session ended, with the meaning of the same fields of skillbox::RunResult.
struct SessionResult {
  Outcome outcome = Outcome::internal;
  /// The export's result as JSON text when outcome == ok; a flavor's value beside an error
  /// (Flavor::value_on_error); else empty.
  std::string value_json;
  /// Set for every outcome except ok.
  std::optional<ErrorInfo> error;
  SessionUsage usage;
};

}  // namespace skillbox::engine
