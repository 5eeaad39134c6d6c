// base/json_text.h: checking, parsing, writing and re-laying out JSON text without recursion, lone
// surrogate escapes included, and the same bytes as nlohmann's dump() for ordinary values.
#include "base/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace skillbox::base::json_text {
namespace {

using nlohmann::json;

std::string nested(size_t n, const std::string& inner = "") {
  return std::string(n, '[') + inner + std::string(n, ']');
}

TEST(JsonText, CheckAcceptsJsonTextAndNamesTheTopLevelKind) {
  EXPECT_EQ(check("null").kind, Kind::null);
  EXPECT_EQ(check(" true ").kind, Kind::boolean);
  EXPECT_EQ(check("-0.5e+3").kind, Kind::number);
  EXPECT_EQ(check(R"("a\"b\\\/\b\f\n\r\t\u00e9")").kind, Kind::string);
  EXPECT_EQ(check("[1, [], {}]").kind, Kind::array);
  EXPECT_EQ(check(R"({"a": {"b": [null]}})").kind, Kind::object);
  EXPECT_EQ(check(R"({"a": {"b": [null]}})").depth, 3u);
  for (const char* bad :
       {"",          " ",   "[",   "]",     "[1,]",  "{\"a\"}",  "{\"a\":1,}", "01",
        "1.",        "-",   "+1",  ".5",    "1e",    "tru",      "nul",        "\"\\x\"",
        "\"\\u12\"", "\"a", "1 2", "[1] x", "{1:2}", "\"\x01\"", "\"\xff\"",   "\"\xed\xa0\x80\"",
        "'a'",       "NaN"}) {
    EXPECT_EQ(check(bad).kind, Kind::invalid) << bad;
    EXPECT_FALSE(json::accept(bad)) << "nlohmann agrees that it is not JSON: " << bad;
  }
}

TEST(JsonText, LoneSurrogateEscapesAreJsonTextThatNlohmannRefuses) {
  for (const char* text :
       {R"("\ud800")", R"("\udfff")", R"("a\ud800b")", R"({"\ud800": 1})", R"(["\udc00\ud800"])"}) {
    EXPECT_TRUE(check(text).ok()) << text;
    EXPECT_FALSE(json::accept(text)) << "the reason for this helper: " << text;
  }
}

TEST(JsonText, LoneSurrogatesRoundTripThroughParseWriteAndReformat) {
  // As JSON.stringify writes them; a pair stays a pair (one character), a lone one keeps its escape.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"a":"\ud800"})", R"({"a":"\ud800"})"},
      {R"(["\udfff"])", R"(["\udfff"])"},
      {R"("a\ud800b")", R"("a\ud800b")"},
      {R"("\ud83d\ude00")", "\"\xf0\x9f\x98\x80\""},
      {R"({"\ud800":"\udbff\udfff"})", "{\"\\ud800\":\"\xf4\x8f\xbf\xbf\"}"},
      {R"(["\uDC00\uD800"])", R"(["\udc00\ud800"])"},  // reversed: two lone ones
  };
  for (const auto& [text, want] : cases) {
    const json tree = parse(text);
    ASSERT_FALSE(tree.is_discarded()) << text;
    EXPECT_EQ(write(tree), want) << text;
    EXPECT_EQ(reformat(text), want) << text;
    EXPECT_EQ(write(parse(want)), want) << "stable: " << text;
  }
  // The parsed string holds the surrogate as QuickJS does (WTF-8), so it can go back to the engine.
  EXPECT_EQ(parse(R"("a\ud800b")").get<std::string>(),
            "a\xed\xa0\x80"
            "b");
  // ASCII output: the pair as a pair of escapes, the lone one as its escape.
  EXPECT_EQ(write(parse(R"(["\ud83d\ude00","\ud800"])"), {.ascii = true}), R"(["\ud83d\ude00","\ud800"])");
}

TEST(JsonText, WriteMatchesNlohmannDumpForOrdinaryValues) {
  const json values[] = {
      json::parse(R"({"b":[1,-2,3.5,1e300,-0.0,1.5e-7,18446744073709551615,-9223372036854775808],
                      "a":{"x":null,"y":true,"z":false,"e":{},"l":[]},
                      "s":"tab\t nl\n quote\" back\\ ctl\u0001 del\u007f é 😀 \u2028"})"),
      json::array(),
      json::object(),
      json("plain"),
      json(42),
      json(nullptr),
      json::parse(R"([[[[{"deep":[[["x"]]]}]]]])"),
  };
  for (const json& v : values) {
    for (const int indent : {-1, 0, 2, 4}) {
      for (const bool ascii : {false, true}) {
        EXPECT_EQ(write(v, {.indent = indent, .ascii = ascii}), v.dump(indent, ' ', ascii))
            << v.dump() << " indent " << indent << " ascii " << ascii;
        const std::string text = v.dump();
        EXPECT_EQ(reformat(text, {.indent = indent, .ascii = ascii}), v.dump(indent, ' ', ascii))
            << text << " indent " << indent << " ascii " << ascii;
      }
    }
  }
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(R"({"z":1,"a":[{"y":2,"b":3}]})");
  EXPECT_EQ(write(ordered, {.indent = 2}), ordered.dump(2));
  EXPECT_EQ(write(parse_ordered(R"({"z":1,"a":2})")), R"({"z":1,"a":2})") << "members keep their order";
  EXPECT_EQ(write(parse(R"({"z":1,"a":2})")), R"({"a":2,"z":1})");
}

TEST(JsonText, IllFormedBytesInATreeAreWrittenAsTheReplacementCharacter) {
  // Text from outside the engine (a tampered file, SQLite TEXT that is not UTF-8) never makes the
  // writer throw or emit bytes that are not UTF-8.
  const json v = std::string(
      "a\xff"
      "b\xc0");
  EXPECT_EQ(write(v),
            "\"a\xef\xbf\xbd"
            "b\xef\xbf\xbd\"");
  EXPECT_EQ(write(v, {.ascii = true}), R"("a\ufffdb\ufffd")");
}

TEST(JsonText, ParseRefusesTextDeeperThanItsLimitAndCheckReportsTheDepth) {
  EXPECT_FALSE(parse(nested(kMaxDepth)).is_discarded());
  EXPECT_TRUE(parse(nested(kMaxDepth + 1)).is_discarded());
  EXPECT_EQ(check(nested(kMaxDepth + 1), kMaxDepth).kind, Kind::too_deep);
  EXPECT_TRUE(parse(nested(3), 2).is_discarded());
  EXPECT_FALSE(parse(nested(2), 2).is_discarded());
  EXPECT_EQ(check("[[]]").depth, 2u);
  EXPECT_EQ(check("1").depth, 0u);
  // A million levels: checked without recursion, and the depth is known.
  const std::string deep = nested(1000000);
  const Checked c = check(deep);
  EXPECT_EQ(c.kind, Kind::array);
  EXPECT_EQ(c.depth, 1000000u);
  EXPECT_TRUE(parse(deep).is_discarded());
  EXPECT_EQ(check(nested(1000000, "1,")).kind, Kind::invalid);
}

TEST(JsonText, DeepValuesAreWrittenAndReformattedWithoutRecursion) {
  // 200,000 levels would overflow any thread's stack in a recursive writer.
  const size_t n = 200000;
  const std::string deep = nested(n, R"({"a":"\ud800"})");
  EXPECT_EQ(reformat(deep), deep);
  // A tree this deep can only be built on purpose (parse refuses it): written all the same.
  json tree = json::array();
  json* inner = &tree;
  for (size_t i = 1; i < n; ++i) inner = &inner->emplace_back(json::array());
  EXPECT_EQ(write(tree), nested(n));
}

TEST(JsonText, IndentationStopsAtItsDepthAndTheRestIsCompact) {
  EXPECT_EQ(reformat(R"([1,[2,[3,{"k":[4]}]]])", {.indent = 2, .max_indented_depth = 2}),
            "[\n  1,\n  [\n    2,\n    [3,{\"k\":[4]}]\n  ]\n]");
  EXPECT_EQ(write(parse(R"([1,[2,[3,{"k":[4]}]]])"), {.indent = 2, .max_indented_depth = 2}),
            "[\n  1,\n  [\n    2,\n    [3,{\"k\":[4]}]\n  ]\n]");
  EXPECT_EQ(reformat(R"({"a":{"b":1}})", {.indent = 2, .max_indented_depth = 1}), "{\n  \"a\": {\"b\":1}\n}");
  // 12,000 levels with a 64-level cap: the output stays within a small factor of the input.
  const std::string deep = nested(12000, "1");
  const std::string out = reformat(deep, {.indent = 2, .max_indented_depth = 64});
  EXPECT_LT(out.size(), deep.size() + 64 * 64 * 2 * 2);
  EXPECT_EQ(out.substr(out.size() - 2), "\n]");
  EXPECT_EQ(json::parse(out), json::parse(deep)) << "still the same value";
}

TEST(JsonText, ReformatAndWriteRefuseNothingTheyShouldNot) {
  EXPECT_EQ(reformat("not json"), "");
  EXPECT_EQ(reformat(" 1 "), "1");
  EXPECT_EQ(reformat("1e400"), "1e400") << "beyond double: copied as written";
  EXPECT_TRUE(parse("1e400").is_discarded()) << "a tree has no number for it";
  EXPECT_EQ(reformat(R"("\u0041\/")"), R"("A/")") << "escapes re-spelled as nlohmann spells them";
}

}  // namespace
}  // namespace skillbox::base::json_text
