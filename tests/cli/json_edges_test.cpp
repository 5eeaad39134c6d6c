// JSON at the edges, end to end through the `skillbox` binary in the suite's isolation mode: every
// string the engine can produce (lone and paired surrogates) comes back in valid `--json` output with
// the outcome's exit code, never `internal`; text nested far deeper than any tree skillbox builds (a
// db row, an event, a result) neither crashes the host nor makes the human output explode.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "base/sanitizer.h"
#include "cli/report.h"
#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/json.h"
#include "support/cli_exec.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
namespace jt = base::json_text;
using nlohmann::json;
using testing::CliExec;

std::string isolation_flag() {
  return std::string("--isolation=") + (testing::process_isolation() ? "process" : "inprocess");
}

/// A plain skill in a temp folder, with a data directory of its own beside it.
class Folder {
 public:
  explicit Folder(const std::string& source, const std::string& permissions = "{}",
                  const std::string& limits = "{}") {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-json-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
    fs::create_directories(root_ / "skill");
    std::ofstream(root_ / "skill" / "skill.json")
        << R"({"id": "json-edges", "name": "J", "version": "1.0.0", "entry": "index.js", "permissions": )"
        << permissions << R"(, "limits": )" << limits << "}";
    std::ofstream(root_ / "skill" / "index.js") << source;
  }
  ~Folder() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;

  void write(const std::string& name, const std::string& content) const {
    std::ofstream(root_ / "skill" / name) << content;
  }
  [[nodiscard]] CliExec test() const {
    return testing::run_cli({"test", (root_ / "skill").string(), isolation_flag()});
  }

  [[nodiscard]] CliExec run(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"run", (root_ / "skill").string(), "--data-dir",
                                     (root_ / "data").string(), isolation_flag()};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::run_cli(args);
  }

 private:
  fs::path root_;
};

/// `skillbox call|tools|check` on a bundle (the notes example with `index_js` as its code).
CliExec bundle_cli(const testing::Bundle& b, std::vector<std::string> args) {
  args.insert(args.begin() + 1, b.dir().string());
  if (args[0] != "check") args.insert(args.end(), {"--data-dir", b.data().string(), isolation_flag()});
  // check has no --data-dir: the bundle's own data directory keeps its id binding out of the suite's.
  testing::CliOptions options;
  options.env = {"SKILLBOX_HOME=" + b.data().string()};
  return testing::run_cli(args, options);
}

std::string bundle_source(const std::string& top_level, const std::string& execute_body) {
  return "var __skill_bundle = (() => {\n" + top_level +
         "\n  const skill = { tools: [{ name: 't', async execute(args) {\n" + execute_body +
         "\n  } }] };\n  return { default: skill };\n})();\nglobalThis.__skill = { default: "
         "__skill_bundle.default };\n";
}

/// The `--json` output: one line of valid JSON text (lone-surrogate escapes allowed), as a tree.
json json_output(const CliExec& r) {
  EXPECT_FALSE(r.out.empty()) << r.err;
  EXPECT_EQ(r.out.back(), '\n');
  const std::string line = r.out.substr(0, r.out.size() - (r.out.empty() ? 0 : 1));
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(jt::check(line).kind, jt::Kind::object) << line;
  for (const char c : line) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << "--json is ASCII: " << line;
  return jt::parse(line, jt::kNoDepthLimit);
}

/// A surrogate case: the JS string literal, its escape in ASCII JSON, and the WTF-8 bytes of the string.
struct Case {
  std::string js;
  std::string escaped;
  std::string bytes;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {R"('\ud800')", R"(\ud800)", "\xed\xa0\x80"},
      {R"('\udfff')", R"(\udfff)", "\xed\xbf\xbf"},
      {R"('a\ud800b')", R"(a\ud800b)",
       "a\xed\xa0\x80"
       "b"},
      {R"('\ud83d\ude00')", R"(\ud83d\ude00)", "\xf0\x9f\x98\x80"},
  };
  return all;
}

TEST(JsonEdgesCli, SurrogatesInResultsAndKeysComeBackAsWrittenInBothOutputs) {
  for (const Case& c : cases()) {
    Folder f("export default () => ({ a: " + c.js + ", [" + c.js + "]: [" + c.js + "] });");
    CliExec r = f.run({"--json"});
    ASSERT_EQ(r.exit_code, 0) << c.js << "\n" << r.out << r.err;
    const json out = json_output(r);
    EXPECT_EQ(out["outcome"], "ok");
    EXPECT_EQ(out["value"]["a"], c.bytes) << c.js;
    EXPECT_EQ(out["value"][c.bytes], json::array({c.bytes})) << "as a key too: " << c.js;
    EXPECT_NE(r.out.find("\"a\":\"" + c.escaped + "\""), std::string::npos) << r.out;

    r = f.run({"--json-stream"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const size_t last = r.out.rfind('\n', r.out.size() - 2) + 1;  // the result line comes last
    EXPECT_EQ(r.out.substr(last).rfind(
                  "{\"type\":\"result\",\"outcome\":\"ok\",\"value\":{\"a\":\"" + c.escaped, 0),
              0u)
        << r.out;
    EXPECT_TRUE(jt::check(r.out.substr(last)).ok()) << r.out;

    r = f.run();  // human output: the value on stdout, valid JSON, the escape kept
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(jt::check(r.out).kind, jt::Kind::object) << r.out;
    if (c.bytes.find('\xed') != std::string::npos) {
      EXPECT_NE(r.out.find("\"a\": \"" + c.escaped + "\""), std::string::npos) << r.out;
    }
  }
}

TEST(JsonEdgesCli, SurrogatesInLogsErrorsAndStoreValuesKeepTheOutcomesExitCode) {
  for (const Case& c : cases()) {
    const bool lone = c.bytes.find('\xed') != std::string::npos;
    // A log line is text: a lone surrogate becomes U+FFFD there (docs/limits.md), never an error.
    Folder logs("export default () => { console.log(" + c.js + "); return 1; };");
    CliExec r = logs.run({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    json out = json_output(r);
    ASSERT_EQ(out["logs"].size(), 1u) << r.out;
    EXPECT_EQ(out["logs"][0]["message"].get<std::string>().find('\xed') == std::string::npos, true) << r.out;

    // An error's message: outcome error, exit 1, with the message readable.
    Folder error("export default () => { throw new Error('m:' + " + c.js + "); };");
    r = error.run({"--json"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    out = json_output(r);
    EXPECT_EQ(out["outcome"], "error");
    EXPECT_EQ(out["error"]["message"].get<std::string>().rfind("m:", 0), 0u) << r.out;

    // A store value holds the string as JSON.stringify wrote it and gives it back the same.
    Folder store("export default () => { store.set('k', { v: " + c.js + " }); return store.get('k'); };");
    r = store.run({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    out = json_output(r);
    EXPECT_EQ(out["value"]["v"], c.bytes) << r.out;
    if (lone) {
      EXPECT_NE(r.out.find("\"v\":\"" + c.escaped + "\""), std::string::npos) << r.out;
    }
  }
}

TEST(JsonEdgesCli, SurrogatesInHttpBodiesComeBackInTheResult) {
  testing::HttpTestServer server;
  const std::string permissions = R"({"http": {"allow": [")" + server.origin() +
                                  R"(/"], "methods": ["GET", "POST"], "allow_private_addresses": true}})";
  for (const Case& c : cases()) {
    // The response body is JSON text with the escape; the request body a string with the character.
    Folder f(
        "export default async () => {\n"
        "  const got = await openhuman.http.get('" +
            server.url("/text?body=") + "' + encodeURIComponent(JSON.stringify(" + c.js +
            ")));\n"
            "  const echo = await openhuman.http.post('" +
            server.url("/echo") + "', " + c.js +
            ");\n"
            "  return { got: JSON.parse(got.body), sent: JSON.parse(echo.body).body };\n};\n",
        permissions);
    const CliExec r = f.run({"--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const json out = json_output(r);
    EXPECT_EQ(out["value"]["got"], c.bytes) << r.out;
    // A request body is bytes: a lone surrogate is sent as U+FFFD (docs/http.md), a pair as itself.
    const bool lone = c.bytes.find('\xed') != std::string::npos;
    if (!lone) {
      EXPECT_EQ(out["value"]["sent"], c.bytes) << r.out;
    }
    if (lone) {
      EXPECT_NE(out["value"]["sent"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos);
    }
  }
}

TEST(JsonEdgesCli, SkillboxTestComparesValuesAndStoreEntriesHoldingLoneSurrogates) {
  // The input, the expected value and the store entries all hold the escapes, as a user would write
  // them (or paste them from `--json` output).
  Folder f(
      "export default (input) => { store.set('out', { s: input.s + '\\udfff' }); return { s: input.s }; };");
  f.write("skill.test.json", R"({"tests": [
    {"name": "same", "input": {"s": "\ud800"}, "store": {"in": "\udc00"},
     "expect": {"value": {"s": "\ud800"}, "store": {"in": "\udc00", "out": {"s": "\ud800\udfff"}}}},
    {"name": "differs", "input": {"s": "\ud800"},
     "expect": {"value": {"s": "\ud801"}}}
  ]})");
  const CliExec r = f.test();
  EXPECT_EQ(r.exit_code, 1) << "one test passes, one fails\n" << r.out << r.err;
  EXPECT_NE(r.out.find("ok    same"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("value: expected {\"s\":\"\\ud801\"}, got {\"s\":\"\\ud800\"}"), std::string::npos)
      << r.out;
}

TEST(JsonEdgesCli, ATwelveThousandDeepResultPrintsInBoundedSpace) {
  // The engine's own JSON.stringify recurses once per level: under ASan its frames are several times
  // larger, and 12,000 levels pass even a 4 MiB stack limit there. 3,000 still shows the bound.
  constexpr size_t kDepth = base::kSanitizerBuild ? 3000 : 12000;
  Folder f("export default () => { let v = 1; for (let i = 0; i < " + std::to_string(kDepth) +
               "; i++) v = [v]; return v; };",
           "{}", R"({"stack_kb": 4096, "memory_mb": 64})");
  CliExec r = f.run({"-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  // 24,001 bytes of JSON text: the first 64 levels are indented, the rest is on one line.
  EXPECT_LT(r.out.size(), 64u * 1024) << "before: 288 MB of indentation";
  const jt::Checked checked = jt::check(r.out);
  EXPECT_EQ(checked.kind, jt::Kind::array);
  EXPECT_EQ(checked.depth, kDepth);
  r = f.run({"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("\"value\":" + std::string(kDepth, '[') + "1" + std::string(kDepth, ']') + ","),
            std::string::npos);
}

// What a compromised worker can hand the supervisor: a result and an event nested a million and
// 200,000 levels deep. Printed (not parsed into a tree, not written recursively), in bounded space.
TEST(JsonEdgesReport, AMillionDeepValueAndA200000DeepEventFromAWorkerArePrintedNotCrashed) {
  RunResult r;
  r.outcome = Outcome::ok;
  r.value_json = std::string(1000000, '[') + std::string(1000000, ']');
  r.events.push_back({"notify", "{\"d\":" + std::string(200000, '[') + std::string(200000, ']') + "}"});
  r = cli::checked_result(r);
  ASSERT_EQ(r.outcome, Outcome::ok);
  const std::string line = to_json(r);
  EXPECT_EQ(jt::check(line).kind, jt::Kind::object);
  EXPECT_NE(line.find("\"value\":" + r.value_json + ","), std::string::npos);
  EXPECT_NE(line.find("\"data\":" + r.events[0].data_json + "}"), std::string::npos);
  EXPECT_EQ(to_json_stream_result(r), "{\"type\":\"result\"," + line.substr(1));
  const std::string human = cli::run_result_value(r);
  EXPECT_LT(human.size(), r.value_json.size() + 64 * 1024);
  EXPECT_EQ(jt::check(human).depth, 1000000u);
}

TEST(JsonEdgesBundle, SurrogatesInEventsAndDbRowsComeBackAsWritten) {
  for (const Case& c : cases()) {
    testing::Bundle b("notes", "");
    b.write("index.js",
            bundle_source("", "platform.notify(" + c.js + ", " + c.js +
                                  ");\n"
                                  "db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT)');\n"
                                  "db.exec('INSERT INTO t VALUES (?)', [" +
                                  c.js +
                                  "]);\n"
                                  "db.exec('INSERT INTO t VALUES (?)', [JSON.stringify({ j: " +
                                  c.js +
                                  " })]);\n"
                                  "const rows = db.all('SELECT v FROM t');\n"
                                  "return rows[0].v === " +
                                  c.js + " && rows[1].v.j === " + c.js + " ? 'same' : 'changed';"));
    const CliExec r = bundle_cli(b, {"call", "t", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const json out = json_output(r);
    EXPECT_EQ(out["value"]["content"][0]["text"], "same") << r.out;
    ASSERT_EQ(out["events"].size(), 1u) << r.out;
    EXPECT_EQ(out["events"][0]["data"]["title"], c.bytes) << r.out;
    EXPECT_NE(r.out.find("\"title\":\"" + c.escaped + "\""), std::string::npos) << r.out;
  }
}

const char* const kDeepSelect =
    "db.get(\"SELECT printf('%.*c', 100000, '[') || printf('%.*c', 100000, ']') AS s\")";

TEST(JsonEdgesDb, AHundredThousandDeepTextColumnStaysAString) {
  testing::Bundle b("notes", "");
  b.write("index.js", bundle_source("", std::string("const row = ") + kDeepSelect +
                                            ";\n"
                                            "const ok = db.get(\"SELECT '[[1]]' AS s\");\n"
                                            "return [typeof row.s, row.s.length, ok.s[0][0]].join(' ');"));
  const CliExec r = bundle_cli(b, {"call", "t", "--json"});
  ASSERT_EQ(r.exit_code, 0) << "before: SIGSEGV (139) in the host\n" << r.err.substr(0, 2000);
  const json out = json_output(r);
  EXPECT_EQ(out["value"]["content"][0]["text"], "string 200000 1") << r.out;
}

TEST(JsonEdgesDb, ListingToolsOfABundleThatReadsADeepRowAtLoadDoesNotCrash) {
  testing::Bundle b("notes", "");
  b.write("index.js", bundle_source(std::string("const row = ") + kDeepSelect + ";", "return row.s.length;"));
  CliExec r = bundle_cli(b, {"tools"});
  EXPECT_EQ(r.exit_code, 0) << "before: SIGSEGV (139)\n" << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("t\n"), std::string::npos) << r.out;
  r = bundle_cli(b, {"check"});
  EXPECT_EQ(r.exit_code, 0) << "before: SIGSEGV (139)\n" << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find("tools        1"), std::string::npos) << r.out;
}

TEST(JsonEdgesBundle, AnEventNestedDeeperThanTheLimitIsRefusedNotRecorded) {
  // A stack that holds JSON.stringify of 600 levels in every build (ASan's frames are larger).
  testing::Bundle b("notes", testing::grants({}, json::object(), {{"stack_kb", 4096}}));
  b.write("index.js",
          bundle_source("",
                        "let d = 1; for (let i = 0; i < 600; i++) d = [d];\n"
                        "try { memory.insert({ title: 't', content: 'c', d }); return 'accepted'; }\n"
                        "catch (e) { return e.name + ': ' + e.message; }"));
  const CliExec r = bundle_cli(b, {"call", "t", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json out = json_output(r);
  EXPECT_NE(out["value"]["content"][0]["text"].get<std::string>().find("nested deeper than 512 levels"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(out.contains("events")) << r.out;
}

}  // namespace
}  // namespace skillbox
