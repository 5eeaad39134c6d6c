// mcp/session.cpp and mcp/tools.cpp in-process: tools/list pages and cursors, the annotations a policy
// implies, and a call's result through a runner that records what it was asked to run.
#include "mcp/session.h"

#include <gtest/gtest.h>

#include <mutex>

#include "mcp/call_result.h"
#include "mcp/tools.h"

namespace skillbox::mcp {
namespace {

using json = nlohmann::json;

const std::string kHello = std::string(SKILLBOX_SOURCE_DIR) + "/examples/skills/hello";

/// A runner that answers every run with `result` and remembers the invocations.
class FakeRunner final : public Runner {
 public:
  RunResult result;
  std::vector<Invocation> seen;
  RunResult run(const Invocation& invocation) override {
    std::lock_guard<std::mutex> lock(mu_);
    seen.push_back(invocation);
    if (invocation.observer.on_log)
      invocation.observer.on_log({LogEntry::Level::warn, "careful"}, Timestamp());
    return result;
  }

 private:
  std::mutex mu_;
};

struct Harness {
  explicit Harness(size_t tools, size_t page_size = 2) {
    Result<Skill> skill = load_skill(kHello);
    EXPECT_TRUE(skill);
    SessionOptions options;
    for (size_t i = 0; i < tools; ++i)
      options.tools.push_back(Tool{.name = "t" + std::to_string(i),
                                   .title = {},
                                   .description = "d",
                                   .input_schema = {{"type", "object"}},
                                   .input_validator = {},
                                   .output_schema = nullptr,
                                   .output_validator = {},
                                   .annotations = {},
                                   .skill = *skill,
                                   .export_name = {},
                                   .bundle = false});
    options.runner = &runner;
    options.page_size = page_size;
    session = std::make_unique<Session>(
        std::move(options),
        [this](std::string text) {
          std::lock_guard<std::mutex> lock(mu);
          out.push_back(json::parse(text));
        },
        [](std::string) {});
    session->receive(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  }
  json ask(const json& request) {
    {
      std::lock_guard<std::mutex> lock(mu);
      out.clear();
    }
    session->receive(request.dump());
    std::lock_guard<std::mutex> lock(mu);
    return out.empty() ? json() : out.back();
  }
  FakeRunner runner;
  std::mutex mu;
  std::vector<json> out;
  std::unique_ptr<Session> session;
};

TEST(McpSession, ReplacedToolsAreListedAndAChangeIsNotifiedOnce) {
  Harness h(3, 10);
  const json before = h.ask({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  ASSERT_EQ(before["result"]["tools"].size(), 3u);
  std::vector<Tool> same;
  Result<Skill> skill = load_skill(kHello);
  ASSERT_TRUE(skill);
  for (size_t i = 0; i < 3; ++i)
    same.push_back(Tool{.name = "t" + std::to_string(i),
                        .title = {},
                        .description = "d",
                        .input_schema = {{"type", "object"}},
                        .input_validator = {},
                        .output_schema = {},
                        .output_validator = {},
                        .annotations = {},
                        .skill = *skill,
                        .export_name = {},
                        .bundle = false});
  {
    std::lock_guard<std::mutex> lock(h.mu);
    h.out.clear();
  }
  // The same list again: nothing to tell.
  EXPECT_FALSE(h.session->replace_tools(same));
  same.pop_back();
  same[0].description = "new";
  EXPECT_TRUE(h.session->replace_tools(same));
  {
    std::lock_guard<std::mutex> lock(h.mu);
    ASSERT_EQ(h.out.size(), 1u);
    EXPECT_EQ(h.out[0], json({{"jsonrpc", "2.0"},
                              {"method", "notifications/tools/list_changed"},
                              {"params", json::object()}}));
  }
  const json after = h.ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
  ASSERT_EQ(after["result"]["tools"].size(), 2u) << after.dump();
  EXPECT_EQ(after["result"]["tools"][0]["description"], "new");
  const json gone =
      h.ask({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/call"}, {"params", {{"name", "t2"}}}});
  EXPECT_EQ(gone["error"]["code"], -32602) << gone.dump();
}

TEST(McpSession, ToolsListPagesWithCursorsItGave) {
  Harness h(5, 2);
  std::vector<std::string> names;
  json cursor;
  for (int page = 0; page < 10; ++page) {
    json params = json::object();
    if (!cursor.is_null()) params["cursor"] = cursor;
    const json r =
        h.ask({{"jsonrpc", "2.0"}, {"id", page + 1}, {"method", "tools/list"}, {"params", params}});
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_LE(r["result"]["tools"].size(), 2u);
    for (const json& t : r["result"]["tools"]) names.push_back(t["name"]);
    if (!r["result"].contains("nextCursor")) break;
    cursor = r["result"]["nextCursor"];
    ASSERT_TRUE(cursor.is_string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));
  for (const json& bad : {json("o5"), json("o0"), json("o"), json("o01"), json("x2"), json("o99999999999"),
                          json(2), json(nullptr)}) {
    const json r =
        h.ask({{"jsonrpc", "2.0"}, {"id", 99}, {"method", "tools/list"}, {"params", {{"cursor", bad}}}});
    EXPECT_EQ(r["error"]["code"], -32602) << bad.dump() << " -> " << r.dump();
  }
}

TEST(McpSession, ACallRunsTheToolsExportWithTheArgumentsAndTheSessionsLimits) {
  Harness h(1);
  h.runner.result.outcome = Outcome::ok;
  h.runner.result.value_json = R"({"a": [1, 2]})";
  h.session->receive(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  h.session->receive(
      R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t0","arguments":{"x":1}}})");
  h.session->close(Session::Close::drain);
  ASSERT_EQ(h.runner.seen.size(), 1u);
  EXPECT_EQ(json::parse(h.runner.seen[0].input_json), json({{"x", 1}}));
  EXPECT_EQ(h.runner.seen[0].export_name, "");
  ASSERT_EQ(h.out.size(), 3u);  // initialize, the warning, the result
  EXPECT_EQ(h.out[1]["params"], json({{"level", "warning"}, {"logger", "t0"}, {"data", "careful"}}));
  EXPECT_EQ(h.out[2]["result"],
            json({{"content", {{{"type", "text"}, {"text", "{\"a\":[1,2]}"}}}}, {"isError", false}}));
}

TEST(McpSession, ACatastrophicPatternIsAnsweredAsInvalidParamsWithoutARun) {
  // "^(a+)+$" on 50,000 "a"s and a "!" backtracks for ages in a backtracking regex engine; the arguments
  // are checked with RE2 (base/ecma_regex.h), so the call is answered, and no sandbox starts.
  Harness h(1);
  const nlohmann::json schema = {{"type", "object"}, {"properties", {{"id", {{"pattern", "^(a+)+$"}}}}}};
  Result<base::JsonSchema> validator = base::JsonSchema::compile(schema);
  ASSERT_TRUE(validator) << validator.error().message;
  std::vector<Tool> tools;
  tools.push_back(Tool{.name = "strict",
                       .title = {},
                       .description = {},
                       .input_schema = schema,
                       .input_validator = std::move(*validator),
                       .output_schema = nullptr,
                       .output_validator = {},
                       .annotations = {},
                       .skill = *load_skill(kHello),
                       .export_name = {},
                       .bundle = false});
  h.session->replace_tools(std::move(tools));
  h.session->receive(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  h.session->receive(
      json({{"jsonrpc", "2.0"},
            {"id", 7},
            {"method", "tools/call"},
            {"params", {{"name", "strict"}, {"arguments", {{"id", std::string(50000, 'a') + "!"}}}}}})
          .dump());
  h.session->close(Session::Close::drain);
  EXPECT_TRUE(h.runner.seen.empty());
  std::lock_guard<std::mutex> lock(h.mu);
  ASSERT_FALSE(h.out.empty());
  const json& answer = h.out.back();
  EXPECT_EQ(answer["id"], 7);
  EXPECT_EQ(answer["error"]["code"], -32602) << answer.dump().substr(0, 500);
  EXPECT_NE(answer["error"]["message"].get<std::string>().find("/id"), std::string::npos)
      << answer.dump().substr(0, 500);
}

TEST(McpSession, ACallsTimeoutCountsFromItsArrival) {
  // As for a /v1 run: the time a call waited before it could start is part of its timeout.
  Harness h(1);
  h.runner.result.outcome = Outcome::ok;
  h.runner.result.value_json = "1";
  const uint64_t timeout_ms = load_skill(kHello)->manifest().limits.timeout_ms;  // hello: 1000
  h.session->receive(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  const auto call = [](int id) {
    return json({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", "t0"}}}})
        .dump();
  };
  const auto now = Session::Clock::now();
  h.session->receive(call(1), now - std::chrono::milliseconds(timeout_ms + 5000));  // waited past it
  h.session->receive(call(2), now - std::chrono::milliseconds(timeout_ms / 2));     // waited half of it
  h.session->close(Session::Close::drain);
  ASSERT_EQ(h.runner.seen.size(), 1u);  // the first never ran
  ASSERT_TRUE(h.runner.seen[0].overrides.timeout_ms);
  EXPECT_LE(*h.runner.seen[0].overrides.timeout_ms, timeout_ms / 2);
  std::lock_guard<std::mutex> lock(h.mu);
  bool first_answered = false;
  for (const json& m : h.out) {
    if (m.value("id", json()) != 1) continue;
    first_answered = true;
    EXPECT_EQ(m["result"]["isError"], true) << m.dump();
    EXPECT_TRUE(m["result"]["content"][0]["text"].get<std::string>().starts_with("timeout")) << m.dump();
  }
  EXPECT_TRUE(first_answered);
}

TEST(McpSession, CallResultsNameTheOutcomeOfAFailedRun) {
  Result<Skill> skill = load_skill(kHello);
  ASSERT_TRUE(skill);
  Tool bundle{.name = "b__t",
              .title = {},
              .description = {},
              .input_schema = {{"type", "object"}},
              .input_validator = {},
              .output_schema = nullptr,
              .output_validator = {},
              .annotations = {},
              .skill = *skill,
              .export_name = "tool:t",
              .bundle = true};
  RunResult r;
  r.outcome = Outcome::memory_limit;
  r.error = ErrorInfo{
      .name = "MemoryLimitExceeded", .message = "the heap limit of 8 MiB was hit", .stack = {}, .code = {}};
  EXPECT_EQ(call_tool_result(bundle, r),
            json({{"content",
                   {{{"type", "text"},
                     {"text", "memory_limit: MemoryLimitExceeded: the heap limit of 8 MiB was hit"}}}},
                  {"isError", true}}));
  RunResult ok;
  ok.outcome = Outcome::ok;
  ok.value_json = R"({"content":[{"type":"text","text":"no"}],"is_error":true})";
  EXPECT_EQ(call_tool_result(bundle, ok),
            json({{"content", {{{"type", "text"}, {"text", "no"}}}}, {"isError", true}}));
  ok.value_json = R"("not a ToolResult")";
  EXPECT_EQ(call_tool_result(bundle, ok),
            json({{"content", {{{"type", "text"}, {"text", "\"not a ToolResult\""}}}}, {"isError", false}}));
}

TEST(McpTools, AnnotationsFollowThePolicyOnly) {
  Policy none;
  EXPECT_TRUE(annotations_of(none).read_only);
  EXPECT_FALSE(annotations_of(none).destructive);
  EXPECT_FALSE(annotations_of(none).open_world);

  Policy reads;
  reads.fs.mode = FsMode::read;
  reads.http.allow = {"https://api.example.com/"};
  reads.http.methods = {"GET", "HEAD"};
  EXPECT_TRUE(annotations_of(reads).read_only);
  EXPECT_TRUE(annotations_of(reads).open_world);

  Policy posts = reads;
  posts.http.methods = {"GET", "POST"};
  EXPECT_FALSE(annotations_of(posts).read_only);
  EXPECT_FALSE(annotations_of(posts).destructive);

  // Methods without any allow entry reach nothing.
  Policy methods_only;
  methods_only.http.methods = {"DELETE"};
  EXPECT_TRUE(annotations_of(methods_only).read_only);

  for (FsMode mode : {FsMode::write, FsMode::readwrite}) {
    Policy writes;
    writes.fs.mode = mode;
    EXPECT_FALSE(annotations_of(writes).read_only);
    EXPECT_TRUE(annotations_of(writes).destructive);
    EXPECT_FALSE(annotations_of(writes).open_world);
  }
}

TEST(McpTools, ConventionalNames) {
  EXPECT_TRUE(conventional_tool_name("notes__add_note"));
  EXPECT_TRUE(conventional_tool_name("a.b-c_D9"));
  EXPECT_FALSE(conventional_tool_name(""));
  EXPECT_FALSE(conventional_tool_name("has space"));
  EXPECT_FALSE(conventional_tool_name("slash/name"));
  EXPECT_FALSE(conventional_tool_name(std::string(129, 'a')));
}

}  // namespace
}  // namespace skillbox::mcp
