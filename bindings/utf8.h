// bindings/utf8.h — UTF-8 routines of the host API: QuickJS string bytes, the WHATWG UTF-8 decoder.
//
// QuickJS hands out string contents (JS_ToCStringLen) as UTF-8 in which a lone UTF-16 surrogate is
// kept as its 3-byte encoding (ED A0..BF xx, "WTF-8"). Those bytes are not valid UTF-8; the host API
// either refuses such strings or replaces each lone surrogate with U+FFFD (WebIDL USVString), which
// has the same 3-byte length and can be patched in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skillbox::bindings::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

/// Byte offset of the first lone surrogate in QuickJS string bytes, or npos if there is none.
size_t find_lone_surrogate(std::string_view wtf8);

/// Replaces every lone surrogate of QuickJS string bytes with U+FFFD, in place (same length).
void replace_lone_surrogates(char* data, size_t size);

/// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF) to `out`.
void append(std::string& out, uint32_t code_point);

/// Reads the code point starting at `pos` of QuickJS string bytes (well-formed UTF-8 or WTF-8: a
/// surrogate comes back as its own value) and advances `pos` past it. Returns the length in UTF-16
/// code units (1 or 2). Precondition: pos < text.size().
unsigned next(std::string_view text, size_t& pos, uint32_t& code_point);

/// Length in bytes of a UTF-8 sequence led by `lead`, 1 for a continuation or invalid lead byte.
inline size_t sequence_length(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

/// The UTF-8 decoder of the WHATWG Encoding Standard (§8.1.1 "UTF-8 decoder", §4.1 "decode" with its
/// BOM handling), incremental so that TextDecoder's `{stream: true}` can split a sequence over calls.
/// Invalid input yields one U+FFFD per maximal ill-formed subsequence (the Standard's and Unicode's
/// "substitution of maximal subparts"), or stops with an error when `fatal`.
class Utf8Decoder {
 public:
  Utf8Decoder(bool fatal, bool ignore_bom) : fatal_(fatal), ignore_bom_(ignore_bom) {}

  /// Decodes `size` bytes and appends well-formed UTF-8 to `out`. With `flush`, the end of the
  /// stream follows these bytes: an unfinished sequence is an error and the decoder starts afresh
  /// afterwards (BOM handling included). Returns false on the first error when fatal; the decoder is
  /// then reset and `out` holds what was decoded before the error.
  [[nodiscard]] bool decode(const uint8_t* data, size_t size, bool flush, std::string& out);

  /// Forgets a partial sequence and whether a BOM was seen.
  void reset();

 private:
  void emit(std::string& out, uint32_t code_point);

  bool fatal_;
  bool ignore_bom_;
  bool bom_seen_ = false;
  uint32_t code_point_ = 0;
  uint8_t bytes_seen_ = 0;
  uint8_t bytes_needed_ = 0;
  uint8_t lower_ = 0x80;
  uint8_t upper_ = 0xBF;
};

}  // namespace skillbox::bindings::utf8
