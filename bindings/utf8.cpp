// bindings/utf8.cpp — UTF-8 routines of the host API.
#include "bindings/utf8.h"

namespace skillbox::bindings::utf8 {

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

void Utf8Decoder::reset() {
  bom_seen_ = false;
  code_point_ = 0;
  bytes_seen_ = 0;
  bytes_needed_ = 0;
  lower_ = 0x80;
  upper_ = 0xBF;
}

void Utf8Decoder::emit(std::string& out, uint32_t cp) {
  if (!ignore_bom_ && !bom_seen_) {
    bom_seen_ = true;
    if (cp == 0xFEFF) return;  // a leading BOM is not part of the text (Encoding §4.1 "decode")
  }
  append(out, cp);
}

bool Utf8Decoder::decode(const uint8_t* data, size_t size, bool flush, std::string& out) {
  out.reserve(out.size() + size);
  size_t i = 0;
  while (i < size) {
    const uint8_t b = data[i];
    if (bytes_needed_ == 0) {
      if (b < 0x80) {
        // Copy an ASCII run at once; only its first byte can be a BOM candidate, and it is not one.
        if (!bom_seen_) {
          emit(out, b);
          ++i;
        }
        size_t end = i;
        while (end < size && data[end] < 0x80) ++end;
        out.append(reinterpret_cast<const char*>(data + i), end - i);
        i = end;
        continue;
      }
      ++i;
      if (b >= 0xC2 && b <= 0xDF) {
        bytes_needed_ = 1;
        code_point_ = b & 0x1F;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0) lower_ = 0xA0;  // no overlong 3-byte forms
        if (b == 0xED) upper_ = 0x9F;  // no surrogates
        bytes_needed_ = 2;
        code_point_ = b & 0x0F;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0) lower_ = 0x90;  // no overlong 4-byte forms
        if (b == 0xF4) upper_ = 0x8F;  // nothing above U+10FFFF
        bytes_needed_ = 3;
        code_point_ = b & 0x07;
      } else {
        if (fatal_) {
          reset();
          return false;
        }
        emit(out, kReplacement);
      }
      continue;
    }
    if (b < lower_ || b > upper_) {
      // The sequence so far is one maximal ill-formed subpart; `b` is examined again as a lead.
      code_point_ = 0;
      bytes_needed_ = 0;
      bytes_seen_ = 0;
      lower_ = 0x80;
      upper_ = 0xBF;
      if (fatal_) {
        reset();
        return false;
      }
      emit(out, kReplacement);
      continue;
    }
    ++i;
    lower_ = 0x80;
    upper_ = 0xBF;
    code_point_ = (code_point_ << 6) | (b & 0x3F);
    if (++bytes_seen_ != bytes_needed_) continue;
    const uint32_t cp = code_point_;
    code_point_ = 0;
    bytes_needed_ = 0;
    bytes_seen_ = 0;
    emit(out, cp);
  }
  if (flush) {
    const bool unfinished = bytes_needed_ != 0;
    reset();
    if (unfinished) {
      if (fatal_) return false;
      append(out, kReplacement);
    }
  }
  return true;
}

}  // namespace skillbox::bindings::utf8
