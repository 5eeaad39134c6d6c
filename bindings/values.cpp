// bindings/values.cpp — making JS values of the skill's realm from host data.
#include "bindings/values.h"

#include "bindings/context_state.h"
#include "bindings/owners.h"

namespace skillbox::bindings {

JSValue new_uint8_array(JSContext* ctx, const uint8_t* data, size_t size) {
  const Value buffer(ctx, JS_NewArrayBufferCopy(ctx, data, size));
  if (buffer.is_exception()) return JS_EXCEPTION;
  // new %Uint8Array%(buffer): the constructor's `prototype` is non-writable and non-configurable, so
  // this runs no skill code and the result has the original Uint8Array.prototype.
  JSValueConst argv[] = {buffer.get()};
  return JS_CallConstructor(ctx, context_state(ctx).uint8_array.get(), 1, argv);
}

}  // namespace skillbox::bindings
