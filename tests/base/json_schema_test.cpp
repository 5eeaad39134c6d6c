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

TEST(JsonSchema, ACatastrophicPatternOnALongStringIsAnswered) {
  // "^(a+)+$" backtracks exponentially in a backtracking engine on "aaa...!", and "^(a|b)*$" overflowed an
  // 8 MiB stack at 16 KiB in libstdc++'s std::regex: both would hang or crash this test.
  const JsonSchema s =
      compiled({{"type", "object"},
                {"properties", {{"id", {{"pattern", "^(a+)+$"}}}, {"ab", {{"pattern", "^(a|b)*$"}}}}},
                {"patternProperties", {{"^(x+)+$", {{"type", "integer"}}}}}});
  const auto evil = s.validate({{"id", std::string(50000, 'a') + "!"}});
  ASSERT_TRUE(evil);
  EXPECT_EQ(evil->instance_path, "/id");
  EXPECT_EQ(evil->keyword, "pattern");
  EXPECT_FALSE(s.validate({{"id", std::string(50000, 'a')}}));
  EXPECT_FALSE(s.validate({{"ab", std::string(1 << 20, 'a')}}));
  const auto key = s.validate({{std::string(50000, 'x'), "not an integer"}});
  ASSERT_TRUE(key);
  EXPECT_EQ(key->keyword, "type");
  EXPECT_FALSE(s.validate({{std::string(50000, 'x') + "!", "no pattern matches this key"}}));
  // Keys under "propertyNames" go through a visitor of their own: its patterns and formats too.
  const JsonSchema names = compiled({{"propertyNames", {{"pattern", "^(a+)+$"}}}});
  const auto key_evil = names.validate({{std::string(50000, 'a') + "!", 1}});
  ASSERT_TRUE(key_evil);
  EXPECT_FALSE(names.validate({{std::string(50000, 'a'), 1}}));
  const JsonSchema dated = compiled({{"propertyNames", {{"format", "date"}}}});
  EXPECT_TRUE(dated.validate({{std::string(1000000, '1') + "-01-01x", 1}}));
  EXPECT_FALSE(dated.validate({{"2024-01-31", 1}}));
}

TEST(JsonSchema, ALongDateIsAMismatchNotACrash) {
  // valijson's own std::regex for "date" recursed per digit: 100,000 digits overflowed the stack.
  const JsonSchema s = compiled({{"format", "date"}});
  const auto bad = s.validate(std::string(1000000, '1') + "-01-01x");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->keyword, "format");
  EXPECT_FALSE(s.validate(std::string(100000, '1') + "-01-31"));
  EXPECT_TRUE(s.validate("2024-02-30"));
  EXPECT_FALSE(compiled({{"format", "date-time"}}).validate("2024-02-29T10:00:00.5+01:00"));
  EXPECT_TRUE(compiled({{"format", "time"}}).validate("10:00:00|01:00"));
}

TEST(JsonSchema, APatternRe2CannotMatchIsRefusedAtCompileNamingIt) {
  const auto look = JsonSchema::compile({{"properties", {{"p", {{"pattern", "^(?!admin)\\w+$"}}}}}});
  ASSERT_FALSE(look.ok());
  EXPECT_NE(look.error().message.find("at /properties/p/pattern: the pattern \"^(?!admin)\\\\w+$\""),
            std::string::npos)
      << look.error().message;
  EXPECT_NE(look.error().message.find("lookahead"), std::string::npos) << look.error().message;
  const auto back = JsonSchema::compile({{"patternProperties", {{"(a)\\1", true}}}});
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.error().message.find("backreference"), std::string::npos) << back.error().message;
  const auto syntax = JsonSchema::compile({{"pattern", "a{2,1}"}});
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.error().message.find("RE2 cannot compile it"), std::string::npos)
      << syntax.error().message;
}

}  // namespace
}  // namespace skillbox::base
