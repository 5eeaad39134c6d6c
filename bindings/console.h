// bindings/console.h — `log(...args)` and `console.{log,info,warn,error,debug}`.
//
// Each call formats its arguments into one message (bindings/format.h, capped at the log
// capability's message size) and sends it as a bus::LogRequest through the invocation's Bridge: one
// host call per message. Logging never throws into the skill except when the run is interrupted
// while a getter of a logged object runs. Once the log capability replies that the run's log budget
// is used up (ErrorReply QuotaExceeded), later calls in this context return at once, formatting and
// sending nothing: 100,000 calls of log(hugeString) cost next to nothing after the budget is gone.
#pragma once

#include <quickjs.h>

#include "bindings/format.h"

namespace skillbox::bindings {

/// Defines `log` and `console` (writable, configurable, not enumerable, like Web IDL globals) on
/// `global`. Returns false with an exception pending on failure.
[[nodiscard]] bool install_console(JSContext* ctx, JSValueConst global);

/// The formatting limits of log messages: FormatLimits with max_bytes = the wire limit
/// bus::kMaxLogMessageBytes (the log capability's per-message cap), so the capability sees when a
/// message was cut.
FormatLimits log_format_limits();

}  // namespace skillbox::bindings
