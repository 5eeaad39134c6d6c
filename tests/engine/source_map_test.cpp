// engine/source_map.h: source map v3 read from JSON or an inline data URL, lines looked up, stacks mapped;
// malformed maps of every kind are ignored whole. Also a run of a built skill whose error names the .ts file.
#include "engine/source_map.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bindings/base64.h"
#include "skill_fixture.h"

namespace skillbox::engine {
namespace {

/// Base64 VLQ of one value (the test's own encoder, from the format's description).
std::string vlq(int64_t value) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t v = value < 0 ? (static_cast<uint64_t>(-value) << 1) | 1 : static_cast<uint64_t>(value) << 1;
  std::string out;
  do {
    uint64_t digit = v & 31;
    v >>= 5;
    if (v != 0) digit |= 32;
    out += kDigits[digit];
  } while (v != 0);
  return out;
}

std::string segment(int64_t column, int64_t source, int64_t line, int64_t original_column) {
  return vlq(column) + vlq(source) + vlq(line) + vlq(original_column);
}

std::string inline_comment(const std::string& json) {
  return "//# sourceMappingURL=data:application/json;base64," +
         bindings::base64_encode(reinterpret_cast<const uint8_t*>(json.data()), json.size()) + "\n";
}

// Generated lines 1..4: line 1 maps nothing, line 2 -> index.ts:3, line 3 -> index.ts:7 (its second
// segment would say line 9: the first one counts), line 4 -> lib/util.ts:1.
const std::string kMap =
    R"({"version":3,"sources":["../index.ts","../lib/util.ts"],"names":[],"mappings":")" + std::string(";") +
    segment(0, 0, 2, 0) + ";" + segment(2, 0, 4, 0) + "," + segment(4, 0, 2, 0) + ";" + segment(0, 1, -8, 0) +
    R"("})";

TEST(SourceMap, LinesMapToTheFirstSegmentOfTheirLine) {
  auto map = SourceMap::from_json("dist/index.js", kMap);
  ASSERT_TRUE(map);
  const auto found = map->lookup({2, 3, 4, 1, 5, 0});
  ASSERT_EQ(found.size(), 6u);
  ASSERT_TRUE(found[0]);
  EXPECT_EQ(found[0]->source, "index.ts");
  EXPECT_EQ(found[0]->line, 3u);
  ASSERT_TRUE(found[1]);
  EXPECT_EQ(found[1]->line, 7u);
  ASSERT_TRUE(found[2]);
  EXPECT_EQ(found[2]->source, "lib/util.ts");
  EXPECT_EQ(found[2]->line, 1u);
  EXPECT_FALSE(found[3]);  // no segment
  EXPECT_FALSE(found[4]);  // past the mappings
  EXPECT_FALSE(found[5]);  // not a line
}

TEST(SourceMap, SourceNamesFollowSourceRootAndKeepWhatIsNotAFileOfTheFolder) {
  auto names = [](const std::string& generated, const std::string& root, const std::string& source) {
    const std::string json = R"({"version":3,"sourceRoot":")" + root + R"(","sources":[")" + source +
                             R"("],"mappings":")" + segment(0, 0, 0, 0) + R"("})";
    auto map = SourceMap::from_json(generated, json);
    if (!map) return std::string("(no map)");
    auto found = map->lookup({1});
    return found.size() == 1 && found[0] ? found[0]->source : std::string("(none)");
  };
  EXPECT_EQ(names("dist/index.js", "", "../src/a.ts"), "src/a.ts");
  EXPECT_EQ(names("dist/index.js", "../src", "a.ts"), "src/a.ts");
  EXPECT_EQ(names("index.js", "", "./a.ts"), "a.ts");
  EXPECT_EQ(names("index.js", "", "../../outside.ts"), "../../outside.ts");
  EXPECT_EQ(names("index.js", "", "webpack://app/a.ts"), "webpack://app/a.ts");
  EXPECT_EQ(names("index.js", "", "/abs/a.ts"), "/abs/a.ts");
  EXPECT_EQ(names("index.js", "", std::string(600, 'a')), "(none)");  // longer than kMaxMappedNameBytes
}

TEST(SourceMap, MalformedMapsAreIgnoredWhole) {
  const std::string head = R"({"version":3,"sources":["a.ts"],"mappings":")";
  const std::vector<std::string> bad_mappings = {
      "!AAA",            // not a Base64 digit
      "AAg",             // ends inside a value (continuation bit set)
      "gggggggggggggA",  // more digits than 31 bits hold
      "ggggggggE",       // 35 bits: beyond the cap
      "+/////H",         // 2^32 - 1: beyond 31 bits
      "AAAAAA",          // six fields
      "AA",              // two fields
      "ACAA",            // source index 1 of 1 source
      "ADAA",            // source index -1
      "AAFA",            // original line -2
      "AAAA;" + vlq(0) + vlq(0) + vlq(2147483646) + vlq(0) + ";" + vlq(0) + vlq(0) + vlq(10) +
          vlq(0),  // sum past 31 bits
  };
  for (const std::string& m : bad_mappings) {
    auto map = SourceMap::from_json("x.js", head + m + R"("})");
    ASSERT_TRUE(map) << m;  // the JSON is fine; the mappings are read on lookup
    EXPECT_TRUE(map->lookup({1, 2, 3}).empty()) << m;
  }
  const std::vector<std::string> bad_json = {
      "",
      "not json",
      "[]",
      R"({"version":2,"sources":["a.ts"],"mappings":"AAAA"})",
      R"({"version":"3","sources":["a.ts"],"mappings":"AAAA"})",
      R"({"version":3,"sources":"a.ts","mappings":"AAAA"})",
      R"({"version":3,"sources":[1],"mappings":"AAAA"})",
      R"({"version":3,"sources":["a.ts"],"mappings":7})",
      R"({"version":3,"sources":["a.ts"]})",
      R"({"version":3,"sourceRoot":5,"sources":["a.ts"],"mappings":"AAAA"})",
      R"({"version":3,"sources":["a.ts"],"mappings":"AAAA","x":[[[[[1]]]]]})",  // deeper than a map
      std::string(kMaxSourceMapBytes + 1, ' '),
  };
  for (const std::string& j : bad_json) EXPECT_FALSE(SourceMap::from_json("x.js", j)) << j.substr(0, 80);
}

TEST(SourceMap, OnlyAnInlineBase64JsonUrlOnTheLastLineIsRead) {
  const std::string code = "function f() {\n  throw new Error('x');\n}\n";
  EXPECT_TRUE(SourceMap::from_inline("dist/index.js", code + inline_comment(kMap)));
  EXPECT_TRUE(SourceMap::from_inline("dist/index.js", code + inline_comment(kMap) + "\n\n  "));
  EXPECT_FALSE(SourceMap::from_inline("dist/index.js", code));
  EXPECT_FALSE(SourceMap::from_inline("dist/index.js", inline_comment(kMap) + code));  // not at the end
  EXPECT_FALSE(SourceMap::from_inline("dist/index.js", code + "//# sourceMappingURL=index.js.map\n"));
  EXPECT_FALSE(SourceMap::from_inline("dist/index.js",
                                      code + "//# sourceMappingURL=data:application/json;base64,%%%\n"));
  EXPECT_FALSE(
      SourceMap::from_inline("dist/index.js", code + "//# sourceMappingURL=data:text/plain;base64,e30=\n"));
}

TEST(SourceMap, StackFramesOfAMappedFileAreRewrittenAndOthersKept) {
  bus::SkillSources sources;
  sources.entry = "dist/index.js";
  sources.files["dist/index.js"] = "\nfunction f() {}\n\nf();\n" + inline_comment(kMap);
  sources.files["plain.js"] = "export const x = 1;\n";
  const std::string stack =
      "    at f (dist/index.js:2)\n    at g (plain.js:1)\n    at h (dist/index.js:1)\n    at "
      "dist/index.js:4\n"
      "    at <anonymous> (dist/index.js:3)\n";
  EXPECT_EQ(map_stack(stack, sources),
            "    at f (index.ts:3)\n    at g (plain.js:1)\n    at h (dist/index.js:1)\n    at lib/util.ts:1\n"
            "    at <anonymous> (index.ts:7)\n");
  // A malformed map leaves every frame as it was.
  sources.files["dist/index.js"] =
      "f();\n" + inline_comment(R"({"version":3,"sources":["a.ts"],"mappings":"!"})");
  EXPECT_EQ(map_stack(stack, sources), stack);
  EXPECT_EQ(map_stack("", sources), "");
}

// End to end: a hand-built dist/index.js with an inline map, as `esbuild --sourcemap=inline` writes one
// (no npm in the test); the run's error names index.ts and its lines, in both isolation modes.
TEST(SourceMap, ARunOfABuiltSkillReportsTheOriginalFileAndLine) {
  const std::string js =
      "// index.ts\n"                                  // 1: no mapping
      "function check(n) {\n"                          // 2 -> index.ts:5
      "  if (n < 0) throw new RangeError(\"neg\");\n"  // 3 -> index.ts:6
      "  return n;\n"                                  // 4 -> index.ts:7
      "}\n"                                            // 5 -> index.ts:8
      "export default function run(input) {\n"         // 6 -> index.ts:10
      "  return check(input.n);\n"                     // 7 -> index.ts:11
      "}\n";                                           // 8 -> index.ts:12
  std::string mappings = ";" + segment(0, 0, 4, 0);
  for (int i = 0; i < 3; ++i) mappings += ";" + segment(0, 0, 1, 0);
  mappings += ";" + segment(0, 0, 2, 0);
  for (int i = 0; i < 2; ++i) mappings += ";" + segment(0, 0, 1, 0);
  const std::string map =
      R"({"version":3,"sources":["../index.ts"],"sourcesContent":["..."],"names":[],"mappings":")" +
      mappings + R"("})";
  testing::TempSkill skill({{"dist/index.js", js + inline_comment(map)}}, "dist/index.js");
  testing::TestRunner runner;
  RunResult r = testing::run(runner, skill, R"({"n": -1})");
  ASSERT_EQ(r.outcome, Outcome::error) << testing::describe(r);
  EXPECT_EQ(r.error->name, "RangeError");
  EXPECT_NE(r.error->stack.find("at check (index.ts:6)"), std::string::npos) << r.error->stack;
  EXPECT_NE(r.error->stack.find("at run (index.ts:11)"), std::string::npos) << r.error->stack;
  EXPECT_EQ(r.error->stack.find("dist/index.js"), std::string::npos) << r.error->stack;

  // A logged error's stack names the same lines; a line without frames is left as it is.
  testing::TempSkill logging(
      {{"dist/index.js",
        "// index.ts\n"
        "export default function run() {\n"
        "  try { null.x; } catch (e) { console.error('failed:', e.stack); log('at dist/index.js:2 in text'); "
        "}\n"
        "}\n" +
            inline_comment(R"({"version":3,"sources":["../index.ts"],"mappings":";)" + segment(0, 0, 20, 0) +
                           ";" + segment(0, 0, 1, 0) + R"("})")}},
      "dist/index.js");
  r = testing::run(runner, logging);
  ASSERT_EQ(r.outcome, Outcome::ok) << testing::describe(r);
  ASSERT_EQ(r.logs.size(), 2u) << testing::describe(r);
  EXPECT_NE(r.logs[0].message.find("at run (index.ts:22)"), std::string::npos) << r.logs[0].message;
  EXPECT_EQ(r.logs[0].message.find("dist/index.js"), std::string::npos) << r.logs[0].message;
  EXPECT_EQ(r.logs[1].message, "at dist/index.js:2 in text");

  // Each mapping reads the map again, host work no deadline stops: only the first 8 lines are mapped.
  testing::TempSkill many({{"dist/index.js",
                            "// index.ts\n"
                            "export default function run() {\n"
                            "  for (let i = 0; i < 9; i++) console.log(new Error('x').stack);\n"
                            "}\n" +
                                inline_comment(R"({"version":3,"sources":["../index.ts"],"mappings":";)" +
                                               segment(0, 0, 20, 0) + ";" + segment(0, 0, 1, 0) + R"("})")}},
                          "dist/index.js");
  r = testing::run(runner, many);
  ASSERT_EQ(r.logs.size(), 9u) << testing::describe(r);
  EXPECT_NE(r.logs[7].message.find("(index.ts:22)"), std::string::npos) << r.logs[7].message;
  EXPECT_NE(r.logs[8].message.find("(dist/index.js:3)"), std::string::npos) << r.logs[8].message;

  // A syntax error in the built file names the original line too.
  testing::TempSkill broken(
      {{"dist/index.js", "// index.ts\nexport default () => (;\n" +
                             inline_comment(R"({"version":3,"sources":["../index.ts"],"mappings":";)" +
                                            segment(0, 0, 8, 0) + R"("})")}},
      "dist/index.js");
  r = testing::run(runner, broken);
  ASSERT_EQ(r.outcome, Outcome::invalid) << testing::describe(r);
  EXPECT_EQ(r.error->stack, "    at index.ts:9\n");
}

}  // namespace
}  // namespace skillbox::engine
