// fuzz/base64_utf8.cpp — base64 (atob/btoa's codec) and the UTF-8 validator and streaming decoder.
//
// Invariants:
//  - base64: decode(encode(x)) == x; a decoded text re-encodes to a text that decodes to the same bytes.
//  - UTF-8: is_valid agrees with find_invalid; the non-fatal decoder always produces valid UTF-8, equal
//    to the input when the input was valid (after a dropped leading BOM); decoding in two chunks split
//    anywhere gives the same text as decoding at once; the fatal decoder fails exactly on invalid input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "base/utf8_decoder.h"
#include "bindings/base64.h"
#include "fuzz/fuzz_check.h"

namespace {

namespace utf8 = skillbox::base::utf8;

void check_base64(const uint8_t* data, size_t size) {
  std::string encoded = skillbox::bindings::base64_encode(data, size);
  auto decoded = skillbox::bindings::forgiving_base64_decode(encoded);
  FUZZ_CHECK(decoded.has_value());
  FUZZ_CHECK(*decoded == std::string_view(reinterpret_cast<const char*>(data), size));

  auto forgiving = skillbox::bindings::forgiving_base64_decode(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (forgiving) {
    std::string again = skillbox::bindings::base64_encode(reinterpret_cast<const uint8_t*>(forgiving->data()),
                                                          forgiving->size());
    auto round = skillbox::bindings::forgiving_base64_decode(again);
    FUZZ_CHECK(round.has_value());
    FUZZ_CHECK(*round == *forgiving);
  }
}

std::string decode(const uint8_t* data, size_t size, size_t split) {
  utf8::Utf8Decoder decoder(/*fatal=*/false, /*ignore_bom=*/false);
  std::string out;
  FUZZ_CHECK(decoder.decode(data, split, /*flush=*/false, out));
  FUZZ_CHECK(decoder.decode(data + split, size - split, /*flush=*/true, out));
  return out;
}

void check_utf8(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool valid = utf8::is_valid(text);
  FUZZ_CHECK(valid == !utf8::find_invalid(text).has_value());

  std::string whole = decode(data, size, size);
  FUZZ_CHECK(utf8::is_valid(whole));
  if (valid) {
    std::string_view expected = text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
    FUZZ_CHECK(whole == expected);
  }
  size_t split = size == 0 ? 0 : data[0] % (size + 1);
  FUZZ_CHECK(decode(data, size, split) == whole);

  utf8::Utf8Decoder fatal(/*fatal=*/true, /*ignore_bom=*/true);
  std::string out;
  FUZZ_CHECK(fatal.decode(data, size, /*flush=*/true, out) == valid);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  check_base64(data, size);
  check_utf8(data, size);
  return 0;
}
