// `skillbox mcp` end to end: the built binary driven over pipes as an MCP client drives it (initialize,
// tools/list, tools/call, notifications, cancellation, bad JSON-RPC), in both isolation modes where the
// runner matters.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "mcp/mcp_client.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::McpProcess;
using namespace std::chrono_literals;

const std::string kHello = std::string(SKILLBOX_SOURCE_DIR) + "/examples/skills/hello";

/// A skillbox skill folder with id `id`, `limits` and the module `source`.
struct Folder {
  Folder(const std::string& id, const std::string& source, const json& limits = json::object(),
         const json& permissions = json::object())
      : skill({{"index.js", source}}) {
    json manifest = {{"id", id}, {"name", id}, {"version", "1.0.0"}, {"entry", "index.js"}};
    if (!limits.empty()) manifest["limits"] = limits;
    if (!permissions.empty()) manifest["permissions"] = permissions;
    skill.write("skill.json", manifest.dump());
  }
  [[nodiscard]] std::string dir() const { return skill.dir().string(); }
  testing::TempSkill skill;
};

std::string text_of(const json& response) {
  const json& content = response["result"]["content"];
  return content.is_array() && !content.empty() ? content[0].value("text", "") : "";
}

class McpIsolation : public ::testing::TestWithParam<std::string> {
 protected:
  std::vector<std::string> args(std::vector<std::string> dirs) const {
    dirs.push_back("--isolation");
    dirs.push_back(GetParam());
    return dirs;
  }
};

std::string mode_name(const ::testing::TestParamInfo<std::string>& mode) {
  return mode.param;
}

INSTANTIATE_TEST_SUITE_P(Modes, McpIsolation, ::testing::Values("process", "inprocess"), mode_name);

TEST(McpStdio, InitializeAnswersTheClientsRevisionOrTheLatest) {
  for (const auto& [asked, answered] :
       std::vector<std::pair<std::string, std::string>>{{"2025-06-18", "2025-06-18"},
                                                        {"2025-11-25", "2025-11-25"},
                                                        {"2024-11-05", "2025-11-25"},
                                                        {"1999-01-01", "2025-11-25"}}) {
    McpProcess mcp({kHello, "--isolation", "inprocess"});
    const json result = mcp.initialize(asked);
    EXPECT_EQ(result["protocolVersion"], answered) << asked;
    EXPECT_EQ(result["serverInfo"]["name"], "skillbox");
    EXPECT_TRUE(result["serverInfo"]["version"].is_string());
    EXPECT_EQ(result["capabilities"]["tools"]["listChanged"], true);  // the folders are watched (--watch-ms)
    EXPECT_TRUE(result["capabilities"]["logging"].is_object());
    EXPECT_EQ(mcp.close_and_wait(), 0) << mcp.stderr_text();
  }
}

TEST(McpStdio, RequestsBeforeInitializeAreRefusedButPingIsAnswered) {
  McpProcess mcp({kHello, "--isolation", "inprocess"});
  const json early = mcp.request(1, "tools/list");
  EXPECT_EQ(early["error"]["code"], -32600);
  EXPECT_NE(early["error"]["message"].get<std::string>().find("initialize"), std::string::npos);
  EXPECT_EQ(mcp.request("p", "ping")["result"], json::object());
  mcp.initialize();
  EXPECT_EQ(mcp.request(2, "tools/list")["result"]["tools"].size(), 1u);
  const json again = mcp.request(3, "initialize", {{"protocolVersion", "2025-11-25"}});
  EXPECT_EQ(again["error"]["code"], -32600);
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, ListsASkillAndABundlesToolsWithAnnotationsFromPolicy) {
  testing::Bundle notes("notes", testing::grants({"http://127.0.0.1:1"}));
  McpProcess mcp({kHello, notes.dir().string(), "--isolation", "inprocess"});
  mcp.initialize();
  const json tools = mcp.request(1, "tools/list")["result"]["tools"];
  std::map<std::string, json> by_name;
  for (const json& t : tools) by_name[t["name"]] = t;
  ASSERT_TRUE(by_name.contains("hello")) << tools.dump();
  EXPECT_EQ(by_name["hello"]["inputSchema"], json({{"type", "object"}}));
  EXPECT_EQ(by_name["hello"]["annotations"],
            json({{"readOnlyHint", true}, {"destructiveHint", false}, {"openWorldHint", false}}));
  for (const char* tool : {"add_note", "commit_notes", "list_notes", "fetch_title", "bump", "codec"})
    EXPECT_TRUE(by_name.contains(std::string("notes__") + tool)) << tool << " in " << tools.dump();
  const json add = by_name["notes__add_note"];
  EXPECT_EQ(add["description"], "Adds a note inside an open transaction (commit with commit_notes)");
  EXPECT_EQ(add["inputSchema"]["properties"]["title"]["type"], "string");
  EXPECT_EQ(add["inputSchema"]["required"], json::array({"title"}));
  // The grants: fs readwrite, http GET and POST to one origin.
  EXPECT_EQ(add["annotations"],
            json({{"readOnlyHint", false}, {"destructiveHint", true}, {"openWorldHint", true}}));
  // A tool without a schema gets the object schema.
  EXPECT_EQ(by_name["notes__list_notes"]["inputSchema"], json({{"type", "object"}}));
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, AnnotationsFollowAReadOnlyGrant) {
  Folder reader("reader", "export default () => 1;", json::object(),
                {{"fs", {{"mode", "read"}}},
                 {"http", {{"allow", {"https://api.example.com/"}}, {"methods", {"GET", "HEAD"}}}}});
  McpProcess mcp({reader.dir(), "--isolation", "inprocess"});
  mcp.initialize();
  const json tool = mcp.request(1, "tools/list")["result"]["tools"][0];
  EXPECT_EQ(tool["annotations"],
            json({{"readOnlyHint", true}, {"destructiveHint", false}, {"openWorldHint", true}}));
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST_P(McpIsolation, CallReturnsTheValueAfterTheLogLines) {
  McpProcess mcp(args({kHello}));
  mcp.initialize();
  mcp.send({{"jsonrpc", "2.0"},
            {"id", 5},
            {"method", "tools/call"},
            {"params", {{"name", "hello"}, {"arguments", {{"name", "Ada"}}}}}});
  const std::vector<json> got = mcp.until_response(5);
  ASSERT_EQ(got.size(), 2u) << json(got).dump();
  EXPECT_EQ(got[0]["method"], "notifications/message");
  EXPECT_EQ(got[0]["params"], json({{"level", "info"}, {"logger", "hello"}, {"data", "greeting Ada"}}));
  EXPECT_EQ(got[1]["result"]["isError"], false);
  EXPECT_EQ(json::parse(text_of(got[1])), json({{"greeting", "Hello, Ada!"}, {"length", 3}}));
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST_P(McpIsolation, LimitsAreToolErrorsNamingTheOutcome) {
  Folder waiter("waiter", "export default () => new Promise(() => setInterval(() => {}, 50));",
                {{"timeout_ms", 300}});
  // The step limit of examples/skills/runaway, with a deadline no instrumented build on a busy machine
  // reaches before 10,000,000 steps (the example's own is 2 s).
  Folder runaway("runaway", "export default () => { for (;;) {} };",
                 {{"steps", 10000000}, {"timeout_ms", 60000}});
  McpProcess mcp(args({waiter.dir(), runaway.dir()}));
  mcp.initialize();
  const json timeout = mcp.request(1, "tools/call", {{"name", "waiter"}});
  EXPECT_EQ(timeout["result"]["isError"], true);
  EXPECT_TRUE(text_of(timeout).starts_with("timeout: ")) << timeout.dump();
  const json steps = mcp.request(2, "tools/call", {{"name", "runaway"}, {"arguments", json::object()}});
  EXPECT_EQ(steps["result"]["isError"], true);
  EXPECT_TRUE(text_of(steps).starts_with("step_limit: ")) << steps.dump();
  EXPECT_NE(text_of(steps).find("10000000"), std::string::npos) << "names the limit: " << steps.dump();
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST_P(McpIsolation, LimitFlagsLowerTheSkillsLimits) {
  Folder waiter("waiter", "export default () => new Promise(() => setInterval(() => {}, 50));",
                {{"timeout_ms", 20000}});
  std::vector<std::string> a = args({waiter.dir()});
  a.insert(a.end(), {"--timeout-ms", "200"});
  McpProcess mcp(a);
  mcp.initialize();
  const auto start = std::chrono::steady_clock::now();
  const json r = mcp.request(1, "tools/call", {{"name", "waiter"}});
  EXPECT_TRUE(text_of(r).starts_with("timeout: ")) << r.dump();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST_P(McpIsolation, BundleToolResultsPassThroughAndEventsBecomeProgress) {
  testing::Bundle notes("notes", testing::grants({}));
  McpProcess mcp(args({notes.dir().string(), "--data-dir", notes.data().string()}));
  mcp.initialize();
  const json codec =
      mcp.request(1, "tools/call", {{"name", "notes__codec"}, {"arguments", {{"text", "hi"}}}});
  EXPECT_EQ(codec["result"]["isError"], false) << codec.dump();
  EXPECT_EQ(json::parse(text_of(codec))["b64"], "aGk=") << codec.dump();

  mcp.notifications.clear();
  const json bump =
      mcp.request(2, "tools/call", {{"name", "notes__bump"}, {"_meta", {{"progressToken", "tok"}}}});
  EXPECT_EQ(text_of(bump), "1") << bump.dump();
  std::vector<json> progress;
  for (const json& n : mcp.notifications)
    if (n["method"] == "notifications/progress") progress.push_back(n["params"]);
  // platform.notify, memory.insert and two cron registrations, counted in order.
  ASSERT_EQ(progress.size(), 4u) << json(mcp.notifications).dump();
  for (size_t i = 0; i < progress.size(); ++i) {
    EXPECT_EQ(progress[i]["progressToken"], "tok");
    EXPECT_EQ(progress[i]["progress"], i + 1);
  }
  EXPECT_TRUE(progress[0]["message"].get<std::string>().starts_with("notify ")) << progress[0].dump();

  // No progress token: no progress notifications.
  mcp.notifications.clear();
  EXPECT_EQ(text_of(mcp.request(3, "tools/call", {{"name", "notes__bump"}})), "2");
  for (const json& n : mcp.notifications) EXPECT_NE(n["method"], "notifications/progress") << n.dump();

  // A tool that throws (net.fetch without a grant): the outcome and error, as a tool error.
  const json failed = mcp.request(
      4, "tools/call", {{"name", "notes__fetch_title"}, {"arguments", {{"url", "http://127.0.0.1:1/"}}}});
  EXPECT_EQ(failed["result"]["isError"], true) << failed.dump();
  EXPECT_TRUE(text_of(failed).starts_with("error: ")) << failed.dump();
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST_P(McpIsolation, SecretsAreInjectedAtEgressAndNeverInResults) {
  testing::HttpTestServer api;
  testing::Bundle b("notion-lite", testing::grants({api.origin()}));
  const fs::path creds = b.root() / "credentials.json";
  const std::string secret = "secret_MCP_EGRESS_41";
  std::ofstream(creds) << json({{"notion-lite",
                                 {{"auth",
                                   {{"mode", "self_hosted"},
                                    {"credentials", {{"api_token", secret}}},
                                    {"hosts", {api.origin() + "/"}}}}}}})
                              .dump();
  McpProcess mcp(args({b.dir().string(), "--credentials", creds.string(), "--data-dir", b.data().string()}));
  mcp.initialize();
  const json r = mcp.request(1, "tools/call",
                             {{"name", "notion-lite__search"}, {"arguments", {{"base", api.origin()}}}});
  EXPECT_EQ(r["result"]["isError"], false) << r.dump();
  ASSERT_EQ(api.recorded().size(), 1u);
  bool real = false;
  const auto seen = api.recorded();
  for (const auto& [n, v] : seen[0].headers) real = real || v == "Bearer " + secret;
  EXPECT_TRUE(real) << "the real token reached the allowed host";
  EXPECT_EQ(mcp.close_and_wait(), 0);
  for (const std::string& line : mcp.stdout_lines()) EXPECT_EQ(line.find(secret), std::string::npos) << line;
  EXPECT_EQ(mcp.stderr_text().find(secret), std::string::npos);

  McpProcess bad({b.dir().string(), "--credentials", (b.root() / "missing.json").string()});
  EXPECT_EQ(bad.close_and_wait(), 2);
  EXPECT_NE(bad.stderr_text().find("--credentials: "), std::string::npos) << bad.stderr_text();
}

TEST_P(McpIsolation, CancelledCallsStopAndAreNotAnswered) {
  Folder waiter(
      "waiter",
      "export default () => { log('waiting'); return new Promise(() => setInterval(() => {}, 50)); }",
      {{"timeout_ms", 60000}});
  McpProcess mcp(args({waiter.dir(), kHello}));
  mcp.initialize();
  mcp.send({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", {{"name", "waiter"}}}});
  const std::optional<json> started = mcp.next(30s);
  ASSERT_TRUE(started.has_value());
  EXPECT_EQ((*started)["params"]["data"], "waiting") << started->dump();
  // The session keeps answering while the call runs.
  EXPECT_EQ(mcp.request(8, "ping")["result"], json::object());
  EXPECT_EQ(mcp.request(9, "tools/call", {{"name", "hello"}})["result"]["isError"], false);
  mcp.send({{"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params", {{"requestId", 7}, {"reason", "user"}}}});
  EXPECT_EQ(mcp.request(10, "ping")["result"], json::object());
  // End of input waits for calls in progress: the cancelled one ended long before its 60 s deadline.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(mcp.close_and_wait(20s), 0) << mcp.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  for (const std::string& line : mcp.stdout_lines())
    EXPECT_EQ(line.find("\"id\":7"), std::string::npos) << "a cancelled request got a response: " << line;
  EXPECT_NE(mcp.stderr_text().find("cancelled by the client"), std::string::npos) << mcp.stderr_text();
}

TEST_P(McpIsolation, SigtermCancelsTheCallsInProgressAndEnds) {
  Folder waiter(
      "waiter",
      "export default () => { log('waiting'); return new Promise(() => setInterval(() => {}, 50)); }",
      {{"timeout_ms", 60000}});
  McpProcess mcp(args({waiter.dir()}));
  mcp.initialize();
  mcp.send({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", {{"name", "waiter"}}}});
  ASSERT_TRUE(mcp.next(30s).has_value());  // its log line: the call runs
  const auto start = std::chrono::steady_clock::now();
  mcp.kill(SIGTERM);
  // stdin stays open: the signal alone ends the session.
  const std::vector<json> got = mcp.until_response(7, 20s);
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(text_of(got.back()).starts_with("cancelled: ")) << got.back().dump();
  EXPECT_EQ(got.back()["result"]["isError"], true);
  EXPECT_EQ(mcp.close_and_wait(20s), 0) << mcp.stderr_text();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
}

TEST(McpStdio, EndOfInputLetsCallsInProgressFinish) {
  Folder slow("slow", "export default () => new Promise((r) => setTimeout(() => r('done'), 300));");
  McpProcess mcp({slow.dir(), "--isolation", "inprocess"});
  mcp.initialize();
  mcp.send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"}, {"params", {{"name", "slow"}}}});
  EXPECT_EQ(mcp.close_and_wait(), 0);
  ASSERT_FALSE(mcp.stdout_lines().empty());
  const json last = json::parse(mcp.stdout_lines().back());
  EXPECT_EQ(last["id"], 1);
  EXPECT_EQ(text_of(last), "\"done\"");
}

TEST(McpStdio, LogLevelFollowsSetLevel) {
  Folder chatty(
      "chatty",
      "export default () => { console.debug('d'); console.info('i'); console.warn('w'); console.error('e'); "
      "return 0; }");
  McpProcess mcp({chatty.dir(), "--isolation", "inprocess"});
  mcp.initialize();
  const auto levels_of_call = [&](int id) {
    mcp.notifications.clear();
    mcp.request(id, "tools/call", {{"name", "chatty"}});
    std::vector<std::string> out;
    for (const json& n : mcp.notifications) {
      EXPECT_EQ(n["params"]["logger"], "chatty");
      out.push_back(n["params"]["level"].get<std::string>() + ":" + n["params"]["data"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(levels_of_call(1),
            (std::vector<std::string>{"info:i", "warning:w", "error:e"}));  // info by default
  EXPECT_EQ(mcp.request(2, "logging/setLevel", {{"level", "debug"}})["result"], json::object());
  EXPECT_EQ(levels_of_call(3), (std::vector<std::string>{"debug:d", "info:i", "warning:w", "error:e"}));
  EXPECT_EQ(mcp.request(4, "logging/setLevel", {{"level", "error"}})["result"], json::object());
  EXPECT_EQ(levels_of_call(5), (std::vector<std::string>{"error:e"}));
  EXPECT_EQ(mcp.request(6, "logging/setLevel", {{"level", "loud"}})["error"]["code"], -32602);
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, BadCallsAreInvalidParams) {
  McpProcess mcp({kHello, "--isolation", "inprocess"});
  mcp.initialize();
  const json unknown = mcp.request(1, "tools/call", {{"name", "nope"}});
  EXPECT_EQ(unknown["error"]["code"], -32602);
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("\"nope\""), std::string::npos)
      << unknown.dump();
  EXPECT_EQ(mcp.request(2, "tools/call", {{"name", "hello"}, {"arguments", "Ada"}})["error"]["code"], -32602);
  EXPECT_EQ(mcp.request(3, "tools/call", {{"name", 5}})["error"]["code"], -32602);
  EXPECT_EQ(
      mcp.request(4, "tools/call", {{"name", "hello"}, {"_meta", {{"progressToken", 1.5}}}})["error"]["code"],
      -32602);
  EXPECT_EQ(mcp.request(5, "tools/list", {{"cursor", "not-ours"}})["error"]["code"], -32602);
  EXPECT_EQ(mcp.request(6, "tools/list", {{"cursor", 3}})["error"]["code"], -32602);
  EXPECT_EQ(mcp.request(7, "initialize", json::array())["error"]["code"], -32602);
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, BadJsonRpcGetsTheRightErrorAndTheServerGoesOn) {
  struct Case {
    std::string line;
    int code;
    json id;
  };
  const std::vector<Case> cases = {
      {"not json", -32700, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", -32700, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}", -32700, nullptr},
      {std::string(300, '[') + std::string(300, ']'), -32700, nullptr},
      {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", -32600, nullptr},
      {"[]", -32600, nullptr},
      {"42", -32600, nullptr},
      {"\"ping\"", -32600, nullptr},
      {"{}", -32600, nullptr},
      {"{\"id\":1,\"method\":\"ping\"}", -32600, 1},
      {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", -32600, 1},
      {"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"ping\"}", -32600, 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", -32600, 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1}", -32600, 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", -32600, 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"result\":{}}", -32600, 1},
      {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":-9007199254740992,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":1e400,\"method\":\"ping\"}", -32700, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":99999999999999999999999,\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"" + std::string(257, 'x') + "\",\"method\":\"ping\"}", -32600, nullptr},
      {"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
       -32600, 2},
      {"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/list\"}", -32601, 3},
      {"{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"no/such\"}", -32601, "s"},
      {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":[1]}", -32602, 4},
      {"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"initialize\",\"params\":{}}", -32602, 5},
      {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\",\"params\":{\"protocolVersion\":20250618}}",
       -32602, 6},
      {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-"
       "18\",\"capabilities\":[]}}",
       -32602, 6},
      {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}", -32600, 7},  // not initialized yet
      {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\",\"params\":{" + std::string(4u << 20, ' ') +
           "}}",
       -32600, nullptr},
  };
  McpProcess mcp({kHello, "--isolation", "inprocess"});
  int ping = 1000;
  for (const Case& c : cases) {
    mcp.send_line(c.line);
    const std::optional<json> reply = mcp.next(10s);
    ASSERT_TRUE(reply.has_value()) << "no answer to: " << c.line.substr(0, 200);
    EXPECT_EQ((*reply)["error"]["code"], c.code) << c.line.substr(0, 200) << " -> " << reply->dump();
    EXPECT_EQ((*reply)["id"], c.id) << c.line.substr(0, 200) << " -> " << reply->dump();
    EXPECT_FALSE((*reply)["error"]["message"].get<std::string>().empty());
    // Still answering, and nothing else came in between.
    const json pong = mcp.request(++ping, "ping");
    EXPECT_EQ(pong["result"], json::object()) << "after " << c.line.substr(0, 200);
    EXPECT_TRUE(mcp.notifications.empty()) << json(mcp.notifications).dump();
  }
  // Notifications are never answered, known or not, valid params or not; a response from the client
  // is not answered either. The next line out is the answer to the ping after them.
  for (const char* line :
       {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\",\"params\":{}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":{}}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"tools/list\"}", "{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}",
        "", "   ", "\r"})
    mcp.send_line(line);
  mcp.send_line("{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}");
  const std::optional<json> next = mcp.next(10s);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, json({{"jsonrpc", "2.0"}, {"id", "last"}, {"result", json::object()}}));
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, ANotificationWithoutIdAndBadShapeIsStillAnswered) {
  // JSON-RPC: an invalid message gets an error with id null even without an id; only valid
  // notifications are never answered.
  McpProcess mcp({kHello, "--isolation", "inprocess"});
  mcp.send_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  mcp.send_line("{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}");
  const std::optional<json> reply = mcp.next(10s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ((*reply)["error"]["code"], -32600);
  EXPECT_EQ((*reply)["id"], nullptr);
  EXPECT_EQ(mcp.close_and_wait(), 0);
}

TEST(McpStdio, ASkillThatCannotBeLoadedStopsTheCommandWithExit2) {
  McpProcess mcp({"/nonexistent/skill", "--isolation", "inprocess"});
  EXPECT_EQ(mcp.close_and_wait(), 2);
  EXPECT_TRUE(mcp.stdout_lines().empty());
  EXPECT_NE(mcp.stderr_text().find("/nonexistent/skill"), std::string::npos) << mcp.stderr_text();
}

TEST(McpStdio, TheSameSkillTwiceIsRefused) {
  McpProcess mcp({kHello, kHello, "--isolation", "inprocess"});
  EXPECT_EQ(mcp.close_and_wait(), 2);
  EXPECT_NE(mcp.stderr_text().find("two tools are named \"hello\""), std::string::npos) << mcp.stderr_text();
}

}  // namespace
}  // namespace skillbox
