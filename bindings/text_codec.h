// bindings/text_codec.h — the WHATWG Encoding Standard's TextEncoder and TextDecoder (UTF-8 only).
//
// Both are real classes of the skill's realm: `new TextEncoder()` works, calling without `new` is a
// TypeError, instances inherit from TextEncoder.prototype (subclassing works), methods and getters
// check their receiver ("Illegal invocation" TypeError otherwise), prototypes carry
// Symbol.toStringTag. Written in C; no JS source is evaluated.
//
// TextEncoder: `encoding` ("utf-8"), `encode(input = "")` -> Uint8Array, `encodeInto(source,
// destination)` -> {read, written} (whole characters only; `read` counts UTF-16 code units).
// TextDecoder(label = "utf-8", {fatal, ignoreBOM}): only the UTF-8 labels of the Standard are
// accepted (others: RangeError); `decode(input?, {stream})` takes an ArrayBuffer, any TypedArray or a
// DataView; invalid bytes become U+FFFD, or a TypeError when `fatal`; a leading BOM is dropped unless
// `ignoreBOM`; `stream: true` keeps an unfinished sequence for the next call.
//
// Deviation from Web IDL, for the hostile-argument rule: string arguments accept primitives (converted
// as String() does) but not objects, whose toString would run skill code: `encode({})` is a
// TypeError instead of encoding "[object Object]". Lone surrogates are replaced with U+FFFD (USVString).
#pragma once

#include <quickjs.h>

namespace skillbox::bindings {

/// Defines TextEncoder and TextDecoder on `global`. Returns false with an exception pending.
[[nodiscard]] bool install_text_codec(JSContext* ctx, JSValueConst global);

}  // namespace skillbox::bindings
