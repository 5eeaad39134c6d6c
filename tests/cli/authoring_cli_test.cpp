// Tests of `skillbox init` and `skillbox test`, run as a user runs them: a scaffold that runs and
// passes its own tests, never overwriting a file, and test files whose HTTP is answered by fixtures and
// never by the network.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::CliExec;
using testing::read_bytes;
using testing::run_cli;
using testing::write_bytes;

class AuthoringCli : public ::testing::Test {
 protected:
  /// Runs skillbox with SKILLBOX_HOME pointing at a data directory of the test's, so a test run can be
  /// checked to leave it alone.
  CliExec skillbox(const std::vector<std::string>& args, std::vector<std::string> env = {}) const {
    env.push_back("SKILLBOX_HOME=" + home().string());
    return run_cli(args, {.cwd = {}, .env = std::move(env), .input = "", .timeout_s = 120});
  }
  fs::path home() const { return tmp_.path() / "home"; }
  fs::path at(const std::string& name) const { return tmp_.path() / name; }

  /// A skill folder with `manifest` and `code` as index.js and `tests` as skill.test.json.
  fs::path skill(const std::string& name, const json& manifest, const std::string& code,
                 const json& tests) const {
    const fs::path dir = at(name);
    fs::create_directories(dir);
    write_bytes(dir / "skill.json", manifest.dump());
    write_bytes(dir / "index.js", code);
    write_bytes(dir / "skill.test.json", tests.dump(2));
    return dir;
  }

  /// `skillbox test DIR` passes the four tests `init` wrote, and a run greets Ada on her first visit.
  void expect_greeter_passes_and_runs(const fs::path& dir) const {
    const CliExec test = skillbox({"test", dir.string()});
    EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
    EXPECT_NE(test.out.find("4 tests: 4 passed, 0 failed"), std::string::npos) << test.out;

    const CliExec run = skillbox({"run", dir.string(), "--input", R"({"name": "Ada"})", "--json"});
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    EXPECT_EQ(json::parse(run.out)["value"], json::parse(R"({"greeting": "Hello, Ada!", "visits": 1})"));
  }

  testing::TempDir tmp_;
};

TEST_F(AuthoringCli, InitMakesASkillThatRunsAndPassesItsOwnTests) {
  const fs::path dir = at("My Greeter");
  const CliExec init = skillbox({"init", dir.string()});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  for (const char* f : {"skill.json", "index.js", "skill.test.json", "skillbox.d.ts"})
    EXPECT_TRUE(fs::is_regular_file(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "package.json")) << "plain JavaScript needs no build";
  const json manifest = json::parse(read_bytes(dir / "skill.json"));
  EXPECT_EQ(manifest["id"], "my-greeter") << "the id is made from the folder name";
  EXPECT_EQ(manifest["name"], "My greeter");
  EXPECT_NE(init.out.find("skillbox test"), std::string::npos) << "says what to do next: " << init.out;
  EXPECT_EQ(read_bytes(dir / "skillbox.d.ts"),
            read_bytes(fs::path(SKILLBOX_SOURCE_DIR) / "types/skillbox.d.ts"))
      << "the types are the ones of this skillbox";

  expect_greeter_passes_and_runs(dir);
}

TEST_F(AuthoringCli, InitNeverOverwritesAFile) {
  const fs::path dir = at("existing");
  fs::create_directories(dir);
  write_bytes(dir / "index.js", "keep me");
  const CliExec init = skillbox({"init", dir.string()});
  EXPECT_EQ(init.exit_code, 2);
  EXPECT_NE(init.err.find("index.js\" exists already"), std::string::npos) << init.err;
  EXPECT_EQ(read_bytes(dir / "index.js"), "keep me");
  EXPECT_FALSE(fs::exists(dir / "skill.json")) << "nothing is written when one file is in the way";

  write_bytes(at("a-file"), "x");
  const CliExec onto_file = skillbox({"init", at("a-file").string()});
  EXPECT_EQ(onto_file.exit_code, 2);
  EXPECT_NE(onto_file.err.find("is not a folder"), std::string::npos) << onto_file.err;
}

TEST_F(AuthoringCli, InitRefusesAnIdItCannotUse) {
  const CliExec from_folder = skillbox({"init", at("---").string()});
  EXPECT_EQ(from_folder.exit_code, 2);
  EXPECT_NE(from_folder.err.find("give one with --id"), std::string::npos) << from_folder.err;
  EXPECT_FALSE(fs::exists(at("---")));

  const CliExec bad = skillbox({"init", at("ok").string(), "--id", "Not Valid"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--id \"Not Valid\""), std::string::npos) << bad.err;

  const CliExec not_utf8 = skillbox({"init", at("bytes").string(), "--name", "\xff"});
  EXPECT_EQ(not_utf8.exit_code, 2);
  EXPECT_NE(not_utf8.err.find("--name: not valid UTF-8"), std::string::npos) << not_utf8.err;
  EXPECT_FALSE(fs::exists(at("bytes") / "skill.json"));

  // The next-step hints are commands to copy: a hostile folder name is one quoted shell word in them.
  const CliExec hostile = skillbox({"init", at("x$(touch PWNED) it's").string(), "--id", "hostile"});
  ASSERT_EQ(hostile.exit_code, 0) << hostile.err;
  EXPECT_NE(hostile.out.find("skillbox test '" + at("x$(touch PWNED) it").string() + "'\\''s'"),
            std::string::npos)
      << hostile.out;

  const CliExec named =
      skillbox({"init", at("named").string(), "--id", "weather.v2", "--name", "Say \"hi\""});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  const json manifest = json::parse(read_bytes(at("named") / "skill.json"));
  EXPECT_EQ(manifest["id"], "weather.v2");
  EXPECT_EQ(manifest["name"], "Say \"hi\"") << "the name is JSON-escaped into skill.json";
}

TEST_F(AuthoringCli, InitTsPinsItsBuildToolsAndPointsAtTheBuiltEntry) {
  const fs::path dir = at("tsskill");
  const CliExec init = skillbox({"init", dir.string(), "--ts"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  for (const char* f : {"skill.json", "index.ts", "package.json", "tsconfig.json", "skill.test.json",
                        "skillbox.d.ts", ".gitignore"})
    EXPECT_TRUE(fs::is_regular_file(dir / f)) << f;
  const json package = json::parse(read_bytes(dir / "package.json"));
  EXPECT_EQ(package["devDependencies"]["typescript"], "5.9.3") << "an exact version, no range";
  EXPECT_EQ(package["devDependencies"]["esbuild"], "0.28.2");
  EXPECT_NE(package["scripts"]["build"].get<std::string>().find("esbuild"), std::string::npos);
  // Errors of the built skill name index.ts and its lines (docs/cli.md "Source maps").
  EXPECT_NE(package["scripts"]["build"].get<std::string>().find("--sourcemap=inline"), std::string::npos);
  EXPECT_EQ(json::parse(read_bytes(dir / "skill.json"))["entry"], "dist/index.js");

  // Before the build, the entry is missing: the message says how to make it.
  const CliExec run = skillbox({"run", dir.string()});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("npm install && npm run build"), std::string::npos) << run.err;
}

// An index.ts edited after the last build: run and test say that they use the old build, and how to
// rebuild; once the build is newer they say nothing.
TEST_F(AuthoringCli, ARunOfAnOlderBuildThanItsTypeScriptSaysSo) {
  const fs::path dir = at("stale");
  ASSERT_EQ(skillbox({"init", dir.string(), "--ts"}).exit_code, 0);
  fs::create_directories(dir / "dist");
  write_bytes(dir / "dist/index.js", "export default () => ({ greeting: 'old', visits: 1 });\n");
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(dir / "dist/index.js", now - std::chrono::minutes(5));
  fs::last_write_time(dir / "index.ts", now - std::chrono::minutes(1));
  const std::string note =
      "index.ts changed after dist/index.js was built, so this run uses the old build: run `npm run build` "
      "first";
  CliExec r = skillbox({"run", dir.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: " + note), std::string::npos) << r.err;
  r = skillbox({"test", dir.string()});
  EXPECT_NE(r.err.find("note: " + note), std::string::npos) << r.err;
  fs::last_write_time(dir / "dist/index.js", now);
  r = skillbox({"run", dir.string()});
  EXPECT_EQ(r.err.find("note:"), std::string::npos) << r.err;
}

// After `npm install` the folder holds the build tools, megabytes of JavaScript the skill never imports:
// only the entry's module graph is read (runner/skill_reader.h), so they cost the skill nothing. The
// fake node_modules below holds more JavaScript than the skill's heap limit (32 MiB), which `check`
// could not compile and `run` should not even read.
TEST_F(AuthoringCli, InitTsAfterNpmInstallPassesCheckAndRunsWithoutReadingNodeModules) {
  const fs::path dir = at("tsnpm");
  ASSERT_EQ(skillbox({"init", dir.string(), "--ts"}).exit_code, 0);
  const auto put = [&](const fs::path& name, const std::string& bytes) {
    fs::create_directories((dir / name).parent_path());
    write_bytes(dir / name, bytes);
  };
  // What `npm run build` writes (esbuild, format esm), without npm or the network.
  put("dist/index.js",
      "// index.ts\n"
      "var greet = (input) => {\n"
      "  const name = input?.name ?? \"world\";\n"
      "  if (typeof name !== \"string\" || name.trim() === \"\") {\n"
      "    throw new TypeError(\"name: expected a non-empty string\");\n"
      "  }\n"
      "  const key = \"visits:\" + name.trim().toLowerCase();\n"
      "  const visits = store.increment(key);\n"
      "  log(`greeting ${name.trim()} (visit ${visits})`);\n"
      "  return { greeting: `Hello, ${name.trim()}!`, visits };\n"
      "};\n"
      "var index_default = greet;\n"
      "export {\n  index_default as default\n};\n");
  std::string big;
  for (int i = 0; big.size() < 9u * 1024 * 1024; ++i)
    big += "var v" + std::to_string(i) + " = [" + std::to_string(i) + "];\n";
  for (const char* f : {"typescript/lib/typescript.js", "typescript/lib/_tsc.js",
                        "typescript/lib/tsserver.js", "typescript/lib/typescriptServices.js"})
    put(fs::path("node_modules") / f, big);
  for (int i = 0; i < 200; ++i)
    put("node_modules/esbuild/lib/" + std::to_string(i) + ".js", "module.exports = {};\n");
  put("node_modules/.package-lock.json", "{}");

  const CliExec check = skillbox({"check", dir.string()});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("exports  default"), std::string::npos) << check.out;

  expect_greeter_passes_and_runs(dir);
}

// What `npm run build` writes with the template's --sourcemap=inline, built by hand (no npm): the error of
// a blank name names the template's index.ts and the line of its throw, on stderr and in --json.
TEST_F(AuthoringCli, InitTsErrorsNameTheLinesOfIndexTsThroughTheInlineSourceMap) {
  const fs::path dir = at("tsmap");
  ASSERT_EQ(skillbox({"init", dir.string(), "--ts"}).exit_code, 0);
  const std::string ts = read_bytes(dir / "index.ts");
  const size_t at_throw = ts.find("throw new TypeError('name: expected");
  ASSERT_NE(at_throw, std::string::npos);
  const auto throw_line =
      static_cast<int>(std::count(ts.begin(), ts.begin() + static_cast<long>(at_throw), '\n'));
  // Base64 VLQ and base64, from their descriptions (ECMA-426, RFC 4648).
  const std::string digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto vlq = [&](int v) {
    unsigned u = v < 0 ? (static_cast<unsigned>(-v) << 1) | 1 : static_cast<unsigned>(v) << 1;
    std::string out;
    do {
      unsigned d = u & 31;
      u >>= 5;
      out += digits[d | (u != 0 ? 32 : 0)];
    } while (u != 0);
    return out;
  };
  const auto base64 = [&](const std::string& in) {
    std::string out;
    for (size_t i = 0; i < in.size(); i += 3) {
      unsigned n = static_cast<unsigned char>(in[i]) << 16;
      if (i + 1 < in.size()) n |= static_cast<unsigned>(static_cast<unsigned char>(in[i + 1])) << 8;
      if (i + 2 < in.size()) n |= static_cast<unsigned char>(in[i + 2]);
      out += digits[(n >> 18) & 63];
      out += digits[(n >> 12) & 63];
      out += i + 1 < in.size() ? digits[(n >> 6) & 63] : '=';
      out += i + 2 < in.size() ? digits[n & 63] : '=';
    }
    return out;
  };
  // Generated line 5 (the throw) -> index.ts's throw line; nothing else is mapped.
  const std::string map = R"({"version":3,"sources":["../index.ts"],"names":[],"mappings":";;;;)" + vlq(0) +
                          vlq(0) + vlq(throw_line) + vlq(0) + R"("})";
  fs::create_directories(dir / "dist");
  write_bytes(dir / "dist/index.js",
              "// index.ts\n"
              "var greet = (input) => {\n"
              "  const name = input?.name ?? \"world\";\n"
              "  if (typeof name !== \"string\" || name.trim() === \"\") {\n"
              "    throw new TypeError(\"name: expected a non-empty string\");\n"
              "  }\n"
              "  return { greeting: `Hello, ${name.trim()}!`, visits: 0 };\n"
              "};\n"
              "var index_default = greet;\n"
              "export {\n  index_default as default\n};\n"
              "//# sourceMappingURL=data:application/json;base64," +
                  base64(map) + "\n");
  const std::string frame = "at greet (index.ts:" + std::to_string(throw_line + 1) + ")";
  CliExec r = skillbox({"run", dir.string(), "--input", R"({"name": " "})"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("error: TypeError: name: expected a non-empty string\n    " + frame + "\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("dist/index.js:5"), std::string::npos) << r.err;
  r = skillbox({"run", dir.string(), "--input", R"({"name": " "})", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json j = json::parse(r.out);
  EXPECT_NE(j["error"]["stack"].get<std::string>().find(frame), std::string::npos) << r.out;
}

TEST_F(AuthoringCli, TestReportsEveryWrongExpectationAndFailsTheCommand) {
  const fs::path dir = skill(
      "wrong", {{"id", "wrong"}, {"entry", "index.js"}},
      "export default (x) => { log('got ' + JSON.stringify(x)); return {n: x.n * 2} }\n"
      "export function boom() { throw new RangeError('too big') }\n",
      {{"tests",
        {{{"name", "doubles"}, {"input", {{"n", 2}}}, {"expect", {{"value", {{"n", 4}}}}}},
         {{"name", "wrong value"},
          {"input", {{"n", 2}}},
          {"expect", {{"value", {{"n", 5}}}, {"logs", json::array({"got {\"n\":2}", "never logged"})}}}},
         {{"name", "error name"},
          {"call", "boom"},
          {"expect", {{"error", {{"name", "TypeError"}, {"message", "too big"}}}}}},
         {{"name", "outcome"}, {"call", "boom"}}}}});
  const CliExec r = skillbox({"test", dir.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok    doubles"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL  wrong value"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("value: expected {\"n\":5}, got {\"n\":4}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("contains \"never logged\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error.name: expected TypeError, got RangeError"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outcome: expected ok, got error (RangeError: too big)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 tests: 1 passed, 3 failed"), std::string::npos) << r.out;

  const CliExec only = skillbox({"test", dir.string(), "--filter", "doubles", "--isolation", "inprocess"});
  EXPECT_EQ(only.exit_code, 0) << only.out << only.err;
  EXPECT_NE(only.out.find("1 test: 1 passed, 0 failed"), std::string::npos) << only.out;
}

TEST_F(AuthoringCli, TestAnswersHttpFromFixturesAndNeverFromTheNetwork) {
  // A listener the skill is allowed to reach (loopback, allow_private_addresses): the test has no
  // fixture for it, so the run must refuse the request before connecting.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string other = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  const json manifest = {{"id", "fetcher"},
                         {"entry", "index.js"},
                         {"permissions",
                          {{"http",
                            {{"allow", json::array({"https://localhost:8443/v1/", other + "/"})},
                             {"allow_private_addresses", true}}}}}};
  const std::string code = R"(
    export default async ({ url }) => {
      const r = await openhuman.http.get(url, { responseType: 'json' });
      return { status: r.status, body: r.body, type: r.headers['content-type'] ?? null };
    }
  )";
  const json tests = {
      {"tests",
       {{{"name", "fixture"},
         {"input", {{"url", "https://localhost:8443/v1/weather?city=Paris"}}},
         {"http",
          {{{"url", "https://localhost:8443/v1/weather?city=Paris"}, {"body", {{"temperature_c", 21}}}},
           {{"method", "POST"}, {"url", "https://localhost:8443/v1/weather?city=Paris"}, {"status", 500}}}},
         {"expect",
          {{"value", {{"status", 200}, {"body", {{"temperature_c", 21}}}, {"type", "application/json"}}}}}},
        {{"name", "no fixture for the path"},
         {"input", {{"url", "https://localhost:8443/v1/other"}}},
         {"http", {{{"url", "https://localhost:8443/v1/weather"}, {"body", "x"}}}},
         {"expect", {{"outcome", "error"}}}},
        {{"name", "another origin"},
         {"input", {{"url", other + "/x"}}},
         {"http", {{{"url", "https://localhost:8443/v1/weather"}, {"body", "x"}}}},
         {"expect", {{"error", {{"name", "PermissionDenied"}}}}}},
        {{"name", "no fixtures at all"},
         {"input", {{"url", other + "/x"}}},
         {"expect", {{"error", {{"name", "PermissionDenied"}}}}}}}}};
  const fs::path dir = skill("fetcher", manifest, code, tests);
  const CliExec r = skillbox({"test", dir.string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("ok    fixture"), std::string::npos) << r.out;
  // The unmatched request was answered 404 (the skill's json parse failed) and named.
  EXPECT_NE(r.out.find("FAIL  no fixture for the path"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("http: no fixture for GET https://localhost:8443/v1/other"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ok    another origin"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ok    no fixtures at all"), std::string::npos) << r.out;
  EXPECT_LT(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC), 0)
      << "nothing connected to the other origin";
  ::close(listener);
}

TEST_F(AuthoringCli, TestUsesAThrowawayDataDirectoryAndOnlyTheTestsEnv) {
  const json manifest = {{"id", "envy"},
                         {"entry", "index.js"},
                         {"permissions", {{"env", json::array({"API_KEY", "HOME_SECRET"})}}}};
  const std::string code = R"(
    export default () => {
      const runs = (store.get('runs') ?? 0) + 1;
      store.set('runs', runs);
      return { runs, key: env.get('API_KEY') ?? null, secret: env.get('HOME_SECRET') ?? null };
    }
  )";
  const json tests = {
      {"tests",
       {{{"name", "first"},
         {"env", {{"API_KEY", "test-key"}}},
         {"expect",
          {{"value", {{"runs", 1}, {"key", "test-key"}, {"secret", nullptr}}}, {"store", {{"runs", 1}}}}}},
        {{"name", "seeded"},
         {"store", {{"runs", 41}}},
         {"expect", {{"value", {{"runs", 42}, {"key", nullptr}, {"secret", nullptr}}}}}}}}};
  const fs::path dir = skill("envy", manifest, code, tests);
  const CliExec r =
      skillbox({"test", dir.string()}, {"HOME_SECRET=from-the-shell", "API_KEY=from-the-shell"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(fs::exists(home() / "store.sqlite")) << "the user's data directory is not touched";
}

TEST_F(AuthoringCli, SigtermCancelsTheRunningTestCleansUpAndStartsNoOther) {
  const json manifest = {{"id", "sleepy"}, {"entry", "index.js"}, {"limits", {{"timeout_ms", 60000}}}};
  const fs::path dir =
      skill("sleepy", manifest, "export default () => new Promise((r) => setTimeout(() => r(1), 30000))",
            json::parse(R"({"tests": [{"name": "first", "expect": {"value": 1}},
                                      {"name": "second", "expect": {"value": 1}}]})"));
  const fs::path tmp = at("tmp");
  fs::create_directories(tmp);
  // bash starts skillbox in the background and sends SIGTERM once the first test runs, which is when its
  // data directory appears (SIGINT would be ignored by a background job of a non-interactive shell).
  const std::string script =
      "\"$0\" test \"$1\" & pid=$!; until ls \"$TMPDIR\"/skillbox-test-* >/dev/null 2>&1; do sleep 0.05; "
      "done; "
      "sleep 0.2; kill -TERM $pid; wait $pid; echo exit=$?";
  const CliExec r =
      testing::run_program({"bash", "-c", script, SKILLBOX_CLI_PATH, dir.string()},
                           {.cwd = {},
                            .env = {"TMPDIR=" + tmp.string(), "SKILLBOX_HOME=" + home().string()},
                            .input = "",
                            .timeout_s = 60});
  EXPECT_NE(r.out.find("exit=130"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL  first"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("second"), std::string::npos) << "no test starts after the cancel: " << r.out;
  EXPECT_NE(r.err.find("cancelled after 1 test: 0 passed, 1 failed"), std::string::npos) << r.err;
  size_t left = 0;
  for (const auto& e : fs::directory_iterator(tmp))
    left += e.path().filename().string().starts_with("skillbox-test-");
  EXPECT_EQ(left, 0u) << "the test's data directory is removed";
}

TEST_F(AuthoringCli, TestRefusesABadTestFileNamingEveryProblem) {
  const fs::path dir = skill("bad", {{"id", "bad"}, {"entry", "index.js"}}, "export default () => 1",
                             json::parse(R"({"tests": [
                               {"name": "a", "expct": {}},
                               {"name": "a", "expect": {"outcome": "fine"}},
                               {"http": [{"url": "ftp://x/y"}]},
                               {"name": "redirect", "http": [{"url": "http://localhost:8080/a", "status": 302,
                                                              "headers": {"Location": "http://localhost:8080/b"}}]},
                               {"name": "interim", "http": [{"url": "http://localhost:8080/a", "status": 100}]},
                               {"name": "no content", "http": [{"url": "http://localhost:8080/a", "status": 204,
                                                                "body": "HTTP/1.1 302 Found"}]},
                               {"name": "key", "env": {"A\nskillbox: forged": 1}}
                             ]})"));
  const CliExec r = skillbox({"test", dir.string()});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (const char* want : {"tests[0].expct: unknown key", "tests[1].name: \"a\" names two tests",
                           "tests[1].expect.outcome: expected one of", "tests[2].name: missing",
                           "tests[2].http[0].url: expected an http:// or https:// URL",
                           "tests[3].http[0].headers.Location: redirects cannot be fixtures",
                           "tests[4].http[0].status: expected an HTTP status from 200 to 599",
                           "tests[5].http[0].body: a 204 response has no body",
                           "tests[6].env.A\\nskillbox: forged: expected a string value"})
    EXPECT_NE(r.err.find(want), std::string::npos) << want << "\n" << r.err;

  // A key cannot start a line of its own: every line on stderr is skillbox's, with the prefix.
  for (size_t at = 0; at < r.err.size();) {
    const size_t eol = std::min(r.err.find('\n', at), r.err.size());
    EXPECT_EQ(r.err.compare(at, 10, "skillbox: "), 0) << r.err.substr(at, eol - at);
    at = eol + 1;
  }
  EXPECT_EQ(r.err.find("\nskillbox: forged"), std::string::npos) << r.err;

  // Nesting deep enough to exhaust the stack when copied or printed is refused before it is built.
  write_bytes(dir / "skill.test.json", R"({"tests": [{"name": "deep", "input": )" + std::string(100000, '[') +
                                           std::string(100000, ']') + "}]}");
  const CliExec deep = skillbox({"test", dir.string()});
  EXPECT_EQ(deep.exit_code, 2) << deep.err;
  EXPECT_NE(deep.err.find("nested 100003 levels deep; at most 64"), std::string::npos) << deep.err;

  fs::remove(dir / "skill.test.json");
  const CliExec missing = skillbox({"test", dir.string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("skill.test.json: not found"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace skillbox
