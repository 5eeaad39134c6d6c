#include "engine/realm.h"

#include "bindings/context_state.h"

namespace skillbox::engine {
namespace {

// Globals the intrinsics install but a skill must not see (see realm.h): shared memory from
// JS_AddIntrinsicTypedArrays, and `__date_clock`, an engine debugging helper of JS_AddIntrinsicDate
// (a monotonic microsecond clock). Built lazily, those groups define them on the group's holder, out
// of reach, never on the global object; the deletion stays as a guard.
constexpr const char* kRemovedGlobals[] = {"Atomics", "SharedArrayBuffer", "__date_clock"};

void on_lazy_build(JSContext* ctx, void* opaque, JS_BOOL building) {
  auto* heap = static_cast<HeapAccount*>(opaque);
  if (building != 0) {
    heap->suspend_enforcement();
    return;
  }
  bindings::on_intrinsics_built(ctx);
  heap->resume_enforcement();
}

}  // namespace

JSContext* new_skill_context(JSRuntime* rt, HeapAccount& heap) {
  JSContext* ctx = JS_NewContextRaw(rt);
  if (ctx == nullptr) return nullptr;
  JS_SetLazyIntrinsicHook(ctx, &on_lazy_build, &heap);
  JS_AddIntrinsicBaseObjects(ctx);
  bool lazy_ok = JS_AddIntrinsicLazy(ctx, JS_LAZY_INTRINSIC_DATE) == 0;
  JS_AddIntrinsicEval(ctx);
  JS_AddIntrinsicStringNormalize(ctx);
  JS_AddIntrinsicRegExpCompiler(ctx);
  JS_AddIntrinsicRegExp(ctx);
  JS_AddIntrinsicJSON(ctx);
  JS_AddIntrinsicProxy(ctx);
  lazy_ok = lazy_ok && JS_AddIntrinsicLazy(ctx, JS_LAZY_INTRINSIC_MAP_SET) == 0 &&
            JS_AddIntrinsicLazy(ctx, JS_LAZY_INTRINSIC_TYPED_ARRAYS) == 0;
  JS_AddIntrinsicPromise(ctx);
  JS_AddIntrinsicBigInt(ctx);

  // The intrinsics report allocation failures only through a pending exception.
  JSValue exc = JS_GetException(ctx);
  const bool failed = !JS_IsNull(exc) || !lazy_ok;
  JS_FreeValue(ctx, exc);

  JSValue global = JS_GetGlobalObject(ctx);
  bool removed = true;
  for (const char* name : kRemovedGlobals) {
    JSAtom atom = JS_NewAtom(ctx, name);
    if (atom == JS_ATOM_NULL || JS_DeleteProperty(ctx, global, atom, 0) != 1) removed = false;
    JS_FreeAtom(ctx, atom);
  }
  JS_FreeValue(ctx, global);
  if (failed || !removed) {
    JS_FreeContext(ctx);
    return nullptr;
  }
  return ctx;
}

}  // namespace skillbox::engine
