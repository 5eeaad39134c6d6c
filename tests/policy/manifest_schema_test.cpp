// schemas/skill.schema.json, the JSON Schema editors check skill.json against, must say what the parser
// accepts: the same keys at every level, the same integer ranges, the same enumerations. Each check asks
// the parser itself (Skill::parse_manifest), so a key or range added to one and not the other fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using json = nlohmann::json;

json load_schema() {
  std::ifstream in(std::string(SKILLBOX_SOURCE_DIR) + "/schemas/skill.schema.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

using Path = std::vector<std::string>;

Path operator/(Path path, const std::string& key) {
  path.push_back(key);
  return path;
}

std::string shown(const Path& path) {
  std::string out;
  for (const std::string& k : path) out += "/" + k;
  return out;
}

/// A path step into an array's items (the schema's "items"): the first item of the list.
const std::string kItem = "[]";

/// The smallest valid manifest with `value` at `path` (objects on the way are created; an array on the
/// way holds one smallest valid tool).
std::string manifest_with(const Path& path, const json& value) {
  json doc = {{"id", "demo"}, {"entry", "index.js"}};
  json* at = &doc;
  for (const std::string& k : path) {
    if (k == kItem) {
      if (!at->is_array())
        *at = json::array({{{"name", "t"},
                            {"export", "default"},
                            {"description", "d"},
                            {"input_schema", {{"type", "object"}}}}});
      at = &(*at)[0];
    } else {
      at = &(*at)[k];
    }
  }
  *at = value;
  // fetch needs an allow entry to be valid: give one whenever http is there.
  if (path.size() >= 2 && path[0] == "permissions" && path[1] == "http" &&
      !(path.size() == 3 && path[2] == "allow"))
    doc["permissions"]["http"]["allow"] = json::array({"https://api.example.com/"});
  return doc.dump();
}

/// The keys the parser lists for the object at `pointer`, from its "unknown key" message.
std::set<std::string> parser_keys(const Path& pointer) {
  const auto m = Skill::parse_manifest(manifest_with(pointer / "zz_unknown", 1));
  EXPECT_FALSE(static_cast<bool>(m));
  if (m) return {};
  const std::string& msg = m.error().message;
  const std::string marker = "expected one of ";
  const size_t at = msg.find(marker);
  EXPECT_NE(at, std::string::npos) << msg;
  if (at == std::string::npos) return {};
  std::string list = msg.substr(at + marker.size());
  list = list.substr(0, list.find_first_of(" (\n") == std::string::npos ? list.size() : list.find(" ("));
  if (const size_t nl = list.find('\n'); nl != std::string::npos) list.resize(nl);
  std::set<std::string> keys;
  std::stringstream parts(list);
  for (std::string k; std::getline(parts, k, ',');) keys.insert(k.substr(k.find_first_not_of(' ')));
  return keys;
}

std::string type_of(const json& schema) {
  return schema.contains("type") && schema["type"].is_string() ? schema["type"].get<std::string>() : "";
}

/// Walks every object schema with properties, arrays' items included, calling `visit(pointer, schema)`.
template <typename Visit>
void walk(const json& schema, const Path& pointer, Visit visit) {
  if (schema.contains("items") && schema["items"].is_object()) walk(schema["items"], pointer / kItem, visit);
  if (!schema.contains("properties")) return;
  visit(pointer, schema);
  for (const auto& [key, sub] : schema["properties"].items()) walk(sub, pointer / key, visit);
}

TEST(ManifestSchema, EveryObjectHasTheParsersKeysAndNoOthers) {
  const json schema = load_schema();
  int objects = 0;
  walk(schema, Path(), [&](const Path& p, const json& s) {
    ++objects;
    std::set<std::string> in_schema;
    for (const auto& [key, sub] : s["properties"].items()) in_schema.insert(key);
    EXPECT_EQ(in_schema, parser_keys(p)) << "at " << shown(p);
    EXPECT_EQ(s.contains("additionalProperties") ? s["additionalProperties"] : json(true), json(false))
        << "at " << shown(p);
  });
  EXPECT_EQ(objects, 8);  // the top, limits, permissions, fs, http, store, a tool, its annotations
  std::set<std::string> required(schema["required"].begin(), schema["required"].end());
  EXPECT_EQ(required, (std::set<std::string>{"id", "entry"}));
}

TEST(ManifestSchema, IntegerRangesAndEnumerationsAreTheParsers) {
  const json schema = load_schema();
  int integers = 0, enums = 0;
  walk(schema, Path(), [&](const Path& p, const json& s) {
    for (const auto& [key, sub] : s["properties"].items()) {
      const Path at = p / key;
      if (type_of(sub) == "integer") {
        ++integers;
        const int64_t lo = sub["minimum"], hi = sub["maximum"];
        EXPECT_TRUE(Skill::parse_manifest(manifest_with(at, lo))) << shown(at) << " = " << lo;
        EXPECT_TRUE(Skill::parse_manifest(manifest_with(at, hi))) << shown(at) << " = " << hi;
        EXPECT_FALSE(Skill::parse_manifest(manifest_with(at, lo - 1))) << shown(at) << " = " << lo - 1;
        EXPECT_FALSE(Skill::parse_manifest(manifest_with(at, hi + 1))) << shown(at) << " = " << hi + 1;
        if (sub.contains("default")) {
          EXPECT_GE(sub["default"].get<int64_t>(), lo);
          EXPECT_LE(sub["default"].get<int64_t>(), hi);
        }
      }
      const bool list = type_of(sub) == "array";
      const json& holder = list ? sub["items"] : sub;
      if (!holder.contains("enum")) continue;
      const json& values = holder["enum"];
      ++enums;
      for (const json& v : values) {
        const json given = list ? json::array({v}) : v;
        EXPECT_TRUE(Skill::parse_manifest(manifest_with(at, given))) << shown(at) << " = " << given;
      }
      const json bogus = list ? json::array({"BOGUS"}) : json("bogus");
      EXPECT_FALSE(Skill::parse_manifest(manifest_with(at, bogus))) << shown(at);
    }
  });
  EXPECT_EQ(integers, 16);  // limits 4, fs 3, http 6, store 3
  EXPECT_EQ(enums, 2);      // fs.mode, http.methods
}

TEST(ManifestSchema, TheSchemaKeyIsAcceptedAsAString) {
  EXPECT_TRUE(Skill::parse_manifest(manifest_with(Path{"$schema"}, "./skill.schema.json")));
  const auto m = Skill::parse_manifest(manifest_with(Path{"$schema"}, 1));
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("\"$schema\": expected a string"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace skillbox
