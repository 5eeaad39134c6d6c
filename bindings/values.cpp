// bindings/values.cpp — making JS values of the skill's realm from host data.
#include "bindings/values.h"

#include "bindings/context_state.h"

namespace skillbox::bindings {

JSValue new_uint8_array(JSContext* ctx, const uint8_t* data, size_t size) {
  JSValue buffer = JS_NewArrayBufferCopy(ctx, data, size);
  if (JS_IsException(buffer)) return JS_EXCEPTION;
  // new %Uint8Array%(buffer): the constructor's `prototype` is non-writable and non-configurable, so
  // this runs no skill code and the result has the original Uint8Array.prototype.
  JSValue array = JS_CallConstructor(ctx, context_state(ctx).uint8_array, 1, &buffer);
  JS_FreeValue(ctx, buffer);
  return array;
}

}  // namespace skillbox::bindings
