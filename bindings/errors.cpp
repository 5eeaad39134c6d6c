// bindings/errors.cpp — errors of the skill's realm: argument errors, DOMException stand-ins, bus errors.
#include "bindings/errors.h"

#include <utility>

#include "bindings/bridge.h"
#include "bindings/js_classes.h"

namespace skillbox::bindings {
namespace {

enum class Base : uint8_t { type_error, range_error, error };

// Defines a non-enumerable, writable, configurable data property (the attributes of a built-in
// error's `message`). Takes `value` (JS_EXCEPTION: making it failed); false with an exception pending.
bool define_hidden(JSContext* ctx, JSValueConst obj, const char* key, Value value) {
  if (value.is_exception()) return false;
  return JS_DefinePropertyValueStr(ctx, obj, key, value.release(), JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >=
         0;
}

// A new error object of ctx, not thrown. QuickJS's own throw builds it, so it has ctx's prototype chain
// and a `stack` of the JS frames that are running now (empty when called from the event loop). The
// caller must have no exception pending: the one we create passes through the pending slot.
// `name` (may be null) becomes an own property; otherwise the prototype's name shows. JS_EXCEPTION
// (pending) on failure.
Value new_error(JSContext* ctx, Base base, const char* name, std::string_view message) {
  if (base == Base::range_error)
    JS_ThrowRangeError(ctx, "%s", "");
  else
    JS_ThrowTypeError(ctx, "%s", "");
  Value err(ctx, JS_GetException(ctx));
  if (!err.is_object()) {  // out of memory: QuickJS threw null instead of an error; keep it pending
    JS_Throw(ctx, err.release());
    return {ctx, JS_EXCEPTION};
  }
  if (base == Base::error) {
    // No public call throws a plain Error with a stack; re-parent the TypeError onto ctx's
    // Error.prototype (an ordinary object: no JS runs).
    const Value proto(ctx, JS_GetClassProto(ctx, js_class::kError));
    if (JS_SetPrototype(ctx, err.get(), proto.get()) < 0) return {ctx, JS_EXCEPTION};
  }
  if ((name != nullptr && !define_hidden(ctx, err.get(), "name", Value(ctx, JS_NewString(ctx, name)))) ||
      !define_hidden(ctx, err.get(), "message",
                     Value(ctx, JS_NewStringLen(ctx, message.data(), message.size()))))
    return {ctx, JS_EXCEPTION};
  return err;
}

JSValue throw_new(JSContext* ctx, Value err) {
  if (err.is_exception()) return JS_EXCEPTION;
  return JS_Throw(ctx, err.release());
}

}  // namespace

JSValue throw_type_error(JSContext* ctx, std::string_view message) {
  return throw_new(ctx, new_error(ctx, Base::type_error, nullptr, message));
}

JSValue throw_type_error(JSContext* ctx, std::string_view message, Value cause) {
  Value err = new_error(ctx, Base::type_error, nullptr, message);
  if (err.is_exception()) return JS_EXCEPTION;
  if (!define_hidden(ctx, err.get(), "cause", std::move(cause))) return JS_EXCEPTION;
  return JS_Throw(ctx, err.release());
}

JSValue throw_range_error(JSContext* ctx, std::string_view message) {
  return throw_new(ctx, new_error(ctx, Base::range_error, nullptr, message));
}

JSValue throw_dom_exception(JSContext* ctx, const char* name, int legacy_code, std::string_view message) {
  Value err = new_error(ctx, Base::error, name, message);
  if (err.is_exception()) return JS_EXCEPTION;
  if (!define_hidden(ctx, err.get(), "code", Value(ctx, JS_NewInt32(ctx, legacy_code)))) return JS_EXCEPTION;
  return JS_Throw(ctx, err.release());
}

bool take_catchable_exception(JSContext* ctx, Value* taken) {
  Value exception(ctx, JS_GetException(ctx));
  if (JS_IsUncatchableError(ctx, exception.get())) {
    JS_Throw(ctx, exception.release());  // an interrupted run stays interrupted
    return false;
  }
  if (taken != nullptr) *taken = std::move(exception);
  return true;
}

JSValue make_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  // The engine's own interrupt (patch 0020), as the interrupt handler raises it: uncatchable, so
  // none of the skill's handlers runs.
  if (bridge(ctx).stopping()) return JS_ThrowInterrupted(ctx);
  Value err = new_error(ctx, Base::error, bus::error_name(error.code), error.message);
  if (err.is_exception()) return JS_EXCEPTION;
  const char* code = bus::error_errno(error.code);
  if (!define_hidden(ctx, err.get(), "code", Value(ctx, JS_NewString(ctx, code)))) return JS_EXCEPTION;
  bridge(ctx).note_host_error(ctx, err.get(), code);
  return err.release();
}

JSValue throw_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  return throw_new(ctx, Value(ctx, make_host_error(ctx, error)));
}

}  // namespace skillbox::bindings
