// Tools declared in skill.json, served by the built `skillbox mcp` (docs/mcp.md "Declared tools"): what
// tools/list shows, arguments refused before any sandbox starts (seen in the skill's workspace, which
// stays untouched), structuredContent checked against the output schema.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "mcp/mcp_client.h"
#include "skill_fixture.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::McpProcess;

const std::string kNotes = std::string(SKILLBOX_SOURCE_DIR) + "/examples/skills/notes";

/// A data directory of its own, removed at the end.
struct DataDir {
  DataDir() {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-mcp-tools-XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~DataDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  [[nodiscard]] fs::path history() const { return path / "skills/notes/workspace/history.log"; }
  fs::path path;
};

json skill_json_tools() {
  std::ifstream in(kNotes + "/skill.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str())["tools"];
}

std::string error_message(const json& response) {
  return response["error"].value("message", std::string());
}

TEST(McpDeclaredTools, ToolsListShowsTheDeclaredToolsWithTheirSchemasAndAnnotations) {
  McpProcess mcp({kNotes, "--isolation", "inprocess"});
  mcp.initialize();
  const json tools = mcp.request(1, "tools/list")["result"]["tools"];
  std::map<std::string, json> by_name;
  for (const json& t : tools) by_name[t["name"]] = t;
  ASSERT_EQ(by_name.size(), 3u) << tools.dump();  // the declared ones, not the one "notes" tool
  const json declared = skill_json_tools();
  for (const json& d : declared) {
    const std::string name = "notes__" + d["name"].get<std::string>();
    ASSERT_TRUE(by_name.contains(name)) << name;
    const json& t = by_name[name];
    EXPECT_EQ(t["description"], d["description"]);
    EXPECT_EQ(t["title"], d["title"]);
    EXPECT_EQ(t["inputSchema"], d["input_schema"]);
    EXPECT_EQ(t.contains("outputSchema"), d.contains("output_schema")) << name;
    if (d.contains("output_schema")) {
      EXPECT_EQ(t["outputSchema"], d["output_schema"]);
    }
    // Derived from fs readwrite whatever the skill says; only title and idempotentHint are its own.
    EXPECT_EQ(t["annotations"]["readOnlyHint"], false);
    EXPECT_EQ(t["annotations"]["destructiveHint"], true);
    EXPECT_EQ(t["annotations"]["openWorldHint"], false);
  }
  EXPECT_EQ(by_name["notes__list"]["annotations"]["idempotentHint"], true);
  EXPECT_EQ(by_name["notes__list"]["annotations"]["title"], "List the notes");
  EXPECT_EQ(by_name["notes__remove"]["annotations"]["idempotentHint"], false);
  EXPECT_FALSE(by_name["notes__add"]["annotations"].contains("idempotentHint"));
  EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
}

TEST(McpDeclaredTools, BadArgumentsAreInvalidParamsNamingThePathAndNoSandboxRuns) {
  const DataDir data;
  McpProcess mcp({kNotes, "--isolation", "process", "--data-dir", data.path.string()});
  mcp.initialize();
  const json missing = mcp.request(1, "tools/call", {{"name", "notes__add"}, {"arguments", json::object()}});
  EXPECT_EQ(missing["error"]["code"], -32602) << missing.dump();
  EXPECT_NE(error_message(missing).find("input schema of \"notes__add\": at the top level: required: Missing "
                                        "required property 'text'"),
            std::string::npos)
      << missing.dump();
  const json wrong_type =
      mcp.request(2, "tools/call", {{"name", "notes__add"}, {"arguments", {{"text", 5}}}});
  EXPECT_EQ(wrong_type["error"]["code"], -32602);
  EXPECT_NE(error_message(wrong_type).find("at /text: type:"), std::string::npos) << wrong_type.dump();
  const json extra =
      mcp.request(3, "tools/call", {{"name", "notes__add"}, {"arguments", {{"text", "a"}, {"tag", "x"}}}});
  EXPECT_NE(error_message(extra).find("additionalProperties"), std::string::npos) << extra.dump();
  const json range = mcp.request(4, "tools/call", {{"name", "notes__remove"}, {"arguments", {{"id", 0}}}});
  EXPECT_NE(error_message(range).find("at /id: minimum:"), std::string::npos) << range.dump();
  // Every change the skill makes is appended to history.log: none of the calls above reached it.
  EXPECT_FALSE(fs::exists(data.history()));
  const json ok = mcp.request(5, "tools/call", {{"name", "notes__add"}, {"arguments", {{"text", "milk"}}}});
  EXPECT_EQ(ok["result"]["isError"], false) << ok.dump();
  EXPECT_TRUE(fs::exists(data.history())) << data.history();
  EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
}

TEST(McpDeclaredTools, StructuredContentIsTheExportsValueAndItsTextTheSameJson) {
  const DataDir data;
  McpProcess mcp({kNotes, "--isolation", "inprocess", "--data-dir", data.path.string()});
  mcp.initialize();
  const json added =
      mcp.request(1, "tools/call", {{"name", "notes__add"}, {"arguments", {{"text", "buy milk"}}}})["result"];
  EXPECT_EQ(added["isError"], false) << added.dump();
  EXPECT_EQ(added["structuredContent"], json({{"id", 1}, {"count", 1}}));
  EXPECT_EQ(json::parse(added["content"][0]["text"].get<std::string>()), added["structuredContent"]);
  const json listed = mcp.request(2, "tools/call", {{"name", "notes__list"}})["result"];
  EXPECT_EQ(listed["structuredContent"],
            json({{"count", 1}, {"notes", json::array({{{"id", 1}, {"text", "buy milk"}}})}}))
      << listed.dump();
  // No output schema: text only.
  const json removed =
      mcp.request(3, "tools/call", {{"name", "notes__remove"}, {"arguments", {{"id", 1}}}})["result"];
  EXPECT_EQ(removed["isError"], false) << removed.dump();
  EXPECT_FALSE(removed.contains("structuredContent"));
  EXPECT_EQ(json::parse(removed["content"][0]["text"].get<std::string>()),
            json({{"removed", 1}, {"count", 0}}));
  EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
}

/// Makes `skill` one whose tool "get" returns `value` and declares `output_schema`.
void declare_returning(const testing::TempSkill& skill, const std::string& value, const json& output_schema) {
  skill.write("index.js", "export function get() { return " + value + "; }");
  skill.write("skill.json", json{{"id", "shape"},
                                 {"entry", "index.js"},
                                 {"tools",
                                  {{{"name", "get"},
                                    {"export", "get"},
                                    {"description", "returns a fixed value"},
                                    {"input_schema", {{"type", "object"}}},
                                    {"output_schema", output_schema}}}}}
                                .dump());
}

TEST(McpDeclaredTools, AValueThatDoesNotMatchTheOutputSchemaIsAToolError) {
  const json schema = {
      {"type", "object"}, {"properties", {{"n", {{"type", "integer"}}}}}, {"required", {"n"}}};
  for (const auto& [value, expected] : std::vector<std::pair<std::string, std::string>>{
           {"({n: 'x'})", "does not match the tool's output schema: at /n: type:"},
           {"({})", "at the top level: required: Missing required property 'n'"},
           {"5", "the export returned number, not the JSON object"}}) {
    testing::TempSkill skill({{"index.js", ""}});
    declare_returning(skill, value, schema);
    McpProcess mcp({skill.dir().string(), "--isolation", "inprocess"});
    mcp.initialize();
    const json result = mcp.request(1, "tools/call", {{"name", "shape__get"}})["result"];
    EXPECT_EQ(result["isError"], true) << value << ": " << result.dump();
    EXPECT_NE(result["content"][0]["text"].get<std::string>().find(expected), std::string::npos)
        << value << ": " << result.dump();
    EXPECT_FALSE(result.contains("structuredContent"));
    EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
  }
}

TEST(McpDeclaredTools, AnExportTheModuleLacksStopsTheCommand) {
  testing::TempSkill skill({{"index.js", "export function get() { return {}; }"}});
  skill.write("skill.json", json{{"id", "lacking"},
                                 {"entry", "index.js"},
                                 {"tools",
                                  {{{"name", "get"},
                                    {"export", "nope"},
                                    {"description", "d"},
                                    {"input_schema", {{"type", "object"}}}}}}}
                                .dump());
  McpProcess mcp({skill.dir().string(), "--isolation", "inprocess"});
  EXPECT_EQ(mcp.close_and_wait(), 2);
  EXPECT_NE(mcp.stderr_text().find("tools[0].export: the entry module has no export \"nope\""),
            std::string::npos)
      << mcp.stderr_text();
}

TEST(McpDeclaredTools, ABundleToolsArgumentsAreValidatedAgainstItsInputSchema) {
  testing::Bundle notes("notes", testing::grants({"http://127.0.0.1:1"}));
  McpProcess mcp({notes.dir().string(), "--isolation", "inprocess"});
  mcp.initialize();
  // add_note's input_schema requires "title" (examples/openhuman/notes).
  const json missing =
      mcp.request(1, "tools/call", {{"name", "notes__add_note"}, {"arguments", json::object()}});
  EXPECT_EQ(missing["error"]["code"], -32602) << missing.dump();
  EXPECT_NE(error_message(missing).find("required: Missing required property 'title'"), std::string::npos)
      << missing.dump();
  // Every example bundle's schemas are valid draft 7: no tool is served unvalidated.
  EXPECT_EQ(mcp.stderr_text().find("served without argument validation"), std::string::npos)
      << mcp.stderr_text();
  EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
}

}  // namespace
}  // namespace skillbox
