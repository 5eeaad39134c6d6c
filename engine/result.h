// engine/result.h — turning JS values into the parts of a RunResult.
//
// Both functions may run skill code (toJSON, getters, toString) and therefore run under the
// invocation's limits; callers check the Limiter afterwards.
#pragma once

#include <quickjs.h>

#include <string>

#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Longest name/message/stack/code text kept from a skill error; longer text ends with "...".
inline constexpr size_t kMaxErrorTextBytes = size_t{16} * 1024;

/// The export's result as JSON text (JSON.stringify semantics, `undefined` -> "null"), or an ErrorInfo
/// that says why the value cannot be represented (BigInt, a cycle, a function or symbol, a throwing
/// toJSON). A pending exception is consumed.
Result<std::string, ErrorInfo> result_to_json(JSContext* ctx, JSValueConst value);

/// Describes an uncaught exception or rejection reason: name, message and stack of an Error (stack
/// file names are skill-relative because QuickJS only ever saw skill-relative names), or the value's
/// text for anything else (`throw null` -> name "Error", message "null"). Never sets `code`: a skill
/// can write any `code` property, so the session fills it in from the errors the host made.
ErrorInfo describe_error(JSContext* ctx, JSValueConst error);

/// Consumes the pending exception of `ctx` and describes it.
ErrorInfo take_exception(JSContext* ctx);

}  // namespace skillbox::engine
