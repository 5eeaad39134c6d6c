// The OpenHuman bundle lifecycle and API through the normal runner: tools, hooks, sequences, state,
// db, data, net.fetch, fetch, platform, events, base64 — each call mapped onto a skillbox capability.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using testing::Bundle;
using testing::call;
using testing::describe_run;
using testing::value_of;

class NotesBundle : public ::testing::Test {
 protected:
  NotesBundle()
      : bundle_("notes", testing::grants({server_.origin()}, {{"env", {"NOTES_REGION"}}})),
        runner_(testing::host(bundle_.data(), std::map<std::string, std::string>{{"NOTES_REGION", "eu-west"},
                                                                                 {"HOME", "/root"}})),
        skill_(bundle_.skill()) {}

  /// The text of a tool's ToolResult, parsed as JSON when it is JSON.
  json tool(const std::string& name, const json& args = json::object()) {
    const RunResult r = call(runner_, skill_, "tool:" + name, args.dump());
    last_ = r;
    const json v = value_of(r);
    if (!v.is_object()) return nullptr;
    EXPECT_EQ(v["is_error"], false);
    const std::string text = v["content"][0]["text"];
    json parsed = json::parse(text, nullptr, false);
    return parsed.is_discarded() ? json(text) : parsed;
  }

  testing::HttpTestServer server_;
  Bundle bundle_;
  testing::TestRunner runner_;
  Skill skill_;
  RunResult last_;
};

TEST_F(NotesBundle, ToolsAreListedWithTheirSchemas) {
  const json tools = value_of(call(runner_, skill_, "tools"));
  ASSERT_TRUE(tools.is_array());
  ASSERT_GE(tools.size(), 8u);
  EXPECT_EQ(tools[0]["name"], "add_note");
  EXPECT_EQ(tools[0]["input_schema"]["required"][0], "title");
  EXPECT_EQ(tools[1]["name"], "commit_notes");
  EXPECT_EQ(tools[1]["input_schema"], json({{"type", "object"}})) << "inputSchema wins when present";
  EXPECT_EQ(tools[2]["input_schema"], nullptr);
}

TEST_F(NotesBundle, AToolResultIsOpenHumansToolResult) {
  const RunResult r = call(runner_, skill_, "tool:codec", R"({"text": "h\u00e9\u2713"})");
  const json v = value_of(r);
  ASSERT_TRUE(v.is_object()) << describe_run(r);
  EXPECT_EQ(v["is_error"], false);
  EXPECT_EQ(v["content"][0]["type"], "text");
  const json text = json::parse(v["content"][0]["text"].get<std::string>());
  // OpenHuman's btoa: the UTF-8 bytes of the string (68 c3 a9 e2 9c 93), and atob decodes them back.
  EXPECT_EQ(text["b64"], "aMOp4pyT");
  EXPECT_EQ(text["back"], "h\u00e9\u2713");
  EXPECT_EQ(text["bytes"], 6);
  EXPECT_EQ(text["buffer"], "function")
      << "the bundle's Buffer polyfill installed itself on globalThis/window/global";
  // The example bundles do not log their skill object at load (misbehave alone does): the only line
  // is stop()'s.
  ASSERT_EQ(r.logs.size(), 1u) << describe_run(r);
  EXPECT_EQ(r.logs[0].message, "stopping notes");
}

TEST_F(NotesBundle, ATransactionSpansTheCallsOfASequenceAndAnOpenOneIsRolledBack) {
  const json seq = json::array({{{"tool", "add_note"}, {"args", {{"title", "one"}}}},
                                {{"tool", "add_note"}, {"args", {{"title", "two"}}}},
                                {{"tool", "commit_notes"}}});
  const RunResult r = call(runner_, skill_, "", seq.dump());
  const json results = value_of(r);
  ASSERT_EQ(results.size(), 3u) << describe_run(r);
  EXPECT_EQ(results[0]["content"][0]["text"], "1") << "db.exec returns the rows changed";
  EXPECT_EQ(results[2]["content"][0]["text"], R"({"committed":2})");

  // A sequence that adds but never commits: rolled back when the invocation ends.
  const RunResult open =
      call(runner_, skill_, "", json::array({{{"tool", "add_note"}, {"args", {{"title", "lost"}}}}}).dump());
  ASSERT_EQ(open.outcome, Outcome::ok) << describe_run(open);

  const json notes = tool("list_notes");
  ASSERT_EQ(notes.size(), 2u) << notes.dump();
  EXPECT_EQ(notes[0]["title"], "one");
  EXPECT_EQ(notes[1]["title"], "two");
  // TEXT holding a JSON object comes back parsed, as OpenHuman returned it.
  EXPECT_EQ(notes[1]["meta"], json({{"tags", {"new"}}, {"n", 2}}));
  EXPECT_TRUE(std::filesystem::exists(bundle_.data() / "skills" / "notes" / "db.sqlite"));
  EXPECT_FALSE(std::filesystem::exists(bundle_.data() / "skills" / "notes" / "workspace" / "db.sqlite"));
}

TEST_F(NotesBundle, NetFetchIsSynchronousAndStateAndDataPersistAcrossInvocations) {
  const json got = tool("fetch_title", {{"url", server_.url("/json")}});
  EXPECT_EQ(got["status"], 200) << last_.error.value_or(ErrorInfo{}).message;
  EXPECT_EQ(got["type"], "application/json") << "header names are lower-cased";
  EXPECT_EQ(got["body"], R"({"ok":true,"n":42,"s":"caf\u00e9"})");
  const auto seen = server_.recorded();
  ASSERT_EQ(seen.size(), 1u);
  bool header = false;
  for (const auto& [n, v] : seen[0].headers) header = header || (n == "X-Notes" && v == "1");
  EXPECT_TRUE(header);

  (void)tool("bump");
  const json later = tool("remember");
  EXPECT_EQ(later["last_status"], 200);
  EXPECT_EQ(later["last_url"], server_.url("/json"));
  EXPECT_EQ(later["missing"], nullptr) << "state.get of a missing key is null";
  EXPECT_EQ(later["keys"], json({"last_length", "last_status", "last_url"}));
  EXPECT_EQ(later["kv"], 1);
  EXPECT_EQ(later["file"], R"({"ok":true,"n":42,"s":"caf\u00e9"})");
  EXPECT_EQ(later["region"], "eu-west") << "platform.env goes through permissions.env";
  EXPECT_EQ(later["os"], "linux");
  EXPECT_EQ(later["skillId"], "notes");
  EXPECT_EQ(later["same"], true) << "self, window and global are globalThis";
  EXPECT_TRUE(std::filesystem::exists(bundle_.data() / "skills" / "notes" / "workspace" / "last.txt"));
}

TEST_F(NotesBundle, FetchReturnsAResponseAndJsonStringifiesObjectBodies) {
  const json got = tool("fetch_async", {{"url", server_.url("/echo")}});
  EXPECT_EQ(got["ok"], true) << last_.error.value_or(ErrorInfo{}).message;
  EXPECT_EQ(got["status"], 200);
  EXPECT_EQ(got["type"], "application/json");
  EXPECT_EQ(got["echoed"]["method"], "POST");
  EXPECT_EQ(got["echoed"]["body"], R"({"hello":"world"})");
}

TEST_F(NotesBundle, NotifyMemoryAndCronBecomeEvents) {
  EXPECT_EQ(tool("bump"), 1);
  const RunResult& r = last_;
  ASSERT_EQ(r.events.size(), 4u);
  EXPECT_EQ(r.events[0].type, "notify");
  EXPECT_EQ(json::parse(r.events[0].data_json), json({{"title", "Counter"}, {"body", "now 1"}}));
  EXPECT_EQ(r.events[1].type, "memory.insert");
  EXPECT_EQ(json::parse(r.events[1].data_json)["metadata"]["n"], 1);
  EXPECT_EQ(r.events[2].type, "cron.register");
  EXPECT_EQ(json::parse(r.events[2].data_json), json({{"id", "nightly"}, {"expr", "0 3 * * *"}}));
  int warnings = 0;
  for (const LogEntry& l : r.logs)
    if (l.level == LogEntry::Level::warn &&
        l.message.find("scheduling is the host's job") != std::string::npos)
      ++warnings;
  EXPECT_EQ(warnings, 1) << "one warning, however many registrations";
  EXPECT_EQ(tool("bump"), 2) << "db.kvGet/kvSet persist";
}

TEST_F(NotesBundle, HooksKeepStateInMemoryBetweenTheCallsOfOneInvocation) {
  const json seq = json::array(
      {{{"hook", "onSetupStart"}},
       {{"hook", "onSetupSubmit"}, {"args", {{"stepId", "region"}, {"values", {{"region", "eu"}}}}}},
       {{"hook", "onSetupSubmit"}, {"args", {{"stepId", "confirm"}, {"values", json::object()}}}},
       {{"hook", "onRpc"}, {"args", {{"method", "ping"}, {"params", {1, 2}}}}},
       {{"hook", "onSetOption"}, {"args", {{"name", "verbose"}, {"value", true}}}},
       {{"hook", "onListOptions"}},
       {{"hook", "onSync"}}});
  const RunResult r = call(runner_, skill_, "", seq.dump());
  const json v = value_of(r);
  ASSERT_EQ(v.size(), 7u) << describe_run(r);
  EXPECT_EQ(v[0]["step"], "region");
  EXPECT_EQ(v[1], json({{"next", "confirm"}}));
  EXPECT_EQ(v[2], json({{"done", true}, {"region", "eu"}}));
  EXPECT_EQ(v[3], json({{"method", "ping"}, {"params", {1, 2}}, {"inits", 1}}))
      << "init runs once per invocation";
  EXPECT_EQ(v[4], true) << "a hook on globalThis is called with this = the skill";
  EXPECT_EQ(v[5][0], json({{"name", "verbose"}, {"value", true}}));
  EXPECT_EQ(v[6], nullptr) << "a hook the bundle does not define does nothing";
  // stop() ran after the calls.
  EXPECT_EQ(r.logs.back().message, "stopping notes");
  // What the bundle wrote to state persists.
  const RunResult single = call(runner_, skill_, "hook:onListOptions");
  EXPECT_EQ(value_of(single)[0]["value"], true);
}

TEST_F(NotesBundle, WrongCallsAreClearErrors) {
  RunResult r = call(runner_, skill_, "tool:nope");
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("no tool named \"nope\"; its tools are: add_note, commit_notes"),
            std::string::npos)
      << r.error->message;
  r = call(runner_, skill_, "hook:start");
  EXPECT_EQ(r.outcome, Outcome::error);
  EXPECT_NE(r.error->message.find("init, start and stop run on every invocation"), std::string::npos);
  r = call(runner_, skill_, "default");
  EXPECT_EQ(r.outcome, Outcome::invalid);
  EXPECT_NE(r.error->message.find("\"tool:NAME\", \"hook:NAME\", \"tools\""), std::string::npos);
  r = call(runner_, skill_, "", R"({"tool": "list_notes"})");
  EXPECT_EQ(r.outcome, Outcome::error);
  EXPECT_NE(r.error->message.find("a sequence is a JSON array"), std::string::npos);
  r = call(runner_, skill_, "", R"([{"tool": "list_notes", "hook": "onSync"}])");
  EXPECT_NE(r.error->message.find("sequence[0]: expected"), std::string::npos);
}

TEST(BundleRuntime, TheV1OnlyGlobalsAreGoneAndTheOpenHumanOnesArePresent) {
  Bundle b("notes", "");
  b.write(
      "index.js",
      "globalThis.__skill = {default: {tools: [{name: 'g', execute() { return [typeof openhuman, typeof "
      "store, "
      "typeof env, typeof state, typeof db, typeof net, typeof fetch, typeof data, typeof platform, typeof "
      "cron, "
      "typeof skills, typeof memory, typeof oauth, typeof auth, typeof setTimeout, typeof setInterval, "
      "typeof "
      "clearInterval, typeof TextEncoder, typeof __skillId, typeof require, typeof process].join(); }}]}};");
  testing::TestRunner runner(testing::host(b.data()));
  const json v = value_of(call(runner, b.skill(), "tool:g", "{}"));
  EXPECT_EQ(
      v["content"][0]["text"],
      "undefined,undefined,undefined,object,object,object,function,object,object,object,object,object,object,"
      "object,function,function,function,function,string,undefined,undefined");
}

TEST(BundleRuntime, ABundleWithoutTheFooterIsToldWhatIsMissing) {
  Bundle b("notes", "");
  b.write("index.js", "var __skill_bundle = (() => ({ default: {} }))();");
  testing::TestRunner runner(testing::host(b.data()));
  const RunResult r = call(runner, b.skill(), "tools");
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("did not set globalThis.__skill = { default: skill }"), std::string::npos);
}

TEST(BundleRuntime, GlobalToolsAreCopiedByTheFooterAndExecuteMayReturnAPromise) {
  Bundle b("notes", "");
  b.write("index.js",
          "var __skill_bundle = (() => { globalThis.tools = [{name: 'later', description: 'd', execute(a) { "
          "return "
          "new Promise((res) => setTimeout(() => res(a.n * 2), 5)); }}]; return { default: { init() {} } }; "
          "})();\n"
          "globalThis.__skill = { default: __skill_bundle.default };\n"
          "if (!globalThis.__skill.default.tools && globalThis.tools) globalThis.__skill.default.tools = "
          "globalThis.tools;");
  testing::TestRunner runner(testing::host(b.data()));
  const json v = value_of(call(runner, b.skill(), "tool:later", R"({"n": 21})"));
  EXPECT_EQ(v["content"][0]["text"], "42");
}

}  // namespace
}  // namespace skillbox
