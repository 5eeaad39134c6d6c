// base/utf8_decoder.cpp — the WHATWG streaming UTF-8 decoder.
#include "base/utf8_decoder.h"

#include "base/utf8.h"

namespace skillbox::base::utf8 {

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

}  // namespace skillbox::base::utf8
