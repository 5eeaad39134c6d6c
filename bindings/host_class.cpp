// bindings/host_class.cpp — defining a class of the host API (constructor + prototype) in C.
#include "bindings/host_class.h"

#include <string>

#include "bindings/context_state.h"
#include "bindings/errors.h"

namespace skillbox::bindings {

bool define_host_class(JSContext* ctx, JSValueConst global, const HostClass& cls) {
  if (!ensure_class(ctx, cls.id, *cls.def)) return false;
  JSValue proto = JS_NewObject(ctx);
  if (JS_IsException(proto)) return false;
  JS_SetPropertyFunctionList(ctx, proto, cls.proto, cls.proto_count);
  JSValue ctor = JS_NewCFunction2(ctx, cls.constructor, cls.name, cls.length, JS_CFUNC_constructor, 0);
  if (JS_IsException(ctor)) {
    JS_FreeValue(ctx, proto);
    return false;
  }
  JS_SetConstructor(ctx, ctor, proto);   // ctor.prototype (fixed) and proto.constructor
  JS_SetClassProto(ctx, cls.id, proto);  // takes `proto`
  return JS_DefinePropertyValueStr(ctx, global, cls.name, ctor, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

JSValue new_instance(JSContext* ctx, JSValueConst new_target, JSClassID id, std::string_view name) {
  JSValue proto = JS_GetPropertyStr(ctx, new_target, "prototype");
  if (JS_IsException(proto)) {
    JSValue cause;
    if (take_catchable_exception(ctx, &cause))
      throw_type_error(ctx, std::string(name) + ": reading new.target.prototype threw an exception", cause);
    return JS_EXCEPTION;
  }
  if (!JS_IsObject(proto)) {  // Web IDL / ECMA-262 GetPrototypeFromConstructor: fall back to ours
    JS_FreeValue(ctx, proto);
    proto = JS_GetClassProto(ctx, id);
  }
  JSValue obj = JS_NewObjectProtoClass(ctx, proto, id);
  JS_FreeValue(ctx, proto);
  return obj;
}

JSValue throw_illegal_invocation(JSContext* ctx, std::string_view cls, std::string_view member) {
  std::string text(cls);
  text += '.';
  text += member;
  text += ": Illegal invocation (the receiver is not a ";
  text += cls;
  text += ')';
  return throw_type_error(ctx, text);
}

}  // namespace skillbox::bindings
