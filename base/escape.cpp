// base/escape.cpp — the table of terminal-unsafe code points and the escaper built on it.
#include "base/escape.h"

#include <algorithm>

#include "base/utf8.h"

namespace skillbox::base {
namespace {

constexpr char kHex[] = "0123456789abcdef";

}  // namespace

bool is_terminal_unsafe(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) ||       // C0, DEL, C1 (U+009B is CSI, U+0085 NEL)
         cp == 0x061C || cp == 0x200E || cp == 0x200F ||  // bidi marks
         (cp >= 0x2028 && cp <= 0x202E) ||                // line/paragraph separators, bidi overrides
         (cp >= 0x2066 && cp <= 0x2069);                  // bidi isolates
}

void append_byte_escape(std::string& out, uint8_t b) {
  const char escape[] = {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
  out.append(escape, sizeof escape);
}

void append_code_point_escape(std::string& out, char32_t cp) {
  const char escape[] = {
      '\\', 'u', kHex[(cp >> 12) & 0xF], kHex[(cp >> 8) & 0xF], kHex[(cp >> 4) & 0xF], kHex[cp & 0xF]};
  out.append(escape, sizeof escape);
}

size_t escape_unit(std::string_view text, size_t i, std::string& out, bool keep_newlines) {
  const auto b = static_cast<uint8_t>(text[i]);
  if (b < 0x80) {
    switch (b) {
      case '\n':
        out += keep_newlines ? "\n" : "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (is_terminal_unsafe(b))
          append_byte_escape(out, b);  // ESC of ANSI sequences, NUL, BEL, backspace, DEL, ...
        else
          out.push_back(static_cast<char>(b));
    }
    return 1;
  }
  char32_t cp = 0;
  const size_t len = utf8::decode(text, i, cp);
  if (len == 0) {
    append_byte_escape(out, b);
    return 1;
  }
  if (is_terminal_unsafe(cp))
    append_code_point_escape(out, cp);
  else
    out.append(text.substr(i, len));
  return len;
}

std::string escape_text(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) i += escape_unit(text, i, out, keep_newlines);
  return out;
}

std::string escape_text_capped(std::string_view text, size_t max_bytes, std::string_view cut_suffix) {
  const size_t keep = max_bytes > cut_suffix.size() ? max_bytes - cut_suffix.size() : 0;
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t fits = 0;  // out.size() at the last unit boundary that leaves room for the suffix
  for (size_t i = 0; i < text.size();) {
    i += escape_unit(text, i, out);
    if (out.size() <= keep) fits = out.size();
    if (out.size() > max_bytes) {
      out.resize(fits);
      out += cut_suffix;
      return out;
    }
  }
  return out;
}

std::string escape_json_text(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  size_t i = 0;
  while (i < json_text.size()) {
    char32_t cp = 0;
    const size_t len = utf8::decode(json_text, i, cp);
    if (len == 0) {  // never pass an ill-formed byte through
      out += "\\ufffd";
      ++i;
      continue;
    }
    // C0 controls other than whitespace never occur outside strings in serializer output, and inside
    // strings they are escaped already; the rest may only occur inside strings, where \u is valid.
    if (is_terminal_unsafe(cp) && cp != '\n' && cp != ' ') {
      append_code_point_escape(out, cp);
    } else {
      out.append(json_text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace skillbox::base
