// bindings/errors.h — errors thrown into JS by host functions, always created in the skill's realm.
//
// Every error here is made by QuickJS's own throw path in the context the host function runs in, so
// its prototype chain is that context's (`e instanceof TypeError` holds in the skill) and it carries a
// `stack` of the skill's frames. Nothing host-side is attached: only strings and numbers.
//
// make_host_error()/throw_host_error() (bus errors such as PermissionDenied) are declared in
// bindings/bridge.h and implemented in errors.cpp.
#pragma once

#include <quickjs.h>

#include <string_view>

#include "bindings/owners.h"

namespace skillbox::bindings {

/// Throws a TypeError of ctx with `message` (any length, UTF-8) and returns JS_EXCEPTION.
JSValue throw_type_error(JSContext* ctx, std::string_view message);

/// The same with a `cause` property (whatever its value, `undefined` included): the value skill code
/// threw while the host read an argument, so the skill can still see what went wrong.
JSValue throw_type_error(JSContext* ctx, std::string_view message, Value cause);

/// Throws a RangeError of ctx with `message` and returns JS_EXCEPTION.
JSValue throw_range_error(JSContext* ctx, std::string_view message);

/// Throws the web platform's DOMException stand-in and returns JS_EXCEPTION: an Error of ctx (so
/// `e instanceof Error`) with own properties `name` (e.g. "InvalidCharacterError"), `message` and
/// `code` (the legacy DOMException code number, e.g. 5; 0 for names without one). WebIDL §2.8.1.
JSValue throw_dom_exception(JSContext* ctx, const char* name, int legacy_code, std::string_view message);

/// Legacy DOMException codes of the names host functions throw (WebIDL "DOMException names" table).
inline constexpr int kInvalidCharacterErrorCode = 5;
inline constexpr int kTypeMismatchErrorCode = 17;
inline constexpr int kQuotaExceededErrorCode = 22;

/// Takes the pending exception out of ctx after a call into skill code (a getter, a Proxy trap, toJSON)
/// failed. Returns true and moves it into `*taken` (or frees it when `taken` is null) if host code may
/// handle it (anything the skill threw, including `null`, and catchable engine errors such as a stack
/// overflow or out of memory: the engine judges limits from runtime state, not from thrown values).
/// Returns false and leaves it pending when it must propagate unchanged: the uncatchable exception of
/// an interrupted run (step limit, deadline).
[[nodiscard]] bool take_catchable_exception(JSContext* ctx, Value* taken = nullptr);

}  // namespace skillbox::bindings
