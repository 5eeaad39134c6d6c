// bindings/context_state.cpp — per-context state of the host API, and class registration.
#include "bindings/context_state.h"

#include <cassert>
#include <mutex>
#include <new>

#include "bindings/js_classes.h"

namespace skillbox::bindings {
namespace {

JSClassID state_class_id() {
  static const JSClassID id = new_class_id();
  return id;
}

void state_finalizer(JSRuntime* rt, JSValue holder) {
  auto* state = static_cast<ContextState*>(JS_GetOpaque(holder, state_class_id()));
  if (state == nullptr) return;
  JS_FreeValueRT(rt, state->uint8_array);
  JS_FreeValueRT(rt, state->string_slice);
  JS_FreeValueRT(rt, state->dataview_buffer);
  JS_FreeValueRT(rt, state->dataview_byte_offset);
  JS_FreeValueRT(rt, state->dataview_byte_length);
  state->~ContextState();
  js_free_rt(rt, state);
}

void state_mark(JSRuntime* rt, JSValueConst holder, JS_MarkFunc* mark) {
  auto* state = static_cast<ContextState*>(JS_GetOpaque(holder, state_class_id()));
  if (state == nullptr) return;
  JS_MarkValue(rt, state->uint8_array, mark);
  JS_MarkValue(rt, state->string_slice, mark);
  JS_MarkValue(rt, state->dataview_buffer, mark);
  JS_MarkValue(rt, state->dataview_byte_offset, mark);
  JS_MarkValue(rt, state->dataview_byte_length, mark);
}

const JSClassDef kStateClass = {
    .class_name = "SkillboxHostState",
    .finalizer = state_finalizer,
    .gc_mark = state_mark,
    .call = nullptr,
    .exotic = nullptr,
};

// Copies the getter of `proto`'s own accessor property `name` into *out.
bool capture_getter(JSContext* ctx, JSValueConst proto, const char* name, JSValue* out) {
  JSAtom atom = JS_NewAtom(ctx, name);
  if (atom == JS_ATOM_NULL) return false;
  JSPropertyDescriptor desc;
  const int found = JS_GetOwnProperty(ctx, &desc, proto, atom);
  JS_FreeAtom(ctx, atom);
  if (found < 0) return false;
  if (found == 0) {
    JS_ThrowInternalError(ctx, "host API: DataView.prototype.%s is missing", name);
    return false;
  }
  JS_FreeValue(ctx, desc.value);
  JS_FreeValue(ctx, desc.setter);
  *out = desc.getter;
  return true;
}

// Copies the function-valued data property `name` of `proto` into *out (no skill code has run yet,
// so this is the intrinsic).
bool capture_function(JSContext* ctx, JSValueConst proto, const char* name, JSValue* out) {
  *out = JS_GetPropertyStr(ctx, proto, name);
  if (JS_IsException(*out)) {
    *out = JS_UNDEFINED;
    return false;
  }
  if (!JS_IsFunction(ctx, *out)) {
    JS_ThrowInternalError(ctx, "host API: intrinsic %s is not a function", name);
    return false;
  }
  return true;
}

bool capture_intrinsics(JSContext* ctx, ContextState& state) {
  JSValue u8_proto = JS_GetClassProto(ctx, js_class::kUint8Array);
  JSValue dv_proto = JS_GetClassProto(ctx, js_class::kDataView);
  JSValue string_proto = JS_GetClassProto(ctx, js_class::kString);
  bool ok = JS_IsObject(u8_proto) && JS_IsObject(dv_proto) && JS_IsObject(string_proto);
  if (!ok) JS_ThrowInternalError(ctx, "host API: the context was built without typed arrays or strings");
  ok = ok && capture_function(ctx, u8_proto, "constructor", &state.uint8_array) &&
       capture_function(ctx, string_proto, "slice", &state.string_slice) &&
       capture_getter(ctx, dv_proto, "buffer", &state.dataview_buffer) &&
       capture_getter(ctx, dv_proto, "byteOffset", &state.dataview_byte_offset) &&
       capture_getter(ctx, dv_proto, "byteLength", &state.dataview_byte_length);
  JS_FreeValue(ctx, u8_proto);
  JS_FreeValue(ctx, dv_proto);
  JS_FreeValue(ctx, string_proto);
  return ok;
}

}  // namespace

JSClassID new_class_id() {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  JSClassID id = 0;
  return JS_NewClassID(&id);
}

bool ensure_class(JSContext* ctx, JSClassID id, const JSClassDef& def) {
  JSRuntime* rt = JS_GetRuntime(ctx);
  if (JS_IsRegisteredClass(rt, id)) return true;
  if (JS_NewClass(rt, id, &def) < 0) {
    JS_ThrowOutOfMemory(ctx);
    return false;
  }
  return true;
}

bool init_context_state(JSContext* ctx) {
  const JSClassID id = state_class_id();
  if (!ensure_class(ctx, id, kStateClass)) return false;
  JSValue holder = JS_NewObjectProtoClass(ctx, JS_NULL, id);
  if (JS_IsException(holder)) return false;
  void* memory = js_mallocz(ctx, sizeof(ContextState));
  if (memory == nullptr) {
    JS_FreeValue(ctx, holder);
    return false;
  }
  auto* state = new (memory) ContextState();
  JS_SetOpaque(holder, state);  // from here the finalizer owns `state` and what it captures
  if (!capture_intrinsics(ctx, *state)) {
    JS_FreeValue(ctx, holder);
    return false;
  }
  JS_SetClassProto(ctx, id, holder);  // takes the reference
  return true;
}

ContextState& context_state(JSContext* ctx) {
  const JSClassID id = state_class_id();
  JSValue holder = JS_GetClassProto(ctx, id);
  auto* state = static_cast<ContextState*>(JS_GetOpaque(holder, id));
  JS_FreeValue(ctx, holder);  // the context's prototype slot keeps it alive
  assert(state != nullptr && "init_context_state(ctx) must run first");
  return *state;
}

}  // namespace skillbox::bindings
