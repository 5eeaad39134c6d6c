// policy/utf8.cpp — strict UTF-8 checking (RFC 3629).
#include "policy/utf8.h"

#include <cstdint>

namespace skillbox::policy {
namespace {

uint8_t byte_at(std::string_view text, size_t i) {
  return static_cast<uint8_t>(text[i]);
}

bool is_continuation(uint8_t b) {
  return (b & 0xC0) == 0x80;
}

/// Length of the well-formed sequence starting at text[i], or 0 when it is ill-formed. The ranges of
/// the second byte are RFC 3629's table: they exclude overlong forms, surrogates and > U+10FFFF.
size_t sequence_length(std::string_view text, size_t i) {
  const uint8_t b0 = byte_at(text, i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // continuation byte, C0/C1 overlong lead, or F5..FF
  }
  if (text.size() - i < len) return 0;
  const uint8_t b1 = byte_at(text, i + 1);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (!is_continuation(byte_at(text, i + k))) return 0;
  }
  return len;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = sequence_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && is_continuation(byte_at(text, end))) --end;
  return text.substr(0, end);
}

char32_t next_code_point(std::string_view text, size_t& i) {
  const uint8_t b0 = byte_at(text, i);
  size_t len = 1;
  char32_t cp = b0;
  if (b0 >= 0xF0) {
    len = 4;
    cp = b0 & 0x07u;
  } else if (b0 >= 0xE0) {
    len = 3;
    cp = b0 & 0x0Fu;
  } else if (b0 >= 0xC0) {
    len = 2;
    cp = b0 & 0x1Fu;
  }
  for (size_t k = 1; k < len && i + k < text.size(); ++k) {
    cp = (cp << 6) | (byte_at(text, i + k) & 0x3Fu);
  }
  i += len;
  return cp;
}

}  // namespace skillbox::policy
