// bindings/context_state.cpp — per-context state of the host API, and class registration.
#include "bindings/context_state.h"

#include <cassert>
#include <mutex>
#include <new>
#include <utility>

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
  state->~ContextState();  // frees the captured intrinsics
  js_free_rt(rt, state);
}

void state_mark(JSRuntime* rt, JSValueConst holder, JS_MarkFunc* mark) {
  auto* state = static_cast<ContextState*>(JS_GetOpaque(holder, state_class_id()));
  if (state == nullptr) return;
  state->uint8_array.mark(rt, mark);
  state->string_slice.mark(rt, mark);
  state->dataview_buffer.mark(rt, mark);
  state->dataview_byte_offset.mark(rt, mark);
  state->dataview_byte_length.mark(rt, mark);
}

const JSClassDef kStateClass = {
    .class_name = "SkillboxHostState",
    .finalizer = state_finalizer,
    .gc_mark = state_mark,
    .call = nullptr,
    .exotic = nullptr,
};

// Copies the getter of `proto`'s own accessor property `name` into *out.
bool capture_getter(JSContext* ctx, JSValueConst proto, const char* name, RuntimeValue* out) {
  const Atom atom(ctx, name);
  if (!atom.ok()) return false;
  PropertyDescriptor desc;
  const int found = own_property(ctx, proto, atom.get(), desc);
  if (found < 0) return false;
  if (found == 0) {
    JS_ThrowInternalError(ctx, "host API: DataView.prototype.%s is missing", name);
    return false;
  }
  *out = RuntimeValue(std::move(desc.getter));
  return true;
}

// Copies the function-valued data property `name` of `proto` into *out (no skill code has run yet,
// so this is the intrinsic).
bool capture_function(JSContext* ctx, JSValueConst proto, const char* name, RuntimeValue* out) {
  Value function = property(ctx, proto, name);
  if (function.is_exception()) return false;
  if (!JS_IsFunction(ctx, function.get())) {
    JS_ThrowInternalError(ctx, "host API: intrinsic %s is not a function", name);
    return false;
  }
  *out = RuntimeValue(std::move(function));
  return true;
}

bool capture_intrinsics(JSContext* ctx, ContextState& state) {
  const Value string_proto(ctx, JS_GetClassProto(ctx, js_class::kString));
  if (!string_proto.is_object()) {
    JS_ThrowInternalError(ctx, "host API: the context was built without strings");
    return false;
  }
  return capture_function(ctx, string_proto.get(), "slice", &state.string_slice);
}

// The typed-array originals, once the group exists (its class prototypes are null until then).
// False with an exception pending on failure; true, capturing nothing, while the group is not built.
bool capture_typed_arrays(JSContext* ctx, ContextState& state) {
  if (state.typed_arrays_captured) return true;
  const Value u8_proto(ctx, JS_GetClassProto(ctx, js_class::kUint8Array));
  const Value dv_proto(ctx, JS_GetClassProto(ctx, js_class::kDataView));
  if (!u8_proto.is_object() || !dv_proto.is_object()) return true;
  const bool ok = capture_function(ctx, u8_proto.get(), "constructor", &state.uint8_array) &&
                  capture_getter(ctx, dv_proto.get(), "buffer", &state.dataview_buffer) &&
                  capture_getter(ctx, dv_proto.get(), "byteOffset", &state.dataview_byte_offset) &&
                  capture_getter(ctx, dv_proto.get(), "byteLength", &state.dataview_byte_length);
  state.typed_arrays_captured = ok;
  return ok;
}

ContextState* find_context_state(JSContext* ctx) {
  const JSClassID id = state_class_id();
  if (!JS_IsRegisteredClass(JS_GetRuntime(ctx), id)) return nullptr;
  const Value holder(ctx, JS_GetClassProto(ctx, id));
  return static_cast<ContextState*>(JS_GetOpaque(holder.get(), id));
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
  Value holder(ctx, JS_NewObjectProtoClass(ctx, JS_NULL, id));
  if (holder.is_exception()) return false;
  void* memory = js_mallocz(ctx, sizeof(ContextState));
  if (memory == nullptr) return false;
  auto* state = new (memory) ContextState();
  JS_SetOpaque(holder.get(), state);  // from here the finalizer owns `state` and what it captures
  if (!capture_intrinsics(ctx, *state) || !capture_typed_arrays(ctx, *state)) return false;
  JS_SetClassProto(ctx, id, holder.release());  // takes the reference
  return true;
}

void on_intrinsics_built(JSContext* ctx) {
  ContextState* state = find_context_state(ctx);
  if (state == nullptr) return;  // no host API in this context (the code check), or not yet installed
  // Failing here (the host out of memory) leaves the originals uncaptured for good: skill code may
  // touch the new objects from now on, so a later capture could take a replaced getter. The exception
  // is dropped so that the build itself stands; host functions that need the originals then throw.
  if (!capture_typed_arrays(ctx, *state)) {
    JS_FreeValue(ctx, JS_GetException(ctx));
    state->typed_arrays_unavailable = true;
  }
}

ContextState* context_state_with_typed_arrays(JSContext* ctx) {
  ContextState& state = context_state(ctx);
  if (state.typed_arrays_captured) return &state;
  // Building them captures them (on_intrinsics_built); nothing is captured after that moment.
  if (!state.typed_arrays_unavailable && JS_EnsureIntrinsic(ctx, JS_LAZY_INTRINSIC_TYPED_ARRAYS) < 0)
    return nullptr;
  if (!state.typed_arrays_captured) {
    JS_ThrowInternalError(ctx, "host API: the typed arrays could not be built");
    return nullptr;
  }
  return &state;
}

ContextState& context_state(JSContext* ctx) {
  const JSClassID id = state_class_id();
  // The context's prototype slot keeps the holder alive after this reference is freed.
  const Value holder(ctx, JS_GetClassProto(ctx, id));
  auto* state = static_cast<ContextState*>(JS_GetOpaque(holder.get(), id));
  assert(state != nullptr && "init_context_state(ctx) must run first");
  return *state;
}

}  // namespace skillbox::bindings
