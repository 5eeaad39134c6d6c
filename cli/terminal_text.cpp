// cli/terminal_text.cpp — escaping of skill-controlled text for terminals.
#include "cli/terminal_text.h"

#include <cstdint>

namespace skillbox::cli {
namespace {

/// Decodes one well-formed UTF-8 sequence at text[i]; returns its length, or 0 when ill-formed.
size_t decode(std::string_view text, size_t i, char32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(text[i + k]); };
  const uint8_t b0 = b(0);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  size_t len = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2;
    cp = b0 & 0x1Fu;
    min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3;
    cp = b0 & 0x0Fu;
    min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4;
    cp = b0 & 0x07u;
    min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3Fu);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

/// Characters that can change how a terminal shows what follows them.
bool is_dangerous(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) ||       // C0, DEL, C1 (U+009B is CSI on some terminals)
         cp == 0x061C || cp == 0x200E || cp == 0x200F ||  // bidi marks
         (cp >= 0x2028 && cp <= 0x202E) ||  // line/paragraph separators, bidi embeddings/overrides
         (cp >= 0x2066 && cp <= 0x2069);    // bidi isolates
}

/// Escape of a byte ("\x1b") or of a code point ("\u202e"), in lower-case hex.
std::string hex_escape(bool byte, unsigned value) {
  constexpr std::string_view kDigits = "0123456789abcdef";
  std::string out = byte ? "\\x" : "\\u";
  for (unsigned shift = byte ? 8 : 16; shift > 0;) {
    shift -= 4;
    out += kDigits[(value >> shift) & 0xFu];
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char32_t cp = 0;
    const size_t len = decode(text, i, cp);
    if (len == 0) {
      out += hex_escape(true, static_cast<uint8_t>(text[i]));
      ++i;
      continue;
    }
    if (cp == '\n' && keep_newlines) {
      out += '\n';
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x80 && is_dangerous(cp)) {
      out += hex_escape(true, static_cast<unsigned>(cp));
    } else if (is_dangerous(cp)) {
      out += hex_escape(false, static_cast<unsigned>(cp));
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string printable_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size());
  size_t i = 0;
  while (i < json_text.size()) {
    char32_t cp = 0;
    size_t len = decode(json_text, i, cp);
    if (len == 0) {  // cannot happen for nlohmann's output; never pass the byte through
      out += "\\ufffd";
      ++i;
      continue;
    }
    // C0 controls other than whitespace never occur outside strings in dump() output, and inside
    // strings dump() has escaped them; the rest may only occur inside strings, where \u is valid.
    if (is_dangerous(cp) && cp != '\n' && cp != ' ') {
      out += hex_escape(false, static_cast<unsigned>(cp));
    } else {
      out.append(json_text.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace skillbox::cli
