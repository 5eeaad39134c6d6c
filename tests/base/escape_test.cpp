// base/escape.h: the one table of terminal-unsafe code points and the escaper used by logs and the CLI.
#include "base/escape.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::base {
namespace {

using namespace std::string_literals;

TEST(Escape, TheUnsafeTable) {
  for (char32_t cp :
       {U'\0', U'\x1b', U'\n', U'\x7f', U'\x80', U'\x85', U'\x9b', U'\x9f', U'\u061c', U'\u200e', U'\u200f',
        U'\u2028', U'\u2029', U'\u202a', U'\u202e', U'\u2066', U'\u2069'}) {
    EXPECT_TRUE(is_terminal_unsafe(cp)) << static_cast<uint32_t>(cp);
  }
  for (char32_t cp : {U' ', U'a', U'~', U'\xa0', U'\xe9', U'\u200d', U'\u2027', U'\u202f', U'\u2065',
                      U'\u206a', U'\U0001f600'}) {
    EXPECT_FALSE(is_terminal_unsafe(cp)) << static_cast<uint32_t>(cp);
  }
}

TEST(Escape, TextBecomesOneInertLine) {
  EXPECT_EQ(escape_text("plain text, caf\xc3\xa9"), "plain text, caf\xc3\xa9");
  EXPECT_EQ(escape_text("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(escape_text("\x1b[2J\x07\x7f"), "\\x1b[2J\\x07\\x7f");
  EXPECT_EQ(escape_text("x\0y"s), "x\\x00y");
  EXPECT_EQ(escape_text("evil\xe2\x80\xaetxt.exe"), "evil\\u202etxt.exe");
  EXPECT_EQ(escape_text("\xc2\x9b"
                        "31m \xc2\x85 \xe2\x80\xa8"),
            "\\u009b31m \\u0085 \\u2028");
  EXPECT_EQ(escape_text("bad \xff \xc3 \xed\xa0\x80"), "bad \\xff \\xc3 \\xed\\xa0\\x80");
  EXPECT_EQ(escape_text("back\\slash"), "back\\slash");  // kept: safe to show, not reversible
}

TEST(Escape, NewlinesMayBeKept) {
  EXPECT_EQ(escape_text("line 1\nline 2\r\n", /*keep_newlines=*/true), "line 1\nline 2\\r\n");
}

TEST(Escape, CappedOutputEndsOnAUnitBoundaryWithTheSuffix) {
  EXPECT_EQ(escape_text_capped("short", 20, "..."), "short");
  EXPECT_EQ(escape_text_capped(std::string(30, 'x'), 20, "..."), std::string(17, 'x') + "...");
  // \x1b is one unit: never cut in the middle of an escape.
  EXPECT_EQ(escape_text_capped("abcdefghijklmnop\x1b\x1b\x1b", 20, "..."), "abcdefghijklmnop...");
  EXPECT_EQ(escape_text_capped(std::string(20, 'x'), 20, "..."), std::string(20, 'x'));
}

TEST(Escape, JsonTextStaysValidJson) {
  EXPECT_EQ(escape_json_text("{\n  \"s\": \"a\xe2\x80\xae"
                             "b\xc2\x9b"
                             "c\x7f"
                             "d\"\n}"),
            "{\n  \"s\": \"a\\u202eb\\u009bc\\u007fd\"\n}");
  EXPECT_EQ(escape_json_text("\"\xff\""), "\"\\ufffd\"");
}

}  // namespace
}  // namespace skillbox::base
