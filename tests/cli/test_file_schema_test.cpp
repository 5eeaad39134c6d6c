// schemas/skill.test.schema.json, the JSON Schema editors check skill.test.json against, must list the
// keys `skillbox test` accepts at every level: an unknown key at each level makes the command list the
// keys it knows there, and those must be the schema's. `init` writes the schemas beside the files that
// reference them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "skill_fixture.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

json schema() {
  return json::parse(slurp(fs::path(SKILLBOX_SOURCE_DIR) / "schemas/skill.test.schema.json"));
}

std::set<std::string> keys_of(const json& object_schema) {
  std::set<std::string> keys;
  for (const auto& [key, sub] : object_schema["properties"].items()) keys.insert(key);
  return keys;
}

/// The keys `skillbox test` lists at `path` for an unknown key there.
std::set<std::string> command_keys(const testing::TempSkill& skill, const json& file,
                                   const std::string& path) {
  std::ofstream(skill.dir() / "skill.test.json") << file.dump();
  const testing::CliExec r = testing::run_cli({"test", skill.dir().string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  const std::string marker = path + ".zz_unknown: unknown key; the keys here are ";
  const size_t at = r.err.find(marker);
  EXPECT_NE(at, std::string::npos) << "looked for: " << marker << "\nin: " << r.err;
  if (at == std::string::npos) return {};
  std::string list = r.err.substr(at + marker.size());
  list.resize(list.find('\n'));
  std::set<std::string> keys;
  std::stringstream parts(list);
  for (std::string k; std::getline(parts, k, ',');) keys.insert(k.substr(k.find_first_not_of(' ')));
  return keys;
}

TEST(TestFileSchema, EveryObjectHasTheCommandsKeysAndNoOthers) {
  testing::TempSkill skill({{"index.js", "export default () => 1;"}});
  const json s = schema();
  const json test = {{"name", "t"}, {"zz_unknown", 1}};
  const json fixture = {{"url", "https://api.example.com/x"}, {"zz_unknown", 1}};
  const json expect = {{"zz_unknown", 1}};
  const json error = {{"name", "E"}, {"zz_unknown", 1}};

  EXPECT_EQ(keys_of(s), command_keys(skill, {{"tests", {{{"name", "t"}}}}, {"zz_unknown", 1}}, ""));
  EXPECT_EQ(keys_of(s["$defs"]["test"]), command_keys(skill, {{"tests", {test}}}, "tests[0]"));
  EXPECT_EQ(keys_of(s["$defs"]["fixture"]),
            command_keys(skill, {{"tests", {{{"name", "t"}, {"http", {fixture}}}}}}, "tests[0].http[0]"));
  const json request = {{"headers", json::object()}, {"zz_unknown", 1}};
  const json with_request = {{"url", "https://api.example.com/x"}, {"request", request}};
  EXPECT_EQ(keys_of(s["$defs"]["fixture"]["properties"]["request"]),
            command_keys(skill, {{"tests", {{{"name", "t"}, {"http", {with_request}}}}}},
                         "tests[0].http[0].request"));
  EXPECT_EQ(keys_of(s["$defs"]["expect"]),
            command_keys(skill, {{"tests", {{{"name", "t"}, {"expect", expect}}}}}, "tests[0].expect"));
  EXPECT_EQ(keys_of(s["$defs"]["expect"]["properties"]["error"]),
            command_keys(skill, {{"tests", {{{"name", "t"}, {"expect", {{"error", error}}}}}}},
                         "tests[0].expect.error"));
}

TEST(TestFileSchema, InitWritesBothSchemasAndTheFilesReferenceThem) {
  const fs::path root = fs::temp_directory_path() / ("skillbox-schema-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const testing::CliExec r = testing::run_cli({"init", (root / "s").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(root / "s/skill.schema.json"),
            slurp(fs::path(SKILLBOX_SOURCE_DIR) / "schemas/skill.schema.json"));
  EXPECT_EQ(slurp(root / "s/skill.test.schema.json"),
            slurp(fs::path(SKILLBOX_SOURCE_DIR) / "schemas/skill.test.schema.json"));
  EXPECT_EQ(json::parse(slurp(root / "s/skill.json"))["$schema"], "./skill.schema.json");
  EXPECT_EQ(json::parse(slurp(root / "s/skill.test.json"))["$schema"], "./skill.test.schema.json");
  // With "$schema" in both files the skill still checks and passes its tests.
  EXPECT_EQ(testing::run_cli({"check", (root / "s").string()}).exit_code, 0);
  testing::CliOptions options;
  options.env = {"SKILLBOX_HOME=" + (root / "home").string()};
  const testing::CliExec t =
      testing::run_cli({"test", (root / "s").string(), "--isolation=inprocess"}, options);
  EXPECT_EQ(t.exit_code, 0) << t.out << t.err;
  fs::remove_all(root);
}

}  // namespace
}  // namespace skillbox
