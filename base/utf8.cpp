// base/utf8.cpp — strict UTF-8 checking and QuickJS string bytes.
#include "base/utf8.h"

namespace skillbox::base::utf8 {

size_t decode(std::string_view text, size_t i, char32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  }
  // The second byte's range depends on the first (table 3-7): it excludes overlongs, surrogates and
  // code points above U+10FFFF.
  size_t len = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  char32_t value = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    value = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    value = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    value = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // continuation byte first, C0/C1 overlong lead, or F5..FF
  }
  if (text.size() - i < len) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
    value = (value << 6) | (b & 0x3Fu);
  }
  cp = value;
  return len;
}

size_t well_formed_length(std::string_view text, size_t i) {
  char32_t ignored = 0;
  return decode(text, i, ignored);
}

std::optional<size_t> find_invalid(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const size_t len = well_formed_length(text, i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

bool is_valid(std::string_view text) {
  return !find_invalid(text).has_value();
}

std::string_view prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<uint8_t>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t find_lone_surrogate(std::string_view wtf8) {
  // In UTF-8 the lead byte ED is followed by 80..9F; A0..BF after it can only be a surrogate, and
  // QuickJS only produces one for a surrogate left unpaired (pairs become 4-byte sequences).
  for (size_t i = wtf8.find('\xED'); i != std::string_view::npos; i = wtf8.find('\xED', i + 1)) {
    if (i + 1 < wtf8.size() && static_cast<uint8_t>(wtf8[i + 1]) >= 0xA0) return i;
  }
  return std::string_view::npos;
}

void replace_lone_surrogates(char* data, size_t size) {
  const std::string_view text(data, size);
  size_t i = find_lone_surrogate(text);
  while (i != std::string_view::npos) {
    // U+FFFD is EF BF BD: three bytes, like the surrogate it replaces.
    data[i] = '\xEF';
    data[i + 1] = '\xBF';
    data[i + 2] = '\xBD';
    const size_t rest = find_lone_surrogate(text.substr(i + 3));
    i = rest == std::string_view::npos ? rest : i + 3 + rest;
  }
}

std::string escape_invalid(std::string_view wtf8) {
  std::string out;
  out.reserve(wtf8.size());
  static constexpr char kHex[] = "0123456789ABCDEF";
  size_t i = 0;
  while (i < wtf8.size()) {
    const std::optional<size_t> bad = find_invalid(wtf8.substr(i));
    if (!bad) {
      out.append(wtf8.substr(i));
      break;
    }
    out.append(wtf8.substr(i, *bad));
    i += *bad;
    const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(wtf8[k])); };
    if (b(i) == 0xED && i + 2 < wtf8.size() && b(i + 1) >= 0xA0 && b(i + 1) <= 0xBF &&
        (b(i + 2) & 0xC0) == 0x80) {
      const uint32_t unit = 0xD000 | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xF];
      i += 3;
    } else {
      out += "\\x";
      out += kHex[b(i) >> 4];
      out += kHex[b(i) & 0xF];
      i += 1;
    }
  }
  return out;
}

unsigned next(std::string_view text, size_t& pos, uint32_t& cp) {
  const auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(text[i])); };
  const uint32_t lead = byte(pos);
  size_t len = sequence_length(static_cast<uint8_t>(lead));
  if (pos + len > text.size()) len = 1;  // cannot happen for QuickJS output; stay in bounds anyway
  switch (len) {
    case 1:
      cp = lead;
      break;
    case 2:
      cp = ((lead & 0x1F) << 6) | (byte(pos + 1) & 0x3F);
      break;
    case 3:
      cp = ((lead & 0x0F) << 12) | ((byte(pos + 1) & 0x3F) << 6) | (byte(pos + 2) & 0x3F);
      break;
    default:
      cp = ((lead & 0x07) << 18) | ((byte(pos + 1) & 0x3F) << 12) | ((byte(pos + 2) & 0x3F) << 6) |
           (byte(pos + 3) & 0x3F);
      break;
  }
  pos += len;
  return cp >= 0x10000 ? 2 : 1;
}

}  // namespace skillbox::base::utf8
