// base/utf8.h: strict validation (the rules every layer used to check on its own) and QuickJS string
// bytes (WTF-8).
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace skillbox::base::utf8 {
namespace {

using namespace std::string_literals;

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Validate, AcceptsWellFormedText) {
  for (const std::string& ok :
       {""s, "plain ascii"s, "caf\xc3\xa9"s, "\xe4\xb8\xad\xe6\x96\x87"s, "\xf0\x9f\x98\x80"s,
        "\xed\x9f\xbf"s /* U+D7FF */, "\xee\x80\x80"s /* U+E000 */, "\xf4\x8f\xbf\xbf"s /* U+10FFFF */,
        "a\0b"s /* NUL is well-formed */}) {
    EXPECT_TRUE(is_valid(ok)) << ok;
    EXPECT_EQ(find_invalid(ok), std::nullopt) << ok;
  }
}

TEST(Utf8Validate, RefusesEveryIllFormedKind) {
  struct Case {
    std::string text;
    size_t offset;
  };
  const std::vector<Case> cases = {
      {"\x80", 0},              // lone continuation byte
      {"ab\xbf", 2},            // continuation after ASCII
      {"\xc0\xaf", 0},          // overlong '/' (C0 lead)
      {"\xc1\xbf", 0},          // overlong (C1 lead)
      {"\xe0\x80\xaf", 0},      // overlong 3-byte
      {"\xf0\x80\x80\xaf", 0},  // overlong 4-byte
      {"\xed\xa0\x80", 0},      // U+D800: a lone surrogate as QuickJS writes it
      {"x\xed\xbf\xbf", 1},     // U+DFFF
      {"\xf4\x90\x80\x80", 0},  // above U+10FFFF
      {"\xf5\x80\x80\x80", 0},  // F5 lead
      {"\xff", 0},              // FF
      {"ok\xc3", 2},            // truncated 2-byte
      {"\xe4\xb8", 0},          // truncated 3-byte
      {"\xf0\x9f\x98", 0},      // truncated 4-byte
      {"\xc3\x28", 0},          // bad continuation
      {"\xe2\x82\x28", 0},      // bad third byte
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(is_valid(c.text)) << testing::PrintToString(c.text);
    EXPECT_EQ(find_invalid(c.text), c.offset) << testing::PrintToString(c.text);
  }
}

TEST(Utf8Validate, DecodeReturnsLengthAndCodePoint) {
  char32_t cp = 0;
  EXPECT_EQ(decode("A", 0, cp), 1u);
  EXPECT_EQ(cp, U'A');
  EXPECT_EQ(decode("\xc3\xa9", 0, cp), 2u);
  EXPECT_EQ(cp, U'\u00e9');
  EXPECT_EQ(decode("x\xe2\x80\xae", 1, cp), 3u);
  EXPECT_EQ(cp, U'\u202e');
  EXPECT_EQ(decode("\xf0\x9f\x98\x80", 0, cp), 4u);
  EXPECT_EQ(cp, U'\U0001f600');
  EXPECT_EQ(decode("\xed\xa0\x80", 0, cp), 0u);
  EXPECT_EQ(well_formed_length("\xe4\xb8\xad", 0), 3u);
  EXPECT_EQ(well_formed_length("\xe4\xb8", 0), 0u);
}

TEST(Utf8Validate, PrefixEndsOnACharacterBoundary) {
  EXPECT_EQ(prefix("hello", 10), "hello");
  EXPECT_EQ(prefix("hello", 3), "hel");
  EXPECT_EQ(prefix("a\xc3\xa9", 2), "a");  // would cut the 2-byte sequence
  EXPECT_EQ(prefix("a\xc3\xa9", 3), "a\xc3\xa9");
  EXPECT_EQ(prefix("\xf0\x9f\x98\x80!", 3), "");
  EXPECT_EQ(prefix("abc", 0), "");
}

TEST(Utf8, FindsLoneSurrogatesOnly) {
  EXPECT_EQ(find_lone_surrogate("abc"), std::string_view::npos);
  EXPECT_EQ(find_lone_surrogate("\xED\x9F\xBF"), std::string_view::npos);  // U+D7FF is fine
  EXPECT_EQ(find_lone_surrogate("a\xED\xA0\x80"), 1u);                     // U+D800
  EXPECT_EQ(find_lone_surrogate("ab\xED\xBF\xBF"), 2u);                    // U+DFFF
  EXPECT_EQ(find_lone_surrogate("\xF0\x9F\x98\x80"), std::string_view::npos);
  EXPECT_EQ(find_lone_surrogate("\xED"), std::string_view::npos);
}

TEST(Utf8, ReplacesLoneSurrogatesInPlace) {
  std::string s =
      "a\xED\xA0\x80"
      "b\xED\xBF\xBF";
  replace_lone_surrogates(s.data(), s.size());
  EXPECT_EQ(s, "a" + kFffd + "b" + kFffd);
}

TEST(Utf8, AppendAndNext) {
  std::string s;
  for (uint32_t cp : {0x41u, 0xE9u, 0x4E2Du, 0x1F600u, 0x10FFFFu}) append(s, cp);
  EXPECT_EQ(s, "A\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
  size_t pos = 0;
  uint32_t cp = 0;
  std::vector<uint32_t> cps;
  std::vector<unsigned> units;
  while (pos < s.size()) {
    units.push_back(next(s, pos, cp));
    cps.push_back(cp);
  }
  EXPECT_EQ(cps, (std::vector<uint32_t>{0x41, 0xE9, 0x4E2D, 0x1F600, 0x10FFFF}));
  EXPECT_EQ(units, (std::vector<unsigned>{1, 1, 1, 2, 2}));
}

}  // namespace
}  // namespace skillbox::base::utf8
