// base/utf8_decoder.h — the streaming UTF-8 decoder of the WHATWG Encoding Standard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace skillbox::base::utf8 {

/// The UTF-8 decoder of the WHATWG Encoding Standard (§8.1.1 "UTF-8 decoder", §4.1 "decode" with its
/// BOM handling), incremental so that TextDecoder's `{stream: true}` can split a sequence over calls.
/// Invalid input yields one U+FFFD per maximal ill-formed subsequence (the Standard's and Unicode's
/// "substitution of maximal subparts"), or stops with an error when `fatal`.
class Utf8Decoder {
 public:
  /// `fatal`: stop at the first error instead of substituting U+FFFD. `ignore_bom`: keep a leading
  /// U+FEFF as text instead of dropping it.
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

}  // namespace skillbox::base::utf8
