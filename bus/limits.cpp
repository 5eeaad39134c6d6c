#include "bus/limits.h"

#include <cstdint>

namespace skillbox::bus {
namespace {

constexpr size_t kMaxQuotedBytes = 200;

// Length of the UTF-8 sequence starting at text[i], or 0 if it is not a well-formed one (RFC 3629
// table 3-7: the second byte's range depends on the first to exclude overlongs and surrogates).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t len = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t len = utf8_sequence_length(text, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string quote_path(std::string_view given) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  const size_t limit = given.size() > kMaxQuotedBytes ? kMaxQuotedBytes : given.size();
  for (size_t i = 0; i < limit;) {
    const auto c = static_cast<uint8_t>(given[i]);
    const size_t len = utf8_sequence_length(given, i);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (len == 0 || c < 0x20 || c == 0x7F) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    } else {
      out.append(given.substr(i, len));
      i += len;
    }
  }
  if (limit < given.size()) out += "...";
  out += '"';
  return out;
}

ErrorReply path_too_long(std::string_view op, std::string_view given) {
  std::string message(op);
  message += ' ';
  message += quote_path(given);  // reads at most the first kMaxQuotedBytes (plus one UTF-8 sequence)
  message += ": path is " + std::to_string(given.size()) + " bytes long; the limit is " +
             std::to_string(kMaxPathBytes);
  return ErrorReply{ErrorCode::InvalidArgument, std::move(message)};
}

}  // namespace skillbox::bus
