// server/api_key.h — tenant API keys: generated, hashed and compared without leaking timing.
//
// The server never stores a key, only its SHA-256 (libsodium's crypto_hash_sha256), so a config file
// that leaks gives no key. A presented key is hashed first and the hashes are compared with
// sodium_memcmp, whose time does not depend on where the bytes differ (a timing oracle on the
// comparison would otherwise reveal a stored hash byte by byte). Keys are high-entropy random strings,
// so an unsalted fast hash is enough: there is no dictionary to attack.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace skillbox::server {

/// SHA-256 of an API key.
using KeyHash = std::array<unsigned char, 32>;

/// Shortest API key accepted from a file (`--api-key-file`): 16 characters. Generated keys are longer.
inline constexpr size_t kMinApiKeyBytes = 16;
/// Longest API key accepted (files and Authorization headers alike).
inline constexpr size_t kMaxApiKeyBytes = 256;

/// A fresh key: "sbx_" followed by 64 lower-case hex digits (32 bytes from libsodium's CSPRNG).
[[nodiscard]] std::string generate_api_key();

/// SHA-256 of `key`.
[[nodiscard]] KeyHash hash_api_key(std::string_view key);

/// The hash written as 64 hex digits (either case), or std::nullopt when `hex` is not that.
[[nodiscard]] std::optional<KeyHash> parse_key_hash(std::string_view hex);

/// The hash as 64 lower-case hex digits (what a config's `key_sha256` holds).
[[nodiscard]] std::string key_hash_hex(const KeyHash& hash);

/// True when the hashes are equal; constant time (sodium_memcmp).
[[nodiscard]] bool key_hashes_equal(const KeyHash& a, const KeyHash& b);

/// `bytes` random bytes as lower-case hex (request ids: 16 bytes, 32 digits).
[[nodiscard]] std::string random_hex(size_t bytes);

}  // namespace skillbox::server
