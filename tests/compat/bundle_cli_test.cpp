// `skillbox tools|call|hook|check` on OpenHuman bundles, end to end through the binary, on the bundles
// the build made from their TypeScript sources, in the suite's isolation mode.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::Bundle;

struct Exec {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the skillbox binary with `args`; stdin from `input`; output through files in `tmp`.
Exec skillbox(const std::vector<std::string>& args, const fs::path& tmp, const std::string& input = "") {
  const fs::path in = tmp / "stdin", out = tmp / "stdout", err = tmp / "stderr";
  { std::ofstream(in, std::ios::binary) << input; }
  std::vector<std::string> storage = {SKILLBOX_CLI_PATH};
  storage.insert(storage.end(), args.begin(), args.end());
  // The commands that run the bundle run it in the suite's isolation mode (the CLI's default is
  // process isolation).
  if (!args.empty() && (args[0] == "tools" || args[0] == "call" || args[0] == "hook"))
    storage.push_back(std::string("--isolation=") + (testing::process_isolation() ? "process" : "inprocess"));
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int i = ::open(in.c_str(), O_RDONLY), o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600),
              e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(i, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
}

TEST(BundleCli, ToolsListsNamesDescriptionsAndSchemas) {
  Bundle b("notes", "");
  Exec r = skillbox({"tools", b.dir().string(), "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("add_note\n  Adds a note inside an open transaction"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input {\"type\":\"object\""), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "") << "a listing that worked is just the list";
  r = skillbox({"tools", b.dir().string(), "--json", "--data-dir", b.data().string()}, b.root());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "ok");
  EXPECT_EQ(j["value"][0]["name"], "add_note");
}

TEST(BundleCli, CallRunsAToolWithInputAndSequencesFromStdin) {
  testing::HttpTestServer server;
  Bundle b("notes", testing::grants({server.origin()}));
  Exec r = skillbox({"call", b.dir().string(), "fetch_title", "--input",
                     json({{"url", server.url("/plain")}}).dump(), "--data-dir", b.data().string()},
                    b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hello from the test server"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"is_error\": false"), std::string::npos) << r.out;

  const std::string seq = R"([{"tool": "bump"}, {"hook": "onRpc", "args": {"method": "m", "params": null}}])";
  r = skillbox({"call", b.dir().string(), "--sequence", "-", "--json", "--data-dir", b.data().string()},
               b.root(), seq);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["value"][0]["content"][0]["text"], "1");
  EXPECT_EQ(j["value"][1]["method"], "m");
  ASSERT_TRUE(j.contains("events"));
  EXPECT_EQ(j["events"][0]["type"], "notify");
  EXPECT_EQ(j["events"][0]["data"]["title"], "Counter");
}

TEST(BundleCli, HookAndExitCodes) {
  Bundle b("misbehave", testing::grants({}, json::object(), {{"timeout_ms", 500}}));
  Exec r = skillbox({"hook", b.dir().string(), "onSync", "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("null"), std::string::npos) << r.out;
  r = skillbox({"call", b.dir().string(), "throws", "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("RangeError: bad input: 42"), std::string::npos) << r.err;
  r = skillbox({"call", b.dir().string(), "spin", "--data-dir", b.data().string(), "--steps", "100000"},
               b.root());
  EXPECT_TRUE(r.exit_code == 11 || r.exit_code == 12) << r.exit_code << r.err;
  r = skillbox({"call", b.dir().string(), "x", "--input", "{bad", "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--input: not valid JSON"), std::string::npos) << r.err;
}

TEST(BundleCli, AFailingToolShowsItsToolResultBesideTheError) {
  Bundle b("misbehave", "");
  Exec r =
      skillbox({"call", b.dir().string(), "throws", "--json", "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "error");
  EXPECT_EQ(j["error"]["name"], "RangeError");
  EXPECT_EQ(j["error"]["message"], "bad input: 42");
  EXPECT_EQ(j["value"], json({{"content", json::array({{{"type", "text"}, {"text", "bad input: 42"}}})},
                              {"is_error", true}}));
  // Human output: the ToolResult on stdout like any result, the error and the outcome on stderr.
  r = skillbox({"call", b.dir().string(), "throws", "--data-dir", b.data().string()}, b.root());
  EXPECT_EQ(r.exit_code, 1);
  const json shown = json::parse(r.out);
  EXPECT_EQ(shown["is_error"], true) << r.out;
  EXPECT_EQ(shown["content"][0]["text"], "bad input: 42");
  EXPECT_NE(r.err.find("error: RangeError: bad input: 42"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("outcome: error (exit 1)"), std::string::npos) << r.err;
}

TEST(BundleCli, CredentialsComeFromTheOperatorsFile) {
  testing::HttpTestServer api;
  Bundle b("notion-lite", testing::grants({api.origin()}));
  const fs::path creds = b.root() / "credentials.json";
  std::ofstream(creds) << json({{"notion-lite",
                                 {{"auth",
                                   {{"mode", "self_hosted"},
                                    {"credentials", {{"api_token", "secret_FROM_FILE_77"}}},
                                    {"hosts", {api.origin() + "/"}}}}}}})
                              .dump();
  Exec r = skillbox({"call", b.dir().string(), "search", "--input", json({{"base", api.origin()}}).dump(),
                     "--credentials", creds.string(), "--data-dir", b.data().string()},
                    b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ((r.out + r.err).find("secret_FROM_FILE_77"), std::string::npos);
  ASSERT_EQ(api.recorded().size(), 1u);
  bool real = false;
  const auto seen = api.recorded();  // a copy: the loop must not run over a destroyed temporary
  for (const auto& [n, v] : seen[0].headers) real = real || v == "Bearer secret_FROM_FILE_77";
  EXPECT_TRUE(real);
  std::ofstream(creds) << R"({"notion-lite": {"auth": {"mode": 1}}})";
  r = skillbox({"call", b.dir().string(), "search", "--credentials", creds.string()}, b.root());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--credentials: credentials file: notion-lite.auth.mode: expected a string"),
            std::string::npos)
      << r.err;
}

TEST(BundleCli, CheckShowsTheFormatToolsEnvSetupAndIgnoredKeys) {
  Bundle b("notes", "");
  Exec r = skillbox({"check", b.dir().string()}, b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OpenHuman bundle (manifest.json)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("granted by   nothing"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tools        8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("env asked    NOTES_REGION (not granted)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("manifest.json: x_marketplace_color: unknown key, ignored"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("onSetupSubmit"), std::string::npos) << r.out;
  Bundle n("notion-lite", "");
  r = skillbox({"check", n.dir().string(), "--json"}, n.root());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["bundle"]["format"], "openhuman");
  EXPECT_EQ(j["bundle"]["setup"]["modes"][0]["fields"][0], "api_token");
  n.write("manifest.json", R"({"id": "x", "memory_limit_mb": 0})");
  r = skillbox({"check", n.dir().string()}, n.root());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("manifest.json: memory_limit_mb: expected an integer from 1 to 4096, got 0"),
            std::string::npos)
      << r.err;
}

/// Every entry below `dir` (empty when it does not exist).
std::vector<std::string> entries_below(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    out.push_back(it->path().string());
  }
  return out;
}

TEST(BundleCli, TheDatabaseWritesNoTemporaryFiles) {
  // Sorts larger than SQLite's cache and UNION recursions used to spill to $TMPDIR (/var/tmp): GiBs
  // against a 4 MiB quota. They stay in memory now, within limits.memory_mb.
  Bundle b("notes", testing::grants({}, {{"db", {{"quota_bytes", 1 << 20}}}},
                                    {{"timeout_ms", 20000}, {"memory_mb", 64}}));
  b.write("index.js", R"JS(
const caught = (f) => { try { return f(); } catch (e) { return e.name; } };
globalThis.__skill = { default: { tools: [{ name: "t", description: "d", execute() {
  return [
    caught(() => db.get("SELECT count(*) AS n FROM (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT 100000) SELECT randomblob(100) AS b FROM r ORDER BY b)").n),
    caught(() => db.get("WITH RECURSIVE r(x) AS (SELECT 1 UNION SELECT x + 1 FROM r) SELECT count(*) AS n FROM r")),
    caught(() => db.exec("CREATE TEMP TABLE t AS SELECT 1 AS x")),
  ]; } }] } };
)JS");
  const fs::path tmpdir = b.root() / "tmpdir";
  fs::create_directories(tmpdir);
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old == nullptr ? "" : old;
  ::setenv("TMPDIR", tmpdir.c_str(), 1);
  const Exec r =
      skillbox({"call", b.dir().string(), "t", "--json", "--data-dir", b.data().string()}, b.root());
  if (old == nullptr)
    ::unsetenv("TMPDIR");
  else
    ::setenv("TMPDIR", saved.c_str(), 1);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json v = json::parse(json::parse(r.out)["value"]["content"][0]["text"].get<std::string>());
  EXPECT_EQ(v[0], 100000) << "a 10 MB sort spills in memory and completes: " << v;
  EXPECT_TRUE(v[1] == "PayloadTooLarge" || v[1] == "Timeout") << v;
  EXPECT_EQ(v[2], "PermissionDenied") << v;
  EXPECT_EQ(entries_below(tmpdir), std::vector<std::string>{}) << "nothing in $TMPDIR";
}

TEST(BundleCli, CheckAndToolsLeaveTheDataDirectoryUntouched) {
  // Listing the tools runs the bundle's top-level code; this one opens its database there.
  Bundle b("notes", testing::grants({}, {{"db", {{"quota_bytes", 1 << 20}}}}));
  b.write("index.js", R"JS(
db.exec("CREATE TABLE IF NOT EXISTS seen (at TEXT)");
db.exec("INSERT INTO seen VALUES ('top level')");
state.set("listed", true);
globalThis.__skill = { default: { tools: [{ name: "t", description: "d", execute() { return 1; } }] } };
)JS");
  const fs::path home = b.root() / "home";
  const fs::path data = b.root() / "explicit-data";
  fs::create_directories(home);
  // `check` takes no --data-dir: the default data directory comes from SKILLBOX_HOME.
  const char* old_home = std::getenv("SKILLBOX_HOME");
  const std::string saved = old_home == nullptr ? "" : old_home;
  ::setenv("SKILLBOX_HOME", home.c_str(), 1);
  Exec r = skillbox({"check", b.dir().string()}, b.root());
  if (old_home == nullptr)
    ::unsetenv("SKILLBOX_HOME");
  else
    ::setenv("SKILLBOX_HOME", saved.c_str(), 1);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("tools        1"), std::string::npos) << r.out << r.err;
  r = skillbox({"tools", b.dir().string(), "--data-dir", data.string()}, b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("t\n  d\n"), std::string::npos) << r.out;
  EXPECT_EQ(entries_below(home), std::vector<std::string>{}) << "no binding, no db.sqlite, no store";
  EXPECT_EQ(entries_below(data), std::vector<std::string>{});
  // A real call does use the data directory.
  r = skillbox({"call", b.dir().string(), "t", "--data-dir", data.string()}, b.root());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(data / "skills" / "notes" / "db.sqlite"));
}

}  // namespace
}  // namespace skillbox
