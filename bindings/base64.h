// bindings/base64.h — `atob` and `btoa` (HTML Standard §8.3 "Base64 utility methods").
//
// btoa(data): `data` must hold only code points U+0000..U+00FF (a "binary string"); each becomes one
// byte, encoded as base64 with padding. Anything above U+00FF is an InvalidCharacterError.
// atob(data): forgiving-base64 decode (Infra Standard §4.7): ASCII whitespace is ignored, padding is
// optional, but a length of 4n+1 or a character outside the base64 alphabet is an
// InvalidCharacterError. The result is a binary string: one code unit per decoded byte.
// InvalidCharacterError is an Error with that name and code 5 (DOMException stand-in). Arguments
// accept primitives converted as String() does (btoa(42) === "NDI="), not objects (TypeError).
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skillbox::bindings {

/// Standard base64 (RFC 4648 §4) with `=` padding.
std::string base64_encode(const uint8_t* data, size_t size);

/// Infra's forgiving-base64 decode of ASCII text; nullopt on failure.
std::optional<std::string> forgiving_base64_decode(std::string_view text);

/// The value (0-63) of a character of the RFC 4648 section 4 alphabet (A-Z a-z 0-9 + /), -1 for any other
/// character (padding '=' included). Also the digits of a source map's Base64 VLQ (engine/source_map.cpp).
int base64_sextet(char c);

/// Defines `atob` and `btoa` on `global` (lazily created functions).
void install_base64(JSContext* ctx, JSValueConst global);

}  // namespace skillbox::bindings
