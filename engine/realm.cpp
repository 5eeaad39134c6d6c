#include "engine/realm.h"

namespace skillbox::engine {
namespace {

// Globals the intrinsics install but a skill must not see (see realm.h): shared memory from
// JS_AddIntrinsicTypedArrays, and `__date_clock`, an engine debugging helper of JS_AddIntrinsicDate
// (a monotonic microsecond clock).
constexpr const char* kRemovedGlobals[] = {"Atomics", "SharedArrayBuffer", "__date_clock"};

}  // namespace

JSContext* new_skill_context(JSRuntime* rt) {
  JSContext* ctx = JS_NewContextRaw(rt);
  if (ctx == nullptr) return nullptr;
  JS_AddIntrinsicBaseObjects(ctx);
  JS_AddIntrinsicDate(ctx);
  JS_AddIntrinsicEval(ctx);
  JS_AddIntrinsicStringNormalize(ctx);
  JS_AddIntrinsicRegExpCompiler(ctx);
  JS_AddIntrinsicRegExp(ctx);
  JS_AddIntrinsicJSON(ctx);
  JS_AddIntrinsicProxy(ctx);
  JS_AddIntrinsicMapSet(ctx);
  JS_AddIntrinsicTypedArrays(ctx);
  JS_AddIntrinsicPromise(ctx);
  JS_AddIntrinsicBigInt(ctx);

  // The intrinsics report allocation failures only through a pending exception.
  JSValue exc = JS_GetException(ctx);
  const bool failed = !JS_IsNull(exc);
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
