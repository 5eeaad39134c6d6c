// `skillbox test` as a user runs it, in the suite's isolation mode: a workspace seeded per test and
// checked afterwards, fixtures that match a request's headers and body (and say which came closest when
// none did), the --json and --junit reports, and failure messages that name the URL the skill called,
// never the loopback address of the fixture server standing in for it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliExec;
using testing::read_bytes;
using testing::write_bytes;

class TestCommand : public ::testing::Test {
 protected:
  /// `skillbox test DIR ARGS...` in the suite's isolation mode, with a data directory of the test's own
  /// as $SKILLBOX_HOME, so a run can be checked to leave it alone.
  CliExec test(const fs::path& dir, std::vector<std::string> args = {}) const {
    args.insert(args.begin(),
                {"test", dir.string(),
                 std::string("--isolation=") + (testing::process_isolation() ? "process" : "inprocess")});
    return testing::run_cli(
        args, {.cwd = {}, .env = {"SKILLBOX_HOME=" + home().string()}, .input = "", .timeout_s = 120});
  }
  fs::path home() const { return tmp_.path() / "home"; }
  fs::path at(const std::string& name) const { return tmp_.path() / name; }

  fs::path skill(const std::string& name, const json& manifest, const std::string& code,
                 const json& tests) const {
    const fs::path dir = at(name);
    fs::create_directories(dir);
    write_bytes(dir / "skill.json", manifest.dump());
    write_bytes(dir / "index.js", code);
    write_bytes(dir / "skill.test.json", tests.dump(2));
    return dir;
  }

  testing::TempDir tmp_;
};

const char* const kNotes = R"(
  export default async () => {
    const text = await openhuman.fs.readFile('notes/a.txt');
    await openhuman.fs.mkdir('out', { recursive: true });
    await openhuman.fs.writeFile('out/upper.txt', text.toUpperCase());
    await openhuman.fs.writeFile('out/data.json', JSON.stringify({ n: text.length, list: [1, 2] }, null, 2));
    if (await openhuman.fs.exists('gone.txt')) await openhuman.fs.remove('gone.txt');
    return text;
  }
)";

json notes_manifest(const char* mode = "readwrite") {
  return {{"id", "notes"}, {"entry", "index.js"}, {"permissions", {{"fs", {{"mode", mode}}}}}};
}

TEST_F(TestCommand, SeedsEachTestsWorkspaceAndChecksItAfterwards) {
  const json tests = json::parse(R"({"tests": [
    {"name": "seeded",
     "workspace": {"notes/a.txt": "hello", "gone.txt": "x"},
     "expect": {"value": "hello",
                "workspace": {"out/upper.txt": "HELLO", "out/data.json": {"list": [1, 2], "n": 5},
                              "notes/./a.txt": "hello", "gone.txt": null}}},
    {"name": "wrong expectations",
     "workspace": {"notes/a.txt": "hello", "gone.txt": "x"},
     "expect": {"value": "hello",
                "workspace": {"out/upper.txt": "hello", "out/data.json": {"n": 6}, "notes/a.txt": null,
                              "missing.txt": "x", "out": "a folder"}}},
    {"name": "nothing seeded",
     "expect": {"error": {"name": "NotFound"}, "workspace": {"out/upper.txt": null}}}
  ]})");
  const fs::path dir = skill("notes", notes_manifest(), kNotes, tests);
  const CliExec r = test(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok    seeded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok    nothing seeded"), std::string::npos)
      << "each test starts with an empty workspace: the first test's files are gone\n"
      << r.out;
  EXPECT_NE(r.out.find("FAIL  wrong expectations"), std::string::npos) << r.out;
  for (const char* want : {
           R"(workspace: out/upper.txt: expected "hello", got "HELLO")",
           R"(workspace: out/data.json: expected JSON {"n":6}, got {"list":[1,2],"n":5})",
           R"(workspace: notes/a.txt: expected no such file, but it exists)",
           R"(workspace: missing.txt: expected "x", but the file does not exist)",
           R"(workspace: out: expected "a folder", but it cannot be read:)",
       })
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  EXPECT_NE(r.out.find("3 tests: 2 passed, 1 failed"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(home() / "skills")) << "the user's data directory gets no workspace";

  // A skill that may only read its workspace reads what the test put there.
  const fs::path reader =
      skill("reader", notes_manifest("read"), "export default () => openhuman.fs.readFile('notes/a.txt')",
            json::parse(R"({"tests": [{"name": "reads", "workspace": {"notes/a.txt": "seeded"},
                                       "expect": {"value": "seeded"}}]})"));
  const CliExec read = test(reader);
  EXPECT_EQ(read.exit_code, 0) << read.out << read.err;
}

TEST_F(TestCommand, RefusesWorkspacePathsTheSkillCouldNotUseAndAWorkspaceWithoutFs) {
  const json tests = json::parse(R"({"tests": [
    {"name": "bad paths",
     "workspace": {"../outside.txt": "x", "/etc/passwd": "x", "a/../../b": "x", ".": "x", "a.txt": "1",
                   "./a.txt": "2", "seed-null.txt": null},
     "expect": {"workspace": {"../../etc/shadow": null}}}
  ]})");
  const fs::path dir = skill("bad-paths", notes_manifest(), kNotes, tests);
  const CliExec r = test(dir);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (
      const char* want : {
          R"(tests[0].workspace["../outside.txt"]: path leaves the workspace)",
          R"(tests[0].workspace["/etc/passwd"]: absolute paths leave the workspace)",
          R"(tests[0].workspace["a/../../b"]: path leaves the workspace)",
          R"(tests[0].workspace["."]: names the workspace itself, not a file in it)",
          R"(tests[0].workspace["a.txt"]: names the same file as "./a.txt")",
          R"(tests[0].workspace["seed-null.txt"]: null means "must not exist", which only expect.workspace can say)",
          R"(tests[0].expect.workspace["../../etc/shadow"]: path leaves the workspace)",
      })
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << "no test runs from a file with problems: " << r.out;

  const fs::path no_fs = skill("no-fs", {{"id", "no-fs"}, {"entry", "index.js"}}, "export default () => 1",
                               json::parse(R"({"tests": [{"name": "seeds", "workspace": {"a.txt": "x"},
                                                          "expect": {"workspace": {"b.txt": null}}}]})"));
  const CliExec refused = test(no_fs);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("tests[0].workspace: the skill has no workspace: skill.json does not grant fs "
                             "(permissions.fs.mode is \"none\")"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("tests[0].expect.workspace: the skill has no workspace"), std::string::npos)
      << refused.err;
}

const char* const kPoster = R"(
  export default async ({ qty, form }) => {
    const headers = { 'X-Api-Key': env.get('API_KEY') ?? 'none', 'Content-Type': 'application/json' };
    const r = form === undefined
      ? await openhuman.http.post('https://api.example.com/v1/items', JSON.stringify({ qty, name: 'pen' }), { headers })
      : await openhuman.http.post('https://api.example.com/v1/form', form);
    return { status: r.status, body: r.body, url: r.url };
  }
)";

TEST_F(TestCommand, FixturesMatchHeadersAndBodyAndAMissNamesTheClosestFixture) {
  const json manifest = {{"id", "poster"},
                         {"entry", "index.js"},
                         {"permissions",
                          {{"env", json::array({"API_KEY"})},
                           {"http",
                            {{"allow", json::array({"https://api.example.com/v1/"})},
                             {"methods", json::array({"GET", "POST"})}}}}}};
  const json fixtures = json::parse(R"([
    {"method": "GET", "url": "https://api.example.com/v1/items", "body": "the list"},
    {"method": "POST", "url": "https://api.example.com/v1/items",
     "request": {"headers": {"x-api-key": "k-123"}, "json": {"name": "pen", "qty": 2}},
     "status": 201, "body": "created"},
    {"method": "POST", "url": "https://api.example.com/v1/form", "request": {"body": "a=1&b=2"}, "body": "form ok"}
  ])");
  json tests = json::parse(R"({"tests": [
    {"name": "matches", "env": {"API_KEY": "k-123"}, "input": {"qty": 2},
     "expect": {"value": {"status": 201, "body": "created", "url": "https://api.example.com/v1/items"}}},
    {"name": "text body", "input": {"form": "a=1&b=2"},
     "expect": {"value": {"status": 200, "body": "form ok", "url": "https://api.example.com/v1/form"}}},
    {"name": "wrong key and body", "env": {"API_KEY": "k-999"}, "input": {"qty": 3},
     "expect": {"value": {"status": 201, "body": "created", "url": "https://api.example.com/v1/items"}}}
  ]})");
  for (json& t : tests["tests"]) t["http"] = fixtures;
  const fs::path dir = skill("poster", manifest, kPoster, tests);
  const CliExec r = test(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok    matches"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok    text body"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  wrong key and body"), std::string::npos) << r.out;
  EXPECT_NE(
      r.out.find(
          "http: no fixture for POST https://api.example.com/v1/items (it was answered 404); "
          "the closest, http[1] POST https://api.example.com/v1/items, differs in:\n"
          "        header x-api-key: expected \"k-123\", got \"k-999\"\n"
          "        body: expected JSON {\"name\":\"pen\",\"qty\":2}, got {\"name\":\"pen\",\"qty\":3}\n"),
      std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("127.0.0.1"), std::string::npos) << "the fixture server's address is never shown\n"
                                                        << r.out;
}

TEST_F(TestCommand, FailuresNameTheUrlTheSkillCalledNeverTheFixtureServer) {
  const json manifest = {{"id", "fetch"},
                         {"entry", "index.js"},
                         {"permissions", {{"http", {{"allow", json::array({"https://api.example.com/"})}}}}}};
  const std::string code = R"(
    export default async ({ path }) => {
      try {
        const r = await openhuman.http.get('https://api.example.com' + path, { responseType: 'json' });
        log('fetched ' + r.url);
        return r.body;
      } catch (e) {
        log('failed: ' + e.message);
        throw e;
      }
    }
  )";
  const json tests = json::parse(R"({"tests": [
    {"name": "answered", "input": {"path": "/v1/x?a=1"},
     "http": [{"url": "https://api.example.com/v1/x?a=1", "body": {"ok": true}}],
     "expect": {"value": {"ok": true}, "logs": ["fetched https://api.example.com/v1/x?a=1"]}},
    {"name": "unanswered", "input": {"path": "/v1/other"},
     "http": [{"url": "https://api.example.com/v1/x", "body": {"ok": true}}]}
  ]})");
  const fs::path dir = skill("fetch", manifest, code, tests);
  const CliExec r = test(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok    answered"), std::string::npos) << "the skill sees the URL it asked for\n"
                                                             << r.out;
  // The 404 the fixture server answered is not JSON: the skill's error, its log line and the miss all
  // name the URL the skill asked for.
  EXPECT_NE(
      r.out.find("the response from https://api.example.com/v1/other (HTTP 404 Not Found) is not valid JSON"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[info] failed: openhuman.http: the response from https://api.example.com/v1/other"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("http: no fixture for GET https://api.example.com/v1/other"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("127.0.0.1"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("127.0.0.1"), std::string::npos) << r.err;
}

TEST_F(TestCommand, JsonAndJunitReportEveryTestWhateverItsName) {
  const std::string hostile = std::string("<b>&amp; \"q\" 'a' \x01\x1b[31m") + "\n]]>";
  const json tests = {
      {"tests",
       {{{"name", "passes"}, {"expect", {{"value", 2}}}}, {{"name", hostile}, {"expect", {{"value", 3}}}}}}};
  const fs::path dir =
      skill("reports", {{"id", "reports"}, {"entry", "index.js"}}, "export default () => 2", tests);
  const fs::path junit = at("report.xml");
  const CliExec r = test(dir, {"--json", "--junit", junit.string()});
  EXPECT_EQ(r.exit_code, 1) << "exit codes are those of the human output\n" << r.out << r.err;

  const json doc = json::parse(r.out);  // the whole of stdout is one JSON document
  EXPECT_EQ(doc["skill"], "reports");
  EXPECT_EQ(doc["file"], "skill.test.json");
  ASSERT_EQ(doc["tests"].size(), 2u) << doc;
  EXPECT_EQ(doc["tests"][0]["name"], "passes");
  EXPECT_EQ(doc["tests"][0]["status"], "pass");
  EXPECT_TRUE(doc["tests"][0]["failure"].is_null());
  EXPECT_TRUE(doc["tests"][0]["duration_ms"].is_number_integer());
  EXPECT_EQ(doc["tests"][1]["name"], hostile);
  EXPECT_EQ(doc["tests"][1]["status"], "fail");
  EXPECT_EQ(doc["tests"][1]["failure"], "value: expected 3, got 2");
  EXPECT_EQ(doc["totals"]["tests"], 2);
  EXPECT_EQ(doc["totals"]["passed"], 1);
  EXPECT_EQ(doc["totals"]["failed"], 1);
  EXPECT_EQ(doc["cancelled"], false);

  const std::string xml = read_bytes(junit);
  EXPECT_NE(xml.find("<testsuite name=\"reports\" tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"passes\" classname=\"reports\""), std::string::npos) << xml;
  EXPECT_NE(
      xml.find("<testcase name=\"&lt;b&gt;&amp;amp; &quot;q&quot; &apos;a&apos; \\x01\\x1b[31m&#10;]]&gt;\""),
      std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"value: expected 3, got 2\" type=\"failed\">"), std::string::npos)
      << xml;
  for (const char c : xml)
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n')
        << "a raw control character in the report";

  // A report that cannot be written is said before any test runs.
  const CliExec nowhere = test(dir, {"--junit", (at("no-such-folder") / "r.xml").string()});
  EXPECT_EQ(nowhere.exit_code, 2) << nowhere.out << nowhere.err;
  EXPECT_NE(nowhere.err.find("--junit"), std::string::npos) << nowhere.err;
  EXPECT_NE(nowhere.err.find("cannot write it"), std::string::npos) << nowhere.err;
  EXPECT_TRUE(nowhere.out.empty()) << nowhere.out;

  const CliExec passing = test(dir, {"--json", "--filter", "passes"});
  EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err;
  EXPECT_EQ(json::parse(passing.out)["totals"]["passed"], 1);
}

// An unexpected error shows where it was thrown, under its outcome line, in every report.
TEST_F(TestCommand, AnUnexpectedErrorShowsWhereItWasThrown) {
  const fs::path dir =
      skill("thrower", {{"id", "thrower"}, {"entry", "index.js"}},
            "\n\nfunction greet(name) {\n  throw new RangeError('no ' + name);\n}\n"
            "export default (input) => greet(input.name);\n",
            {{"tests", {{{"name", "greets"}, {"input", {{"name", "Bob"}}}, {"expect", {{"value", 1}}}}}}});
  CliExec r = test(dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string shown = r.out + r.err;
  const size_t outcome = shown.find("outcome: expected ok, got error (RangeError: no Bob)");
  ASSERT_NE(outcome, std::string::npos) << shown;
  EXPECT_NE(shown.find("\n        at greet (index.js:4)\n", outcome), std::string::npos) << shown;
  r = test(dir, {"--json"});
  const json report = json::parse(r.out);
  EXPECT_NE(report["tests"][0]["failure"].get<std::string>().find("\n  at greet (index.js:4)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace skillbox
