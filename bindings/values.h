// bindings/values.h — making JS values of the skill's realm from host data.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace skillbox::bindings {

/// A new Uint8Array of ctx holding a copy of `size` bytes, made with the context's original
/// %Uint8Array% (captured at install: a skill that replaced the global `Uint8Array` still gets a real
/// one). Returns JS_EXCEPTION (pending) when out of memory.
JSValue new_uint8_array(JSContext* ctx, const uint8_t* data, size_t size);

/// A JS string of ctx from UTF-8 text (JS_NewStringLen). Invalid UTF-8 bytes read as Latin-1.
inline JSValue new_string(JSContext* ctx, std::string_view text) {
  return JS_NewStringLen(ctx, text.data(), text.size());
}

}  // namespace skillbox::bindings
