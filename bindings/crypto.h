// bindings/crypto.h — `crypto.getRandomValues` and `crypto.randomUUID` (W3C Web Cryptography API §10).
//
// Random bytes come from the kernel's CSPRNG through getrandom(2) (the worker's seccomp filter must
// allow it). getRandomValues(array) fills an integer TypedArray (Int8/Uint8/Uint8Clamped/Int16/
// Uint16/Int32/Uint32/BigInt64/BigUint64Array) in place and returns it; a Float32/Float64Array or a
// DataView is a TypeMismatchError, more than 65,536 bytes a QuotaExceededError (Error objects with
// those names and the legacy DOMException codes 17 and 22), anything else a TypeError.
// randomUUID() returns an RFC 4122 §4.4 version 4 UUID in lower-case hex, e.g.
// "36b8f84d-df4e-4d49-b662-bcde71a8764f". `crypto` is a plain object: its methods need no receiver.
#pragma once

#include <quickjs.h>

#include <cstddef>
#include <cstdint>

namespace skillbox::bindings {

/// Bytes one getRandomValues call may fill (Web Cryptography API: 65,536).
inline constexpr size_t kMaxRandomBytes = 65536;

/// Fills `size` bytes from getrandom(2), retrying short reads and EINTR. False if the kernel refuses.
[[nodiscard]] bool fill_random(uint8_t* data, size_t size);

/// Defines `crypto` on `global`. Returns false with an exception pending.
[[nodiscard]] bool install_crypto(JSContext* ctx, JSValueConst global);

}  // namespace skillbox::bindings
