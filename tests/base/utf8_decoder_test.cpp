// base/utf8_decoder.h: the WHATWG UTF-8 decoder, byte for byte.
#include "base/utf8_decoder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/utf8.h"

namespace skillbox::base::utf8 {
namespace {

std::string decode(const std::vector<uint8_t>& bytes, bool fatal = false, bool* ok = nullptr) {
  Utf8Decoder decoder(fatal, /*ignore_bom=*/false);
  std::string out;
  const bool result = decoder.decode(bytes.data(), bytes.size(), /*flush=*/true, out);
  if (ok != nullptr) *ok = result;
  return out;
}

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Decoder, MaximalSubpartReplacement) {
  // Unicode 15 §3.9, Table 3-8 style cases.
  EXPECT_EQ(decode({0x61, 0xF1, 0x80, 0x80, 0xE1, 0x80, 0xC2, 0x62, 0x80, 0x63, 0x80, 0xBF, 0x64}),
            "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d");
  EXPECT_EQ(decode({0xC0, 0xAF}), kFffd + kFffd);
  EXPECT_EQ(decode({0xE0, 0x9F, 0x80}), kFffd + kFffd + kFffd);
  EXPECT_EQ(decode({0xF4, 0x90, 0x80, 0x80}), kFffd + kFffd + kFffd + kFffd);
  EXPECT_EQ(decode({0xF5}), kFffd);
  EXPECT_EQ(decode({0xFF, 0xFE}), kFffd + kFffd);
  EXPECT_EQ(decode({0xE4, 0xB8}), kFffd);  // unfinished at the end: one replacement
  EXPECT_EQ(decode({0xE4, 0xB8, 0xAD, 0x00}), std::string("\xE4\xB8\xAD\0", 4));
}

TEST(Utf8Decoder, FatalStopsAtTheFirstError) {
  bool ok = true;
  EXPECT_EQ(decode({0x61, 0x62, 0xFF, 0x63}, true, &ok), "ab");
  EXPECT_FALSE(ok);
  EXPECT_EQ(decode({0x61, 0xE4}, true, &ok), "a");
  EXPECT_FALSE(ok);
  EXPECT_EQ(decode({0x61, 0xE4, 0xB8, 0xAD}, true, &ok), "a\xE4\xB8\xAD");
  EXPECT_TRUE(ok);
}

TEST(Utf8Decoder, StreamsAcrossCallsAndDropsOneLeadingBom) {
  Utf8Decoder decoder(false, false);
  std::string out;
  const uint8_t part1[] = {0xEF, 0xBB};
  const uint8_t part2[] = {0xBF, 0xEF, 0xBB, 0xBF, 0xF0, 0x9F};
  const uint8_t part3[] = {0x98, 0x80};
  ASSERT_TRUE(decoder.decode(part1, sizeof part1, false, out));
  ASSERT_TRUE(decoder.decode(part2, sizeof part2, false, out));
  ASSERT_TRUE(decoder.decode(part3, sizeof part3, true, out));
  EXPECT_EQ(out, "\xEF\xBB\xBF\xF0\x9F\x98\x80");  // the second BOM is text
  // After the flush a new stream begins: its BOM is dropped again.
  out.clear();
  const uint8_t again[] = {0xEF, 0xBB, 0xBF, 0x7A};
  ASSERT_TRUE(decoder.decode(again, sizeof again, true, out));
  EXPECT_EQ(out, "z");
}

TEST(Utf8Decoder, IgnoreBomKeepsIt) {
  Utf8Decoder decoder(false, true);
  std::string out;
  const uint8_t bytes[] = {0xEF, 0xBB, 0xBF, 0x61};
  ASSERT_TRUE(decoder.decode(bytes, sizeof bytes, true, out));
  EXPECT_EQ(out,
            "\xEF\xBB\xBF"
            "a");
}

TEST(Utf8Decoder, EveryScalarValueRoundTrips) {
  std::string text;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp)
    if (cp < 0xD800 || cp > 0xDFFF) append(text, cp);
  Utf8Decoder decoder(true, true);
  std::string out;
  ASSERT_TRUE(decoder.decode(reinterpret_cast<const uint8_t*>(text.data()), text.size(), true, out));
  EXPECT_EQ(out, text);
}

}  // namespace
}  // namespace skillbox::base::utf8
