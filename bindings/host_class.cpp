// bindings/host_class.cpp — defining a class of the host API (constructor + prototype) in C.
#include "bindings/host_class.h"

#include <string>
#include <utility>

#include "bindings/context_state.h"
#include "bindings/errors.h"
#include "bindings/owners.h"

namespace skillbox::bindings {

bool define_host_class(JSContext* ctx, JSValueConst global, const HostClass& cls) {
  if (!ensure_class(ctx, cls.id, *cls.def)) return false;
  Value proto(ctx, JS_NewObject(ctx));
  if (proto.is_exception()) return false;
  JS_SetPropertyFunctionList(ctx, proto.get(), cls.proto, cls.proto_count);
  Value ctor(ctx, JS_NewCFunction2(ctx, cls.constructor, cls.name, cls.length, JS_CFUNC_constructor, 0));
  if (ctor.is_exception()) return false;
  JS_SetConstructor(ctx, ctor.get(), proto.get());  // ctor.prototype (fixed) and proto.constructor
  JS_SetClassProto(ctx, cls.id, proto.release());   // takes `proto`
  return JS_DefinePropertyValueStr(ctx, global, cls.name, ctor.release(),
                                   JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE) >= 0;
}

JSValue new_instance(JSContext* ctx, JSValueConst new_target, JSClassID id, std::string_view name) {
  Value proto = property(ctx, new_target, "prototype");
  if (proto.is_exception()) {
    Value cause;
    if (take_catchable_exception(ctx, &cause))
      throw_type_error(ctx, std::string(name) + ": reading new.target.prototype threw an exception",
                       std::move(cause));
    return JS_EXCEPTION;
  }
  // Web IDL / ECMA-262 GetPrototypeFromConstructor: fall back to ours.
  if (!proto.is_object()) proto = Value(ctx, JS_GetClassProto(ctx, id));
  return JS_NewObjectProtoClass(ctx, proto.get(), id);
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
