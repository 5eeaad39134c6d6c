// server/api_key.cpp — see api_key.h.
#include "server/api_key.h"

#include <sodium.h>

#include <cstdlib>
#include <vector>

namespace skillbox::server {
namespace {

/// sodium_init() once; it fails only when the system has no usable randomness source, and a server that
/// cannot make keys or request ids must not start.
void ensure_sodium() {
  static const int ready = sodium_init();
  if (ready < 0) std::abort();
}

std::string to_hex(const unsigned char* bytes, size_t n) {
  std::string out(n * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes, n);
  out.pop_back();  // the terminating NUL sodium_bin2hex writes
  return out;
}

}  // namespace

std::string generate_api_key() {
  return "sbx_" + random_hex(32);
}

KeyHash hash_api_key(std::string_view key) {
  ensure_sodium();
  KeyHash out{};
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(key.data()), key.size());
  return out;
}

std::optional<KeyHash> parse_key_hash(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  KeyHash out{};
  size_t written = 0;
  const char* end = nullptr;
  if (sodium_hex2bin(out.data(), out.size(), hex.data(), hex.size(), nullptr, &written, &end) != 0 ||
      written != out.size() || end != hex.data() + hex.size()) {
    return std::nullopt;
  }
  return out;
}

std::string key_hash_hex(const KeyHash& hash) {
  return to_hex(hash.data(), hash.size());
}

bool key_hashes_equal(const KeyHash& a, const KeyHash& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_hex(size_t bytes) {
  ensure_sodium();
  std::vector<unsigned char> buf(bytes);
  randombytes_buf(buf.data(), buf.size());
  return to_hex(buf.data(), buf.size());
}

}  // namespace skillbox::server
