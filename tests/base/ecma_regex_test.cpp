// base/ecma_regex.h: ECMAScript patterns as JSON Schema writes them, matched by RE2 with ECMAScript's
// meaning, and the features RE2 lacks refused by name.
#include "base/ecma_regex.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::base {
namespace {

bool search(std::string_view pattern, std::string_view subject) {
  Result<EcmaRegex> re = EcmaRegex::compile(pattern);
  EXPECT_TRUE(re.ok()) << pattern << ": " << re.error().message;
  return re.ok() && re->search(subject);
}

std::string refusal(std::string_view pattern) {
  Result<EcmaRegex> re = EcmaRegex::compile(pattern);
  EXPECT_FALSE(re.ok()) << pattern << " compiled to " << re->translated();
  return re.ok() ? std::string() : re.error().message;
}

TEST(EcmaRegex, SearchesUnanchoredUnlessThePatternAnchors) {
  EXPECT_TRUE(search("b+", "abbbc"));
  EXPECT_FALSE(search("^b+$", "abbbc"));
  EXPECT_TRUE(search("^[0-9]{2,}$", "123"));
  EXPECT_FALSE(search("^a*$", "abc\n"));  // "$" is the end of the string, not before a final newline
}

TEST(EcmaRegex, EcmaScriptSyntaxKeepsItsMeaning) {
  EXPECT_TRUE(search("^\\u00e9$", "\xc3\xa9"));                 // é
  EXPECT_TRUE(search("^\\ud83d\\ude00$", "\xf0\x9f\x98\x80"));  // a surrogate pair is one code point
  EXPECT_TRUE(search("^\\u{1F600}$", "\xf0\x9f\x98\x80"));
  EXPECT_TRUE(search("^(?<year>[0-9]{4})$", "2024"));
  EXPECT_TRUE(search("^\\s$", "\xe2\x80\xa8"));  // U+2028 is white space in ECMAScript
  EXPECT_TRUE(search("^[\\s]$", "\xc2\xa0"));    // so is U+00A0, in a class too
  EXPECT_FALSE(search("^\\S$", "\xc2\xa0"));
  EXPECT_FALSE(search("^.$", "\r"));       // "." stops at line terminators
  EXPECT_TRUE(search("^.$", "\xc3\xa9"));  // and matches one code point, not one byte
  EXPECT_TRUE(search("^\\cJ$", "\n"));
  EXPECT_TRUE(search("^[\\b]$", "\b"));
  EXPECT_TRUE(search("^a\\/b$", "a/b"));
  EXPECT_FALSE(search("[]", "anything"));
  EXPECT_TRUE(search("^[^]$", "\n"));
  EXPECT_TRUE(search("^[[:a]+$", "[:a"));  // not a POSIX class in ECMAScript
}

TEST(EcmaRegex, LookaroundAndBackreferencesAreRefusedByName) {
  EXPECT_NE(refusal("^(?=a)").find("lookahead \"(?=\""), std::string::npos);
  EXPECT_NE(refusal("(?!a)").find("lookahead \"(?!\""), std::string::npos);
  EXPECT_NE(refusal("(?<=a)b").find("lookbehind \"(?<=\""), std::string::npos);
  EXPECT_NE(refusal("(?<!a)b").find("lookbehind"), std::string::npos);
  EXPECT_NE(refusal("(a)\\1").find("backreference \"\\1\""), std::string::npos);
  EXPECT_NE(refusal("(?<x>a)\\k<x>").find("named backreference"), std::string::npos);
  EXPECT_NE(refusal("\\ud800").find("lone UTF-16 surrogate"), std::string::npos);
  EXPECT_NE(refusal("a\\").find("lone backslash"), std::string::npos);
  EXPECT_NE(refusal("(a").find("RE2 cannot compile it"), std::string::npos);
}

TEST(EcmaRegex, ACatastrophicPatternIsAnswered) {
  // Exponential for a backtracking engine; RE2 answers in one pass over the 50,001 bytes.
  EXPECT_FALSE(search("^(a+)+$", std::string(50000, 'a') + "!"));
  EXPECT_TRUE(search("^(a|aa)+$", std::string(50000, 'a')));
}

}  // namespace
}  // namespace skillbox::base
