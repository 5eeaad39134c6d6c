// base/quote.cpp — quoting of foreign strings in messages.
#include "base/quote.h"

#include <cstdint>

#include "base/escape.h"
#include "base/utf8.h"

namespace skillbox::base {
namespace {

void append_c(std::string_view text, std::string& out) {
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    if (b < 0x80) {
      if (is_terminal_unsafe(b))
        append_byte_escape(out, b);
      else
        out += static_cast<char>(b);
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t len = utf8::decode(text, i, cp);
    if (len == 0) {
      append_byte_escape(out, b);
      ++i;
    } else {
      if (is_terminal_unsafe(cp))
        append_code_point_escape(out, cp);
      else
        out.append(text.substr(i, len));
      i += len;
    }
  }
}

void append_json(std::string_view text, std::string& out) {
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t len = utf8::decode(text, i, cp);
    if (len == 0) {
      cp = utf8::kReplacement;
      len = 1;
    }
    i += len;
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (cp >= 0x20 && cp < 0x7F) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      append_code_point_escape(out, cp);
    } else {
      const char32_t v = cp - 0x10000;  // RFC 8259 §7: a UTF-16 surrogate pair
      append_code_point_escape(out, 0xD800 + (v >> 10));
      append_code_point_escape(out, 0xDC00 + (v & 0x3FF));
    }
  }
}

}  // namespace

std::string quote(std::string_view text, size_t max_bytes, QuoteStyle style) {
  const std::string_view head = utf8::prefix(text, max_bytes);
  std::string out = "\"";
  if (style == QuoteStyle::json)
    append_json(head, out);
  else
    append_c(head, out);
  if (head.size() < text.size()) out += "...";
  out += '"';
  return out;
}

}  // namespace skillbox::base
