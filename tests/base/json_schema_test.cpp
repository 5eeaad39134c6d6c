// base/json_schema.h: what a mismatch says (the instance path as a JSON Pointer and the keyword), the
// deepest failure chosen, and schemas refused at compile time.
#include "base/json_schema.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace skillbox::base {
namespace {

using json = nlohmann::json;

JsonSchema compiled(const json& schema) {
  Result<JsonSchema> s = JsonSchema::compile(schema);
  EXPECT_TRUE(s.ok()) << s.error().message;
  return std::move(*s);
}

TEST(JsonSchema, AMismatchNamesTheInstancePathAndTheKeyword) {
  const JsonSchema s =
      compiled({{"type", "object"},
                {"required", json::array({"city"})},
                {"properties",
                 {{"city", {{"type", "string"}, {"maxLength", 8}}},
                  {"days", {{"type", "array"}, {"items", {{"type", "integer"}, {"maximum", 7}}}}},
                  {"a/b", {{"enum", json::array({1, 2})}}}}}});
  EXPECT_FALSE(s.validate({{"city", "Oslo"}, {"days", {1, 2}}}));
  const auto missing = s.validate(json::object());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->instance_path, "");
  EXPECT_EQ(missing->keyword, "required");
  EXPECT_EQ(missing->text(), "at the top level: required: Missing required property 'city'.");
  const auto item = s.validate({{"city", "Oslo"}, {"days", {1, 9}}});
  ASSERT_TRUE(item);
  EXPECT_EQ(item->instance_path, "/days/1");
  EXPECT_EQ(item->keyword, "maximum");
  const auto wrong_type = s.validate({{"city", 5}});
  ASSERT_TRUE(wrong_type);
  EXPECT_EQ(wrong_type->instance_path, "/city");
  EXPECT_EQ(wrong_type->keyword, "type");
  const auto escaped = s.validate({{"city", "x"}, {"a/b", 3}});
  ASSERT_TRUE(escaped);
  EXPECT_EQ(escaped->instance_path, "/a~1b");  // RFC 6901
  EXPECT_EQ(escaped->keyword, "enum");
}

TEST(JsonSchema, AClientsLongKeyIsShownBounded) {
  const JsonSchema s = compiled({{"type", "object"}, {"additionalProperties", false}});
  const auto bad = s.validate({{std::string(100000, 'k'), 1}});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->keyword, "additionalProperties");
  EXPECT_LT(bad->text().size(), 4096u);
}

TEST(JsonSchema, SchemasThatAreNotDraft7AreRefused) {
  EXPECT_FALSE(JsonSchema::compile(json(5)).ok());
  const auto bad = JsonSchema::compile({{"minLength", -1}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("at /minLength: minimum"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("(the draft 7 meta-schema)"), std::string::npos);
  const auto remote = JsonSchema::compile({{"$ref", "http://127.0.0.1:1/schema.json"}});
  ASSERT_FALSE(remote.ok());
  EXPECT_NE(remote.error().message.find("nothing else"), std::string::npos) << remote.error().message;
  // The meta-schema itself is the one outside document a "$ref" may name; it is never fetched.
  const JsonSchema meta = compiled({{"$ref", "http://json-schema.org/draft-07/schema#"}});
  EXPECT_FALSE(meta.validate({{"type", "object"}}));
  EXPECT_TRUE(meta.validate({{"type", 5}}));
}

TEST(JsonSchema, WithAPatternLongStringsAreRefusedBeforeStdRegexSeesThem) {
  // "^(a|b)*$" overflowed an 8 MiB stack at 16 KiB of input in libstdc++'s std::regex: without the cap
  // this test would crash.
  const JsonSchema s = compiled({{"type", "object"}, {"properties", {{"id", {{"pattern", "^(a|b)*$"}}}}}});
  EXPECT_FALSE(s.validate({{"id", std::string(2048, 'a')}}));
  const auto longer = s.validate({{"note", std::string(1 << 20, 'a')}});
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->instance_path, "/note");
  EXPECT_EQ(longer->keyword, "pattern");
  EXPECT_NE(longer->message.find("longer than 2048"), std::string::npos) << longer->message;
  // Without a pattern a long string is just a string.
  EXPECT_FALSE(compiled({{"type", "object"}}).validate({{"note", std::string(1 << 20, 'a')}}));
}

}  // namespace
}  // namespace skillbox::base
