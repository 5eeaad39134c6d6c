// bindings/owners.cpp — single ownership of QuickJS property lists and descriptors.
#include "bindings/owners.h"

namespace skillbox::bindings {

bool PropertyNames::list(JSContext* ctx, JSValueConst obj, int flags) {
  reset();
  JSPropertyEnum* props = nullptr;
  uint32_t count = 0;
  // On failure QuickJS has freed what it listed and left props null.
  if (JS_GetOwnPropertyNames(ctx, &props, &count, obj, flags) < 0) return false;
  ctx_ = ctx;
  props_ = props;
  count_ = count;
  return true;
}

void PropertyNames::reset() {
  if (props_ != nullptr) {
    for (uint32_t i = 0; i < count_; ++i) JS_FreeAtom(ctx_, props_[i].atom);
    js_free(ctx_, props_);
  }
  props_ = nullptr;
  count_ = 0;
}

int own_property(JSContext* ctx, JSValueConst obj, JSAtom atom, PropertyDescriptor& out) {
  JSPropertyDescriptor desc;
  const int found = JS_GetOwnProperty(ctx, &desc, obj, atom);
  if (found <= 0) return found;
  // Found: QuickJS filled all three values (undefined where unused), each with a reference for us.
  out.flags = desc.flags;
  out.value = Value(ctx, desc.value);
  out.getter = Value(ctx, desc.getter);
  out.setter = Value(ctx, desc.setter);
  return found;
}

}  // namespace skillbox::bindings
