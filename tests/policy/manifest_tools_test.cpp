// skill.json "tools" (policy/manifest.cpp): what a declared MCP tool may say, and the error, with its key
// path, for each thing it may not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using json = nlohmann::json;

json tool() {
  return {{"name", "forecast"},
          {"export", "forecast"},
          {"description", "The weather of a city"},
          {"input_schema",
           {{"type", "object"},
            {"properties", {{"city", {{"type", "string"}}}}},
            {"required", json::array({"city"})}}}};
}

Result<Manifest> parse_with(const json& tools) {
  return Skill::parse_manifest(json{{"id", "weather"}, {"entry", "index.js"}, {"tools", tools}}.dump());
}

std::string error_of(const json& tools) {
  const Result<Manifest> m = parse_with(tools);
  EXPECT_FALSE(m.ok()) << tools.dump();
  return m ? std::string() : m.error().message;
}

TEST(ManifestTools, ADeclaredToolIsRead) {
  json t = tool();
  t["title"] = "Forecast";
  t["output_schema"] = {{"type", "object"}, {"properties", {{"celsius", {{"type", "number"}}}}}};
  t["annotations"] = {{"title", "Weather forecast"}, {"idempotent_hint", true}};
  const Result<Manifest> m = parse_with(json::array({t}));
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->tools.size(), 1u);
  const ToolDeclaration& d = m->tools[0];
  EXPECT_EQ(d.name, "forecast");
  EXPECT_EQ(d.export_name, "forecast");
  EXPECT_EQ(d.title, "Forecast");
  EXPECT_EQ(json::parse(d.input_schema_json), t["input_schema"]);
  EXPECT_EQ(json::parse(d.output_schema_json), t["output_schema"]);
  EXPECT_EQ(d.annotation_title, "Weather forecast");
  EXPECT_EQ(d.idempotent_hint, true);
}

TEST(ManifestTools, HintsDerivedFromPermissionsAreRefusedWithTheReason) {
  for (const char* hint : {"readOnlyHint", "destructiveHint", "openWorldHint", "read_only_hint"}) {
    json t = tool();
    t["annotations"] = {{hint, true}};
    const std::string e = error_of(json::array({t}));
    EXPECT_NE(e.find(std::string("tools[0].annotations.") + hint + ": a skill cannot claim this annotation"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("from permissions"), std::string::npos) << e;
    EXPECT_EQ(e.find("unknown key"), std::string::npos) << e;  // one message, not two
  }
}

TEST(ManifestTools, EachBadValueNamesItsKeyPath) {
  const auto with = [](const char* key, const json& value) {
    json t = tool();
    t[key] = value;
    return error_of(json::array({t}));
  };
  EXPECT_NE(with("name", "has space").find("tools[0].name: expected 1 to 62 characters"), std::string::npos);
  EXPECT_NE(with("name", std::string(63, 'a')).find("tools[0].name"), std::string::npos);
  EXPECT_NE(with("export", "tool:x").find("tools[0].export: expected the name of one of the skill's exports"),
            std::string::npos);
  EXPECT_NE(with("description", "").find("tools[0].description: expected a string of 1 to 4096 bytes"),
            std::string::npos);
  EXPECT_NE(with("input_schema", {{"type", "array"}}).find("tools[0].input_schema.type: expected \"object\""),
            std::string::npos);
  EXPECT_NE(with("output_schema", {{"properties", json::object()}})
                .find("tools[0].output_schema.type: expected \"object\", got nothing"),
            std::string::npos);
  // Not a valid draft 7 schema: the meta-schema's verdict, with where in the schema.
  const std::string bad_type =
      with("input_schema", {{"type", "object"}, {"properties", {{"n", {{"type", 5}}}}}});
  EXPECT_NE(bad_type.find("tools[0].input_schema: not a valid JSON Schema (draft 7): at /properties/n/type"),
            std::string::npos)
      << bad_type;
  const std::string bad_regex = with("input_schema", {{"type", "object"}, {"pattern", "(["}});
  EXPECT_NE(bad_regex.find("at /pattern: the pattern \"([\" cannot be used"), std::string::npos) << bad_regex;
  const std::string remote =
      with("input_schema", {{"type", "object"}, {"$ref", "https://example.com/s.json"}});
  EXPECT_NE(remote.find("tools[0].input_schema: not a valid JSON Schema (draft 7)"), std::string::npos)
      << remote;
  const std::string other_draft =
      with("input_schema", {{"type", "object"}, {"$schema", "https://json-schema.org/draft/2020-12/schema"}});
  EXPECT_NE(other_draft.find("only JSON Schema draft 7"), std::string::npos) << other_draft;
  EXPECT_NE(with("annotations", {{"idempotentHint", true}}).find("did you mean \"idempotent_hint\"?"),
            std::string::npos);
}

TEST(ManifestTools, RequiredKeysDuplicatesAndTheListItself) {
  json t = tool();
  t.erase("input_schema");
  EXPECT_NE(error_of(json::array({t})).find("tools[0].input_schema: missing required key"),
            std::string::npos);
  EXPECT_NE(
      error_of(json::array({tool(), tool()})).find("tools[1].name: \"forecast\" is the name of tools[0] too"),
      std::string::npos);
  EXPECT_NE(error_of(json::array()).find("tools: expected a non-empty array"), std::string::npos);
  EXPECT_NE(error_of(json::object()).find("tools: expected a non-empty array"), std::string::npos);
  json many = json::array();
  for (int i = 0; i < 65; ++i) {
    json x = tool();
    x["name"] = "t" + std::to_string(i);
    many.push_back(x);
  }
  EXPECT_NE(error_of(many).find("tools: expected at most 64 tools, got 65"), std::string::npos);
}

}  // namespace
}  // namespace skillbox
