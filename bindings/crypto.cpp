// bindings/crypto.cpp — `crypto.getRandomValues` and `crypto.randomUUID`.
#include "bindings/crypto.h"

#include <sys/random.h>

#include <cerrno>
#include <iterator>
#include <string>

#include "bindings/args.h"
#include "bindings/errors.h"
#include "bindings/function_list.h"
#include "bindings/js_classes.h"
#include "bindings/owners.h"

namespace skillbox::bindings {
namespace {

JSValue throw_random_failure(JSContext* ctx, const char* function) {
  return JS_ThrowInternalError(ctx, "%s: the host's random number source failed", function);
}

JSValue js_get_random_values(JSContext* ctx, JSValueConst /*this_val*/, int argc, JSValueConst* argv) {
  const Args args(ctx, "crypto.getRandomValues", argc, argv);
  if (!args.require(1)) return JS_EXCEPTION;
  const JSValueConst array = args[0];
  const JSClassID cls = js_class::typed_array_class(array);
  if (cls == js_class::kFloat32Array || cls == js_class::kFloat64Array ||
      js_class::has_class(array, js_class::kDataView))
    return throw_dom_exception(
        ctx, "TypeMismatchError", kTypeMismatchErrorCode,
        std::string("crypto.getRandomValues: array must be an integer TypedArray, got ") +
            std::string(describe(ctx, array)));
  if (cls == 0) return throw_wrong_type(ctx, args.where("array"), "an integer TypedArray", array);
  ByteView view;
  if (!to_buffer_source(ctx, array, args.where("array"), view)) return JS_EXCEPTION;
  if (view.size > kMaxRandomBytes)
    return throw_dom_exception(ctx, "QuotaExceededError", kQuotaExceededErrorCode,
                               "crypto.getRandomValues: the array's byte length (" +
                                   std::to_string(view.size) + ") exceeds the " +
                                   std::to_string(kMaxRandomBytes) + " bytes one call may fill");
  // Engine invariant (QuickJS 2021-03-27): these bytes are the ArrayBuffer's own storage, which
  // JS_GetArrayBuffer hands out as a writable uint8_t* (ByteView is const only because most callers
  // read). This engine has no read-only buffers (a typed array with elements cannot be frozen); a
  // detached buffer gives size 0, so nothing is written. Pinned by
  // Crypto.GetRandomValuesWritesTheCallersBuffer.
  if (!fill_random(const_cast<uint8_t*>(view.data), view.size))
    return throw_random_failure(ctx, "crypto.getRandomValues");
  return JS_DupValue(ctx, array);
}

JSValue js_random_uuid(JSContext* ctx, JSValueConst /*this_val*/, int /*argc*/, JSValueConst* /*argv*/) {
  uint8_t b[16];
  if (!fill_random(b, sizeof b)) return throw_random_failure(ctx, "crypto.randomUUID");
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // variant 10xx (RFC 4122)
  static constexpr char kHex[] = "0123456789abcdef";
  char text[36];
  size_t pos = 0;
  for (size_t i = 0; i < sizeof b; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[pos++] = '-';
    text[pos++] = kHex[b[i] >> 4];
    text[pos++] = kHex[b[i] & 0xF];
  }
  return JS_NewStringLen(ctx, text, sizeof text);
}

const JSCFunctionListEntry kCryptoFunctions[] = {
    list_function("getRandomValues", 1, js_get_random_values),
    list_function("randomUUID", 0, js_random_uuid),
};

}  // namespace

bool fill_random(uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t got = getrandom(data, size, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += got;
    size -= static_cast<size_t>(got);
  }
  return true;
}

bool install_crypto(JSContext* ctx, JSValueConst global) {
  // Created on first access (list_object).
  static const JSCFunctionListEntry kCryptoObject[] = {
      list_object("crypto", kCryptoFunctions, static_cast<int>(std::size(kCryptoFunctions))),
  };
  JS_SetPropertyFunctionList(ctx, global, kCryptoObject, 1);
  return true;
}

}  // namespace skillbox::bindings
