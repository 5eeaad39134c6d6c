// bindings/js_classes.h — facts about QuickJS 2021-03-27 objects that its public header does not expose.
//
// The public API cannot tell a Uint8Array from an Int8Array or a Float32Array, nor a DataView from a
// plain object, without running JS (prototype getters that a skill may have replaced). QuickJS keeps
// the class in every object; JS_GetOpaque(v, id) returns the object's internal pointer only when its
// class is `id`. For the classes below that pointer is never null (typed arrays, DataView, ArrayBuffer,
// Map/Set family, Proxy, Promise, RegExp all point at a separate record), so has_class() is exact and
// runs no JS. The numbers are the `JS_CLASS_*` enum of quickjs.c for this pinned version built with
// CONFIG_BIGNUM; tests/bindings/js_classes_test.cpp checks each one against a live object, so an engine
// upgrade that renumbers them fails loudly.
#pragma once

#include <quickjs.h>

extern "C" {
// Defined (non-static) in quickjs.c but missing from quickjs.h: true for the exception QuickJS raises
// when the interrupt handler stops the run. Such an exception must never be swallowed by host code.
JS_BOOL JS_IsUncatchableError(JSContext* ctx, JSValueConst val);
}

namespace skillbox::bindings::js_class {

// Error objects keep no internal pointer: use JS_IsError() to test for them. kError serves only
// JS_GetClassProto(ctx, kError), which yields the context's own Error.prototype.
inline constexpr JSClassID kError = 3;
// For JS_GetClassProto(ctx, kString) only: the context's own String.prototype.
inline constexpr JSClassID kString = 5;
inline constexpr JSClassID kArrayBuffer = 19;
inline constexpr JSClassID kUint8ClampedArray = 21;
inline constexpr JSClassID kInt8Array = 22;
inline constexpr JSClassID kUint8Array = 23;
inline constexpr JSClassID kInt16Array = 24;
inline constexpr JSClassID kUint16Array = 25;
inline constexpr JSClassID kInt32Array = 26;
inline constexpr JSClassID kUint32Array = 27;
inline constexpr JSClassID kBigInt64Array = 28;
inline constexpr JSClassID kBigUint64Array = 29;
inline constexpr JSClassID kFloat32Array = 30;
inline constexpr JSClassID kFloat64Array = 31;
inline constexpr JSClassID kDataView = 32;
inline constexpr JSClassID kRegExp = 18;
inline constexpr JSClassID kMap = 38;
inline constexpr JSClassID kSet = 39;
inline constexpr JSClassID kWeakMap = 40;
inline constexpr JSClassID kWeakSet = 41;
inline constexpr JSClassID kProxy = 48;
inline constexpr JSClassID kPromise = 49;

/// True if `v` is an object of class `id` (one of the constants above except kError). Runs no JS.
inline bool has_class(JSValueConst v, JSClassID id) {
  return JS_GetOpaque(v, id) != nullptr;
}

/// The typed-array class of `v` (kUint8ClampedArray..kFloat64Array), or 0 if `v` is not a typed array.
inline JSClassID typed_array_class(JSValueConst v) {
  for (JSClassID id = kUint8ClampedArray; id <= kFloat64Array; ++id)
    if (has_class(v, id)) return id;
  return 0;
}

/// Constructor name of a typed-array class ("Uint8Array"), for messages and formatting.
inline const char* typed_array_name(JSClassID id) {
  switch (id) {
    case kUint8ClampedArray:
      return "Uint8ClampedArray";
    case kInt8Array:
      return "Int8Array";
    case kUint8Array:
      return "Uint8Array";
    case kInt16Array:
      return "Int16Array";
    case kUint16Array:
      return "Uint16Array";
    case kInt32Array:
      return "Int32Array";
    case kUint32Array:
      return "Uint32Array";
    case kBigInt64Array:
      return "BigInt64Array";
    case kBigUint64Array:
      return "BigUint64Array";
    case kFloat32Array:
      return "Float32Array";
    case kFloat64Array:
      return "Float64Array";
    default:
      return "TypedArray";
  }
}

}  // namespace skillbox::bindings::js_class
