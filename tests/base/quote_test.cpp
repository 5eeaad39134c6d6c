// base/quote.h: the one quoting helper of error messages, in its two styles.
#include "base/quote.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::base {
namespace {

using namespace std::string_literals;

// Formerly the workspace's quote_path (capabilities/fs/workspace_path), with its cases.
TEST(QuoteC, EscapesQuotesControlAndInvalidBytes) {
  EXPECT_EQ(quote("a\"b\\c", 200), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(quote("x\0y\n\x1b\xff"s, 200), "\"x\\x00y\\x0a\\x1b\\xff\"");
  EXPECT_EQ(quote("\xc3\xa4", 200), "\"\xc3\xa4\"");
  EXPECT_EQ(quote(std::string(250, 'z'), 200), "\"" + std::string(200, 'z') + "...\"");
}

TEST(QuoteC, TerminalUnsafeCharactersAreEscaped) {
  EXPECT_EQ(quote("evil\xe2\x80\xaetxt", 200), "\"evil\\u202etxt\"");  // U+202E RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(quote("a\xc2\x9b"
                  "31m",
                  200),
            "\"a\\u009b31m\"");  // U+009B CSI
  EXPECT_EQ(quote("del\x7f", 200), "\"del\\x7f\"");
}

// Formerly bindings' quoted(): a skill string cut on a character boundary.
TEST(QuoteC, CutsOnACharacterBoundary) {
  EXPECT_EQ(quote(std::string(40, 'a'), 40), "\"" + std::string(40, 'a') + "\"");
  EXPECT_EQ(quote(std::string(100, 'a'), 40), "\"" + std::string(40, 'a') + "...\"");
  EXPECT_EQ(quote("a" + std::string(20, '\xc3'), 4), "\"a\\xc3\\xc3\\xc3...\"");  // ill-formed: bytes
  EXPECT_EQ(quote("ab\xc3\xa9"
                  "cd",
                  3),
            "\"ab...\"");  // é would be cut in half
}

// Formerly policy's quote_for_message (nlohmann::json dump with ensure_ascii), with its cases.
TEST(QuoteJson, AsciiJsonString) {
  EXPECT_EQ(quote("lots", 48, QuoteStyle::json), "\"lots\"");
  EXPECT_EQ(quote("index.js\0.png"s, 200, QuoteStyle::json), "\"index.js\\u0000.png\"");
  EXPECT_EQ(quote("\x1b[2JHello", 48, QuoteStyle::json), "\"\\u001b[2JHello\"");
  EXPECT_EQ(quote("a\"b\\c\n\t\r\b\f", 48, QuoteStyle::json), "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\"");
  EXPECT_EQ(quote("caf\xc3\xa9 \xe2\x80\xae", 48, QuoteStyle::json), "\"caf\\u00e9 \\u202e\"");
  EXPECT_EQ(quote("\xf0\x9f\x98\x80", 48, QuoteStyle::json), "\"\\ud83d\\ude00\"");  // surrogate pair
  EXPECT_EQ(quote("\x7f", 48, QuoteStyle::json), "\"\\u007f\"");
  EXPECT_EQ(quote("\xff", 48, QuoteStyle::json), "\"\\ufffd\"");
}

TEST(QuoteJson, LongTextIsShortenedInsideTheQuotes) {
  EXPECT_EQ(quote(std::string(60, 'x'), 48, QuoteStyle::json), "\"" + std::string(48, 'x') + "...\"");
  EXPECT_EQ(quote(std::string(47, 'x') + "\xc3\xa9", 48, QuoteStyle::json),
            "\"" + std::string(47, 'x') + "...\"");
}

}  // namespace
}  // namespace skillbox::base
