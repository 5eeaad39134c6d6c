// bindings/errors.cpp — errors of the skill's realm: argument errors, DOMException stand-ins, bus errors.
#include "bindings/errors.h"

#include "bindings/bridge.h"
#include "bindings/js_classes.h"

namespace skillbox::bindings {
namespace {

enum class Base : uint8_t { type_error, range_error, error };

// Defines a non-enumerable, writable, configurable data property (the attributes of a built-in
// error's `message`). Consumes `value`; returns false with an exception pending on failure.
bool define_hidden(JSContext* ctx, JSValueConst obj, const char* key, JSValue value) {
  if (JS_IsException(value)) return false;
  return JS_DefinePropertyValueStr(ctx, obj, key, value, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

// A new error object of ctx, not thrown. QuickJS's own throw builds it, so it has ctx's prototype chain
// and a `stack` of the JS frames that are running now (empty when called from the event loop). The
// caller must have no exception pending: the one we create passes through the pending slot.
// `name` (may be null) becomes an own property; otherwise the prototype's name shows.
JSValue new_error(JSContext* ctx, Base base, const char* name, std::string_view message) {
  if (base == Base::range_error)
    JS_ThrowRangeError(ctx, "%s", "");
  else
    JS_ThrowTypeError(ctx, "%s", "");
  JSValue err = JS_GetException(ctx);
  if (!JS_IsObject(err)) {  // out of memory: QuickJS threw null instead of an error; keep it pending
    JS_Throw(ctx, err);
    return JS_EXCEPTION;
  }
  if (base == Base::error) {
    // No public call throws a plain Error with a stack; re-parent the TypeError onto ctx's
    // Error.prototype (an ordinary object: no JS runs).
    JSValue proto = JS_GetClassProto(ctx, js_class::kError);
    const int set = JS_SetPrototype(ctx, err, proto);
    JS_FreeValue(ctx, proto);
    if (set < 0) {
      JS_FreeValue(ctx, err);
      return JS_EXCEPTION;
    }
  }
  if ((name != nullptr && !define_hidden(ctx, err, "name", JS_NewString(ctx, name))) ||
      !define_hidden(ctx, err, "message", JS_NewStringLen(ctx, message.data(), message.size()))) {
    JS_FreeValue(ctx, err);
    return JS_EXCEPTION;
  }
  return err;
}

JSValue throw_new(JSContext* ctx, JSValue err) {
  if (JS_IsException(err)) return JS_EXCEPTION;
  return JS_Throw(ctx, err);
}

}  // namespace

JSValue throw_type_error(JSContext* ctx, std::string_view message, JSValue cause) {
  JSValue err = new_error(ctx, Base::type_error, nullptr, message);
  if (JS_IsException(err)) {
    JS_FreeValue(ctx, cause);
    return JS_EXCEPTION;
  }
  if (!JS_IsUninitialized(cause) && !define_hidden(ctx, err, "cause", cause)) {
    JS_FreeValue(ctx, err);
    return JS_EXCEPTION;
  }
  return JS_Throw(ctx, err);
}

JSValue throw_range_error(JSContext* ctx, std::string_view message) {
  return throw_new(ctx, new_error(ctx, Base::range_error, nullptr, message));
}

JSValue throw_dom_exception(JSContext* ctx, const char* name, int legacy_code, std::string_view message) {
  JSValue err = new_error(ctx, Base::error, name, message);
  if (JS_IsException(err)) return JS_EXCEPTION;
  if (!define_hidden(ctx, err, "code", JS_NewInt32(ctx, legacy_code))) {
    JS_FreeValue(ctx, err);
    return JS_EXCEPTION;
  }
  return JS_Throw(ctx, err);
}

bool take_catchable_exception(JSContext* ctx, JSValue* taken) {
  JSValue exception = JS_GetException(ctx);
  if (JS_IsUncatchableError(ctx, exception)) {
    JS_Throw(ctx, exception);  // an interrupted run stays interrupted
    return false;
  }
  if (taken != nullptr)
    *taken = exception;
  else
    JS_FreeValue(ctx, exception);
  return true;
}

JSValue make_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  JSValue err = new_error(ctx, Base::error, bus::error_name(error.code), error.message);
  if (JS_IsException(err)) return JS_EXCEPTION;
  if (!define_hidden(ctx, err, "code", JS_NewString(ctx, bus::error_errno(error.code)))) {
    JS_FreeValue(ctx, err);
    return JS_EXCEPTION;
  }
  return err;
}

JSValue throw_host_error(JSContext* ctx, const bus::ErrorReply& error) {
  return throw_new(ctx, make_host_error(ctx, error));
}

}  // namespace skillbox::bindings
