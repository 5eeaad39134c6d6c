// Tests of the `skillbox` command, run as a subprocess exactly as a user runs it: exit codes, stdout,
// stderr, for check, run, --version, --help and bad command lines.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/sanitizer.h"
#include "skillbox/skillbox.h"
#include "skillbox/version.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Exec {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs the skillbox binary with `args`, feeding `input` on stdin, with SKILLBOX_HOME set to `home`.
/// Kills it after 120 s (a hang is a failure, not a stuck test run).
Exec skillbox(const std::vector<std::string>& args, const std::string& input = "",
              const fs::path& home = {}) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe failed";
    return {};
  }
  std::vector<std::string> argv_storage = {SKILLBOX_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string home_env = "SKILLBOX_HOME=" + home.string();

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    // The forked child has one thread, so nothing can read the environment while putenv writes it.
    if (!home.empty()) ::putenv(const_cast<char*>(home_env.c_str()));  // NOLINT(concurrency-mt-unsafe)
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);

  Exec r;
  size_t written = 0;
  int in_fd = in[1];
  if (input.empty()) {
    ::close(in_fd);
    in_fd = -1;
  }
  (void)signal(SIGPIPE, SIG_IGN);  // fails only for an invalid signal number
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    std::vector<pollfd> fds;
    if (out_open) fds.push_back({out[0], POLLIN, 0});
    if (err_open) fds.push_back({err[0], POLLIN, 0});
    if (in_fd >= 0) fds.push_back({in_fd, POLLOUT, 0});
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ADD_FAILURE() << "skillbox did not finish within 120 s";
      break;
    }
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in_fd) {
        const ssize_t n = ::write(in_fd, input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 || written == input.size()) {
          ::close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      char buf[65536];
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      if (n <= 0) {
        (p.fd == out[0] ? out_open : err_open) = false;
        continue;
      }
      (p.fd == out[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
    }
  }
  if (in_fd >= 0) ::close(in_fd);
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string example(const std::string& name) {
  return std::string(SKILLBOX_SOURCE_DIR) + "/examples/skills/" + name;
}

/// A temporary folder for skills and data, removed after the test.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-cli-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    tmp_ = tmpl;
    home_ = tmp_ / "home";
  }
  void TearDown() override { fs::remove_all(tmp_); }

  /// Writes a skill folder `name` with `manifest` and `code` (index.js) and returns its path.
  std::string skill(const std::string& name, const std::string& manifest, const std::string& code = "") {
    const fs::path dir = tmp_ / name;
    fs::create_directories(dir);
    std::ofstream(dir / "skill.json") << manifest;
    std::ofstream(dir / "index.js") << code;
    return dir.string();
  }
  /// A skill with default limits whose entry is `code`.
  std::string code_skill(const std::string& code, const std::string& limits = "{}") {
    return skill("s" + std::to_string(counter_++),
                 R"({"id": "t", "entry": "index.js", "limits": )" + limits + "}", code);
  }
  Exec run(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), "run");
    return skillbox(args, input, home_);
  }

  fs::path tmp_;
  fs::path home_;
  int counter_ = 0;
};

// ---- --version, --help -----------------------------------------------------------------------------

TEST_F(CliTest, VersionNamesSkillboxAndTheEngine) {
  const Exec r = skillbox({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("skillbox ") + kVersion + "\nengine " + kEngineVersion + "\n");
  EXPECT_NE(r.out.find("QuickJS 2021-03-27"), std::string::npos);
  EXPECT_EQ(r.err, "");
}

TEST_F(CliTest, HelpListsTheCommandsAndExitCodes) {
  const Exec r = skillbox({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: skillbox"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  run "), std::string::npos);
  EXPECT_NE(r.out.find("  check "), std::string::npos);
  EXPECT_NE(r.out.find("10 memory_limit, 11 step_limit, 12 timeout, 13 stack_overflow"), std::string::npos);
}

TEST_F(CliTest, RunHelpShowsEveryFlagAndThatOverridesOnlyLower) {
  const Exec r = skillbox({"run", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--call NAME", "--input JSON", "--input-file FILE", "--json", "--memory-mb N",
                           "--steps N", "--timeout-ms N", "--stack-kb N", "--data-dir DIR"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " missing from\n" << r.out;
  }
  EXPECT_NE(r.out.find("Limit flags only lower the skill's own limits"), std::string::npos);
  for (const char* flag : {"--deny-net", "--allow-http PREFIX", "--fs-mode MODE", "--deny-env"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag << " missing from\n" << r.out;
  EXPECT_NE(r.out.find("only narrow what skill.json \"permissions\" grants"), std::string::npos);
}

// The narrowing flags reach the run (tests/runner/narrowing_run_test.cpp has the whole behaviour).
TEST_F(CliTest, NarrowingFlagsOnlyTakeAwayFromTheManifest) {
  const std::string writer = skill(
      "writer", R"({"id": "writer", "entry": "index.js", "permissions": {"fs": {"mode": "readwrite"}}})",
      "export default async () => { await openhuman.fs.writeFile('a.txt', 'x'); return 'wrote'; }");
  Exec r = run({writer});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = run({writer, "--fs-mode", "read"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("writeFile needs \"write\" or \"readwrite\" (the mode was narrowed for this run"),
            std::string::npos)
      << r.err;
  r = run({writer, "--fs-mode", "rw"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fs-mode: rw not in {none,read,write,readwrite}"), std::string::npos) << r.err;
  r = run({writer, "--allow-http", "ftp://files.example/"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("allow-http entry \"ftp://files.example/\": the scheme must be http or https"),
            std::string::npos)
      << r.err;
  r = run({writer, "--deny-net", "--allow-http", "https://api.example.com/"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("excludes --allow-http"), std::string::npos) << r.err;
}

TEST_F(CliTest, HelpAndVersionAreCommandsToo) {
  Exec r = skillbox({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("skillbox ") + kVersion + "\nengine " + kEngineVersion + "\n");
  r = skillbox({"help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, skillbox({"--help"}).out);
  r = skillbox({"help", "store", "get"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, skillbox({"store", "get", "--help"}).out);
  r = skillbox({"help", "stroe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no command \"stroe\" in 'skillbox' (did you mean \"store\"?)"), std::string::npos)
      << r.err;
}

TEST_F(CliTest, StoreWithoutAKnownSubcommandShowsTheStoreHelp) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"store"}, {"store", "lsit"}}) {
    const Exec r = skillbox(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("Usage: skillbox store"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("  export "), std::string::npos) << r.err;
  }
  EXPECT_NE(skillbox({"store"}).err.find("skillbox: a store command is required: list, "), std::string::npos);
  EXPECT_NE(skillbox({"store", "lsit"})
                .err.find("skillbox: unknown store command \"lsit\" (did you mean \"list\"?)"),
            std::string::npos)
      << skillbox({"store", "lsit"}).err;
  // A flag before the word takes no value: "lsit" is still the word where the subcommand belongs.
  const Exec flagged = skillbox({"skills", "--json", "lsit"});
  EXPECT_EQ(flagged.exit_code, 2);
  EXPECT_NE(flagged.err.find("unknown skills command \"lsit\" (did you mean \"list\"?)"), std::string::npos)
      << flagged.err;
}

// --help beside a word that is no command is the usage error it is without --help, not some other help.
TEST_F(CliTest, HelpBesideAnUnknownCommandIsAnErrorWithDidYouMean) {
  const Exec top = skillbox({"chek", "--help"});
  EXPECT_EQ(top.exit_code, 2) << top.out;
  EXPECT_EQ(top.out, "");
  EXPECT_NE(top.err.find("skillbox: unknown command \"chek\" (did you mean \"check\"?)"), std::string::npos)
      << top.err;
  const Exec nested = skillbox({"store", "lsit", "-h"});
  EXPECT_EQ(nested.exit_code, 2) << nested.out;
  EXPECT_NE(nested.err.find("unknown store command \"lsit\" (did you mean \"list\"?)"), std::string::npos)
      << nested.err;
  // Real commands keep their help, with the word before or after --help.
  EXPECT_EQ(skillbox({"check", "--help"}).exit_code, 0);
  EXPECT_EQ(skillbox({"store", "--help", "list"}).exit_code, 0);
  EXPECT_EQ(skillbox({"store", "list", "--help"}).exit_code, 0);
  EXPECT_EQ(skillbox({"--help"}).exit_code, 0);
}

TEST_F(CliTest, CheckHelpWorks) {
  const Exec r = skillbox({"check", "-h"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Usage: skillbox check [OPTIONS] DIR"), std::string::npos) << r.out;
}

// ---- bad command lines: exit 2, a message and where to get help --------------------------------------

TEST_F(CliTest, BadCommandLinesExitTwoAndSayWhatToDo) {
  const std::string hello = example("hello");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {{},
       "skillbox: a command is required: run, test, check, init, store, workspace, skills, tools, call, "
       "hook, serve, mcp, db, help, "
       "version\nRun "
       "'skillbox --help' for usage.\n"},
      {{"frob"},
       "skillbox: unknown command \"frob\"; the commands are run, test, check, init, store, workspace, "
       "skills, tools, "
       "call, hook, serve, mcp, "
       "db, help, version\nRun 'skillbox --help' for usage.\n"},
      {{"chek", hello},
       "skillbox: unknown command \"chek\" (did you mean \"check\"?); the commands are run, test, check, "
       "init, "
       "store, workspace, skills, tools, call, hook, serve, mcp, db, help, version\nRun 'skillbox --help' "
       "for "
       "usage.\n"},
      {{"--frob"},
       "skillbox: unknown option \"--frob\"; give a command first: run, test, check, init, store, workspace, "
       "skills, "
       "tools, call, "
       "hook, serve, mcp, db, help, version\nRun 'skillbox --help' for usage.\n"},
      {{"run"}, "skillbox: DIR is required\nRun 'skillbox run --help' for usage.\n"},
      {{"check"}, "skillbox: DIR is required\nRun 'skillbox check --help' for usage.\n"},
      {{"run", hello, "--frob"},
       "skillbox: unknown option \"--frob\"\nRun 'skillbox run --help' for usage.\n"},
      {{"run", hello, "--jsn"},
       "skillbox: unknown option \"--jsn\" (did you mean \"--json\"?)\nRun 'skillbox run --help' for "
       "usage.\n"},
      {{"run", hello, "extra"},
       "skillbox: unexpected argument \"extra\"\nRun 'skillbox run --help' for usage.\n"},
      // An unknown option with a value: CLI11 reports both words; the option is named.
      {{"run", "--tiemout-ms", "5", hello},
       "skillbox: unknown option \"--tiemout-ms\" (did you mean \"--timeout-ms\"?)\nRun 'skillbox run "
       "--help' for usage.\n"},
      {{"run", hello, "--jsn", "--inptu", "3"},
       "skillbox: unknown option \"--jsn\" (did you mean \"--json\"?)\nRun 'skillbox run --help' for "
       "usage.\n"},
      {{"run", hello, "one", "two"},
       "skillbox: unexpected arguments \"one\", \"two\"\nRun 'skillbox run --help' for usage.\n"},
      {{"run", hello, "--memory-mb", "lots"},
       "skillbox: --memory-mb: expected an integer from 1 to 4096, got \"lots\"\nRun 'skillbox run --help' "
       "for "
       "usage.\n"},
      {{"run", hello, "--memory-mb", "5000"},
       "skillbox: --memory-mb: expected an integer from 1 to 4096, got \"5000\"\nRun 'skillbox run --help' "
       "for "
       "usage.\n"},
      {{"run", hello, "--memory-mb=-5"},
       "skillbox: --memory-mb: expected an integer from 1 to 4096, got \"-5\"\nRun 'skillbox run --help' for "
       "usage.\n"},
      {{"run", hello, "--steps", "0"},
       "skillbox: --steps: expected an integer from 1 to 1000000000000, got \"0\"\nRun 'skillbox run --help' "
       "for "
       "usage.\n"},
      {{"run", hello, "--timeout-ms", "99999999999999999999999"},
       "skillbox: --timeout-ms: expected an integer from 1 to 600000, got \"99999999999999999999999\"\nRun "
       "'skillbox run --help' for usage.\n"},
      {{"run", hello, "--stack-kb", "8"},
       "skillbox: --stack-kb: expected an integer from 16 to 4096, got \"8\"\nRun 'skillbox run --help' for "
       "usage.\n"},
      {{"run", hello, "--input", "1", "--input-file", "x.json"},
       "skillbox: --input excludes --input-file\nRun 'skillbox run --help' for usage.\n"},
      {{"run", hello, "--input", "1", "--input", "2"},
       "skillbox: --input: given more than once; give it once\nRun 'skillbox run --help' for usage.\n"},
      {{"run", hello, "--steps", "\x1b[2J"},
       "skillbox: --steps: expected an integer from 1 to 1000000000000, got \"\\x1b[2J\"\nRun 'skillbox run "
       "--help' "
       "for usage.\n"},
  };
  for (const Case& c : cases) {
    std::string label;
    for (const std::string& a : c.args) label += a + " ";
    SCOPED_TRACE(label);
    const Exec r = skillbox(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(CliTest, InputMustBeOneJsonValue) {
  const Exec r = run({example("hello"), "--input", "{name: 'Ada'}"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "skillbox: " + example("hello") +
          ": --input: not valid JSON at line 1, column 3: syntax error while parsing object key - invalid "
          "literal; "
          "last read: '{na'; expected string literal; pass one JSON value, quoted for the shell: --input "
          "'{\"name\": \"Ada\"}'\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, InputFileErrorsAreInvalid) {
  Exec r = run({example("hello"), "--input-file", (tmp_ / "missing.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  const std::string hello = "skillbox: " + example("hello") + ": ";
  EXPECT_EQ(r.err, hello + "--input-file: cannot open \"" + (tmp_ / "missing.json").string() +
                       "\": No such file or directory\n");

  r = run({example("hello"), "--input-file", tmp_.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, hello + "--input-file: \"" + tmp_.string() + "\" is a folder; pass a JSON file\n");

  const fs::path big = tmp_ / "big.json";
  std::ofstream(big) << "\"" << std::string(size_t{16} * 1024 * 1024, 'x') << "\"";
  r = run({example("hello"), "--input-file", big.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      hello + "--input-file: larger than 16 MiB; pass a smaller input (the skill's heap has to hold it)\n");

  r = run({example("hello"), "--input-file", "-"}, std::string(size_t{17} * 1024 * 1024, ' '));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      hello + "--input-file: larger than 16 MiB; pass a smaller input (the skill's heap has to hold it)\n");

  r = run({example("hello"), "--input-file", "-"}, "[1, 2,]");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.substr(0, hello.size() + 48), hello + "--input-file: not valid JSON at line 1, column 7");
}

TEST_F(CliTest, JsonModeReportsInvalidInputAsOneObject) {
  const Exec r = run({example("hello"), "--json", "--input", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "invalid");
  EXPECT_EQ(j["value"], nullptr);
  EXPECT_EQ(j["error"]["name"], "InvalidInput");
  EXPECT_EQ(j["error"]["message"].get<std::string>().substr(0, 30), "--input: not valid JSON at lin");
  EXPECT_EQ(j["logs"], json::array());
  EXPECT_EQ(j["usage"]["steps"], 0);
}

TEST_F(CliTest, RunOfABadSkillIsInvalidWithTheManifestMessage) {
  const std::string dir =
      skill("bad", R"({"id": "bad", "entry": "index.js", "limits": {"memory_mb": "lots"}})");
  Exec r = run({dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "skillbox: " + dir +
                       ": skill.json: limits.memory_mb: expected an integer from 1 to 4096, got \"lots\"\n");
  EXPECT_EQ(r.out, "");

  r = run({dir, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "invalid");
  EXPECT_EQ(j["error"]["name"], "InvalidSkill");
  EXPECT_EQ(j["error"]["message"],
            "skill.json: limits.memory_mb: expected an integer from 1 to 4096, got \"lots\"");

  // The folder is named once, as typed, not again in the library's "cannot load skill \"DIR\": ".
  r = run({(tmp_ / "nowhere").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "skillbox: " + (tmp_ / "nowhere").string() + ": no such folder\n");
}

// ---- check -------------------------------------------------------------------------------------------

TEST_F(CliTest, CheckShowsEffectiveLimitsAndPermissions) {
  const Exec r = skillbox({"check", example("hello")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "skill    hello 1.0.0 (Hello)\n"
            "folder   " +
                fs::canonical(example("hello")).string() +
                "\n"
                "entry    index.js\n"
                "exports  default\n"
                "\n"
                "limits\n"
                "  memory   8 MiB\n"
                "  steps    10000000\n"
                "  stack    512 KiB\n"
                "  timeout  1000 ms\n"
                "\n"
                "permissions\n"
                "  fs       none\n"
                "  http     none\n"
                "  env      none\n"
                "  store    quota 1 MiB, at most 10000 keys, 1 MiB per value\n"
                "\n"
                "isolation  process (the default of run): seccomp, Landlock and rlimits are available\n");
}

TEST_F(CliTest, CheckShowsGrantedPermissions) {
  const std::string dir = skill("weather", R"({
    "id": "weather", "name": "Weather", "version": "1.0.0", "entry": "index.js",
    "permissions": {
      "fs": {"mode": "readwrite", "quota_bytes": 10485760, "max_files": 1000},
      "http": {"allow": ["https://api.example.com/v1/", "https://*.example.org/"], "methods": ["GET", "POST"]},
      "env": ["WEATHER_API_KEY", "UNITS"],
      "store": {"quota_bytes": 2048, "max_keys": 1}
    }})");
  const Exec r = skillbox({"check", dir});
  EXPECT_EQ(r.exit_code, 0);
  const size_t from = r.out.find("permissions\n");
  const std::string permissions = r.out.substr(from, r.out.find("\nisolation  ") - from);
  EXPECT_EQ(permissions,
            "permissions\n"
            "  fs       readwrite, quota 10 MiB, at most 1000 files, 10 MiB per file\n"
            "  http     GET, POST to URLs starting with\n"
            "             https://api.example.com/v1/\n"
            "             https://*.example.org/\n"
            "           1 MiB per request, 10 MiB per response, 10000 ms timeout, 5 redirects, 8 at "
            "once, 100 requests per run\n"
            "           private and loopback addresses refused\n"
            "  env      WEATHER_API_KEY, UNITS\n"
            "  store    quota 2 KiB, at most 1 key, 1 MiB per value\n");
}

TEST_F(CliTest, CheckJsonIsACompleteManifestThatParsesBackToTheSameSkill) {
  const std::string dir = skill("full", R"({"id": "full", "entry": "index.js", "limits": {"steps": 1e6},
      "permissions": {"http": {"allow": ["HTTPS://Api.Example.com"], "allow_private_addresses": true}, "env": ["A"]}})");
  const Exec r = skillbox({"check", "--json", dir});
  EXPECT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["dir"], fs::canonical(dir).string());
  EXPECT_EQ(j["manifest"]["name"], "full");
  EXPECT_EQ(j["manifest"]["limits"]["steps"], 1000000);
  EXPECT_EQ(j["manifest"]["limits"]["memory_mb"], 32);
  EXPECT_EQ(j["manifest"]["permissions"]["http"]["allow"], json::array({"https://api.example.com/"}));
  EXPECT_EQ(j["manifest"]["permissions"]["fs"]["mode"], "none");

  // Round trip: the printed manifest is a valid skill.json describing the same skill.
  Result<Manifest> again = Skill::parse_manifest(j["manifest"].dump());
  ASSERT_TRUE(again.ok()) << again.error().message;
  Result<Skill> original = Skill::load(dir);
  ASSERT_TRUE(original.ok());
  const Manifest& a = original->manifest();
  const Manifest& b = *again;
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.entry, b.entry);
  EXPECT_EQ(a.limits.memory_bytes, b.limits.memory_bytes);
  EXPECT_EQ(a.limits.steps, b.limits.steps);
  EXPECT_EQ(a.limits.stack_bytes, b.limits.stack_bytes);
  EXPECT_EQ(a.limits.timeout_ms, b.limits.timeout_ms);
  EXPECT_EQ(a.permissions.http.allow, b.permissions.http.allow);
  EXPECT_EQ(a.permissions.http.methods, b.permissions.http.methods);
  EXPECT_EQ(a.permissions.http.allow_private_addresses, b.permissions.http.allow_private_addresses);
  EXPECT_EQ(a.permissions.env, b.permissions.env);
  EXPECT_EQ(a.permissions.fs.quota_bytes, b.permissions.fs.quota_bytes);
  EXPECT_EQ(a.permissions.store.max_value_bytes, b.permissions.store.max_value_bytes);
}

TEST_F(CliTest, CheckOfABadSkillListsEveryProblemAndExitsTwo) {
  const std::string dir = skill("bad", R"({"id": "Bad", "entry": "../x.js", "limits": {"stack_kb": 1}})");
  Exec r = skillbox({"check", dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  const std::string bad = "skillbox: " + dir + ": ";
  EXPECT_EQ(
      r.err,
      bad +
          "skill.json: id: expected 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a "
          "letter or digit, got \"Bad\"\n" +
          bad +
          "skill.json: entry: expected a relative path to a file inside the skill folder, such as "
          "\"index.js\", got \"../x.js\" ('..' is not allowed)\n" +
          bad + "skill.json: limits.stack_kb: expected an integer from 16 to 4096, got 1\n");

  r = skillbox({"check", "--json", dir});
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["valid"], false);
  EXPECT_EQ(j["error"].get<std::string>().substr(0, 16), "skill.json: id: ");
}

TEST_F(CliTest, CheckEscapesHostileNamesForTheTerminal) {
  // A bidi override is a valid character in a name (control characters are not: the manifest refuses
  // them), but it must not reach the terminal raw, where it would show "exe.txt" as "txt.exe".
  const std::string dir =
      skill("bidi", "{\"id\": \"bidi\", \"name\": \"evil\xE2\x80\xAEtxt.exe\", \"entry\": \"index.js\"}");
  const Exec r = skillbox({"check", dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("skill    bidi 0.0.0 (evil\\u202etxt.exe)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\xE2\x80\xAE"), std::string::npos) << r.out;
}

// ---- run: every outcome and its exit code --------------------------------------------------------------
// These need the InProcessRunner (engine branch).

TEST_F(CliTest, RunHelloPrintsTheValueOnStdoutAndTheRestOnStderr) {
  const Exec r = run({example("hello"), "--input", R"({"name": "Ada"})"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\n  \"greeting\": \"Hello, Ada!\",\n  \"length\": 3\n}\n");
  const std::string hello = "skillbox: " + example("hello") + ": ";
  EXPECT_TRUE(
      r.err.starts_with("[info] greeting Ada\n" + hello + "outcome: ok (exit 0)\n" + hello + "usage: "))
      << r.err;
  EXPECT_NE(r.err.find(" ms wall, "), std::string::npos);
  EXPECT_NE(r.err.find(" heap peak, "), std::string::npos);
}

TEST_F(CliTest, RunJsonPrintsExactlyOneObject) {
  const Exec r = run({example("hello"), "--json", "--input", R"({"name": "Ada"})"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  const json j = json::parse(r.out);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"error", "logs", "outcome", "usage", "value"}));
  EXPECT_EQ(j["outcome"], "ok");
  EXPECT_EQ(j["value"], json({{"greeting", "Hello, Ada!"}, {"length", 3}}));
  EXPECT_EQ(j["error"], nullptr);
  EXPECT_EQ(j["logs"], json::array({{{"level", "info"}, {"message", "greeting Ada"}}}));
  for (const char* k : {"wall_ms", "cpu_ms", "steps", "heap_peak_bytes", "host_calls", "http_bytes_in",
                        "http_bytes_out", "timers_dropped", "unhandled_rejections"}) {
    EXPECT_TRUE(j["usage"][k].is_number_unsigned()) << k;
  }
  EXPECT_GT(j["usage"]["heap_peak_bytes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["usage"]["host_calls"], 1);  // the one log line
}

TEST_F(CliTest, RunReadsInputFromStdinAndFromAFile) {
  Exec r = run({example("hello"), "--input-file", "-", "--json"}, R"({"name": "stdin"})");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["value"]["greeting"], "Hello, stdin!");

  const fs::path file = tmp_ / "input.json";
  std::ofstream(file) << R"({"name": "file"})";
  r = run({example("hello"), "--input-file", file.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["value"]["greeting"], "Hello, file!");

  r = run({example("hello"), "--json"});  // no input: null
  EXPECT_EQ(json::parse(r.out)["value"]["greeting"], "Hello, world!");
}

TEST_F(CliTest, RunOfAThrowingSkillIsErrorExitOne) {
  const std::string dir = code_skill("export default function () { throw new TypeError('boom'); }");
  Exec r = run({dir});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(r.err.starts_with("skillbox: " + dir + ": error: TypeError: boom\n")) << r.err;
  // The stack names the skill's file and no host path (the folder is in skillbox's lines, as typed).
  const std::string stack = r.err.substr(r.err.find('\n') + 1, r.err.find("\nskillbox: ") - r.err.find('\n'));
  EXPECT_NE(stack.find("index.js"), std::string::npos) << r.err;
  EXPECT_EQ(stack.find(tmp_.string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\nskillbox: " + dir + ": outcome: error (exit 1)\n"), std::string::npos) << r.err;

  r = run({dir, "--json"});
  EXPECT_EQ(r.exit_code, 1);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "error");
  EXPECT_EQ(j["value"], nullptr);
  EXPECT_EQ(j["error"]["name"], "TypeError");
  EXPECT_EQ(j["error"]["message"], "boom");
}

TEST_F(CliTest, RunOfAMissingExportIsInvalidExitTwo) {
  const Exec r = run({example("hello"), "--call", "nope", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(json::parse(r.out)["outcome"], "invalid");
}

TEST_F(CliTest, RunCallsANamedExport) {
  const std::string dir =
      code_skill("export default () => 'default'; export function other(x) { return x * 2; }");
  const Exec r = run({dir, "--call", "other", "--input", "21", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out)["value"], 42);
}

TEST_F(CliTest, RunawaySpinningEndsAsStepLimitExitEleven) {
  const Exec r = run({example("runaway"), "--steps", "100000"});
  EXPECT_EQ(r.exit_code, 11) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("[info] spinning forever\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("outcome: step_limit (exit 11): the skill used up its 100000 steps (`--steps 100000` "
                       "on the command line)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("caught"), std::string::npos) << "skill code ran after the limit: " << r.err;
}

TEST_F(CliTest, RunawayHoggingEndsAsMemoryLimitExitTen) {
  const Exec r = run({example("runaway"), "--call", "hog", "--memory-mb", "4"});
  EXPECT_EQ(r.exit_code, 10) << r.err;
  EXPECT_NE(r.err.find("outcome: memory_limit (exit 10): the skill reached its heap limit of 4 MiB "
                       "(`--memory-mb 4` on the command line)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("caught"), std::string::npos) << r.err;
}

TEST_F(CliTest, RunawayRecursingEndsAsStackOverflowExitThirteen) {
  const Exec r = run({example("runaway"), "--call", "recurse"});
  EXPECT_EQ(r.exit_code, 13) << r.err;
  EXPECT_NE(r.err.find("outcome: stack_overflow (exit 13): the skill reached its stack limit of 256 KiB "
                       "(`limits.stack_kb` in skill.json)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("caught"), std::string::npos) << r.err;
}

TEST_F(CliTest, RunawayWaitingEndsAsTimeoutExitTwelve) {
  // An ASan worker takes longer to start than 300 ms on a loaded machine, before the skill could log.
  const std::string timeout_ms = base::kAddressSanitizer ? "2000" : "300";
  const Exec r = run({example("runaway"), "--call", "wait", "--timeout-ms", timeout_ms, "--json"});
  EXPECT_EQ(r.exit_code, 12) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["outcome"], "timeout");
  EXPECT_EQ(j["value"], nullptr);
  ASSERT_TRUE(j["logs"].is_array() && !j["logs"].empty()) << r.out;
  EXPECT_EQ(j["logs"][0]["message"], "waiting for a promise that never settles");
}

TEST_F(CliTest, OverridesNeverRaiseTheSkillsLimits) {
  // The skill allows 100000 steps; asking for more still stops it at 100000, and says so.
  const std::string dir = code_skill("export default function () { for (;;) {} }", R"({"steps": 100000})");
  const Exec r = run({dir, "--steps", "1000000000"});
  EXPECT_EQ(r.exit_code, 11) << r.err;
  const std::string note =
      "skillbox: " + dir +
      ": note: --steps 1000000000 is above the skill's own limit of 100000 steps; the lower limit applies\n";
  EXPECT_EQ(r.err.substr(0, note.size()), note);
  EXPECT_NE(r.err.find("used up its 100000 steps (`limits.steps` in skill.json)"), std::string::npos)
      << r.err;
}

TEST_F(CliTest, TheReadmesRunawayLineEndsInATimeout) {
  // Run the README's own line (from the repository's README.md), so the two cannot drift apart.
  std::ifstream readme(std::string(SKILLBOX_SOURCE_DIR) + "/README.md");
  std::string line;
  std::string found;
  while (std::getline(readme, line)) {
    if (line.starts_with("./build/skillbox run examples/skills/runaway")) found = line;
  }
  ASSERT_FALSE(found.empty()) << "README.md has no runaway line";
  found = found.substr(std::string("./build/skillbox run ").size(), found.find("  #") - 21);
  std::vector<std::string> args;
  for (size_t at = 0; at < found.size();) {
    const size_t end = std::min(found.find(' ', at), found.size());
    if (end > at) args.push_back(found.substr(at, end - at));
    at = end + 1;
  }
  args[0] = std::string(SKILLBOX_SOURCE_DIR) + "/" + args[0];
  const Exec r = run(args);
  EXPECT_EQ(r.exit_code, 12) << found << "\n" << r.err;
  EXPECT_NE(
      r.err.find("outcome: timeout (exit 12): the run passed its deadline of 500 ms (`--timeout-ms 500`"),
      std::string::npos)
      << r.err;
}

TEST_F(CliTest, CommonJsAndTopLevelAwaitFailAsDocumented) {
  // docs/limits.md "Entry and modules": there is no require, and a top-level await does not compile.
  const std::string cjs = code_skill("export default () => require('./x.js');");
  Exec r = run({cjs});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ReferenceError"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("require"), std::string::npos) << r.err;

  const std::string tla = code_skill("const v = await Promise.resolve(1);\nexport default () => v;\n");
  r = skillbox({"check", tla});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("index.js:1: SyntaxError"), std::string::npos) << r.err;
}

TEST_F(CliTest, ALimitOutcomeNamesWhereTheLimitWasSet) {
  // The README's runaway line: the flag lowers the skill's 2000 ms, and the outcome line says it did.
  Exec r = run({example("runaway"), "--call", "wait", "--timeout-ms", "300"});
  EXPECT_EQ(r.exit_code, 12) << r.err;
  EXPECT_NE(
      r.err.find("outcome: timeout (exit 12): the run passed its deadline of 300 ms (`--timeout-ms 300` on "
                 "the command line)\n"),
      std::string::npos)
      << r.err;
  // A limit skill.json leaves unset is the default, and the line says where to change it.
  const std::string dir = code_skill("const f = (n) => f(n + 1) + 1; export default () => f(0);");
  r = run({dir});
  EXPECT_EQ(r.exit_code, 13) << r.err;
  EXPECT_NE(r.err.find("stack limit of 512 KiB (the default for `limits.stack_kb`; set it in skill.json or "
                       "lower it with a flag)\n"),
            std::string::npos)
      << r.err;
}

// ---- skillbox's own messages: one prefix, and the skill folder as typed ------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return lines;
}

TEST_F(CliTest, MessagesStartWithSkillboxAndNameTheFolderAsTyped) {
  // Typed with a "sub/.." detour: the messages must show these words, not the canonical path.
  fs::create_directories(tmp_ / "sub");
  const std::string bad_dir =
      skill("bad", R"({"id": "bad", "entry": "index.js", "limits": {"timeout_ms": 0}})");
  const std::string bad = (tmp_ / "sub" / ".." / "bad").string();
  ASSERT_TRUE(fs::equivalent(bad, bad_dir));
  const std::string manifest_line =
      "skillbox: " + bad + ": skill.json: limits.timeout_ms: expected an integer from 1 to 600000, got 0\n";
  for (const char* command : {"run", "check"}) {
    SCOPED_TRACE(command);
    const Exec r = skillbox({command, bad}, "", home_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, manifest_line);
  }
  // The JSON message is the same text without the prefix.
  EXPECT_EQ(json::parse(run({bad, "--json"}).out)["error"]["message"],
            "skill.json: limits.timeout_ms: expected an integer from 1 to 600000, got 0");

  const std::string missing = (tmp_ / "sub" / ".." / "missing").string();
  for (const char* command : {"run", "check"}) {
    SCOPED_TRACE(command);
    const Exec r = skillbox({command, missing}, "", home_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "skillbox: " + missing + ": no such folder\n");
  }
  EXPECT_EQ(skillbox({"skills", "rebind", missing}, "", home_).err,
            "skillbox: " + missing + ": not a folder; pass the skill folder that should own the id\n");

  // A runtime error: the error, outcome and usage lines are messages about the folder; the stack
  // between them is the skill's own. A newline in the skill's message cannot start a line of skillbox's.
  fs::create_directories(tmp_ / "throws");
  std::ofstream(tmp_ / "throws" / "skill.json") << R"({"id": "throws", "entry": "index.js"})";
  std::ofstream(tmp_ / "throws" / "index.js")
      << "export default function () { throw new RangeError('no\\nskillbox: forged'); }\n";
  const std::string throws = (tmp_ / "sub" / ".." / "throws").string();
  Exec r = run({throws});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string prefix = "skillbox: " + throws + ": ";
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_GE(lines.size(), 3u) << r.err;
  EXPECT_EQ(lines.front(), prefix + "error: RangeError: no\\nskillbox: forged") << r.err;
  EXPECT_EQ(lines[lines.size() - 2], prefix + "outcome: error (exit 1)") << r.err;
  EXPECT_TRUE(lines.back().starts_with(prefix + "usage: ")) << r.err;
  for (size_t i = 1; i + 2 < lines.size(); ++i) {
    EXPECT_TRUE(lines[i].starts_with("    at ")) << "not a stack line: " << lines[i];
  }
  for (const std::string& line : lines) EXPECT_FALSE(line.starts_with("skillbox: forged")) << r.err;

  // A stack the skill wrote itself is still the skill's: indented, it cannot pass for skillbox's lines.
  std::ofstream(tmp_ / "throws" / "index.js") << "export default function () { const e = new Error('x'); "
                                                 "e.stack = 'skillbox: " +
                                                     throws +
                                                     ": outcome: ok (exit 0)\\nskillbox: x'; throw e; }\n";
  r = run({throws});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::vector<std::string> forged = lines_of(r.err);
  ASSERT_EQ(forged.size(), 5u) << r.err;
  EXPECT_EQ(forged[1], "    skillbox: " + throws + ": outcome: ok (exit 0)") << r.err;
  EXPECT_EQ(forged[2], "    skillbox: x") << r.err;
  EXPECT_EQ(forged[3], prefix + "outcome: error (exit 1)") << r.err;

  // A bad command line is about no skill: the prefix alone, then where to read on.
  r = run({throws, "--steps", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "skillbox: --steps: expected an integer from 1 to 1000000000000, got \"0\"\n"
            "Run 'skillbox run --help' for usage.\n");

  // A warning of check is a message about the folder too.
  fs::create_directories(tmp_ / "local");
  std::ofstream(tmp_ / "local" / "skill.json")
      << R"({"id": "local", "entry": "index.js", "permissions": {"http": {"allow": ["http://127.0.0.1:9/"]}}})";
  std::ofstream(tmp_ / "local" / "index.js") << "export default () => 1;\n";
  const std::string local = (tmp_ / "sub" / ".." / "local").string();
  r = skillbox({"check", local}, "", home_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.starts_with("skillbox: " + local + ": warning: skill.json: permissions.http.allow: "))
      << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
}

TEST_F(CliTest, SkillOutputCannotDriveTheTerminal) {
  const std::string dir = code_skill(
      "export default function () { log('\\x1b[2J\\u202e done\\n[host] fake'); "
      "throw new Error('\\x1b]0;title\\x07 \\u009b31m'); }");
  const Exec r = run({dir});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\xE2\x80\xAE"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\xC2\x9B"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\n[host] fake"), std::string::npos) << r.err;  // cannot fake a line of its own
  EXPECT_NE(r.err.find("error: Error: "), std::string::npos) << r.err;
}

TEST_F(CliTest, ValuesAreValidJsonWithTerminalUnsafeCharactersEscaped) {
  const std::string dir =
      code_skill("export default () => ({ s: 'a\\u202eb\\u009bc\\x7fd', n: 1.5, u: null })");
  const Exec r = run({dir});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\n  \"s\": \"a\\u202eb\\u009bc\\u007fd\",\n  \"n\": 1.5,\n  \"u\": null\n}\n");
  EXPECT_EQ(json::parse(r.out)["s"],
            "a\xE2\x80\xAE"
            "b\xC2\x9B"
            "c\x7f"
            "d");
}

}  // namespace
}  // namespace skillbox

// ---- skillbox workspace ------------------------------------------------------------------------------

namespace skillbox {
namespace {

class WorkspaceCli : public CliTest {
 protected:
  // A skill "files" that wrote a.txt (9 bytes), sub/b.bin and an empty folder.
  void write_files() {
    const std::string dir = skill(
        "files", R"({"id": "files", "entry": "index.js", "permissions": {"fs": {"mode": "readwrite"}}})",
        "export default async () => {\n"
        "  await openhuman.fs.writeFile('a.txt', 'hello\\u001b[2J');\n"
        "  await openhuman.fs.mkdir('sub');\n"
        "  await openhuman.fs.writeFile('sub/b.bin', new Uint8Array([0, 1, 2]));\n"
        "  await openhuman.fs.mkdir('empty');\n"
        "}");
    ASSERT_EQ(run({dir}).exit_code, 0);
  }
  fs::path workspace() const { return home_ / "skills" / "files" / "workspace"; }
};

TEST_F(WorkspaceCli, LsCatAndRmShowAndRemoveWhatTheSkillWrote) {
  write_files();
  Exec r = skillbox({"workspace", "ls", "--skill", "files"}, "", home_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "file 9\ta.txt\ndir  0\tempty/\ndir  0\tsub/\n");
  r = skillbox({"workspace", "ls", "--skill", "files", "--json", "sub"}, "", home_);
  EXPECT_EQ(r.out, "{\"name\":\"b.bin\",\"type\":\"file\",\"size\":3}\n");
  r = skillbox({"workspace", "cat", "--skill", "files", "sub/b.bin"}, "", home_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("\0\1\2", 3));
  r = skillbox({"workspace", "rm", "--skill", "files", "sub"}, "", home_);
  EXPECT_EQ(r.exit_code, 1);  // not empty
  EXPECT_TRUE(fs::exists(workspace() / "sub" / "b.bin"));
  r = skillbox({"workspace", "rm", "--skill", "files", "-r", "sub"}, "", home_);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(workspace() / "sub"));
  EXPECT_TRUE(fs::exists(workspace() / "a.txt"));
}

TEST_F(WorkspaceCli, PathsFollowTheSkillsRulesAndNothingOutsideIsReadOrRemoved) {
  write_files();
  const fs::path outside = tmp_ / "outside.txt";
  std::ofstream(outside) << "secret";
  fs::create_symlink(tmp_, workspace() / "link");
  fs::create_symlink("../../", workspace() / "up");           // relative, pointing out
  fs::create_symlink("/etc/passwd", workspace() / "passwd");  // to a file outside
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"cat", "../../../outside.txt"},
           {"cat", "link/outside.txt"},
           {"ls", "up"},
           {"cat", "passwd"},
           {"rm", "passwd"},
           {"ls", "link"},
           {"rm", "-r", "link"},
           {"rm", "/etc/passwd"},
           {"rm", "."},
       }) {
    std::vector<std::string> full = {"workspace"};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), {"--skill", "files"});
    const Exec r = skillbox(full, "", home_);
    EXPECT_EQ(r.exit_code, 1) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "") << args.back();
    EXPECT_EQ(r.err.find("secret"), std::string::npos);
  }
  EXPECT_TRUE(fs::exists(outside));
  EXPECT_TRUE(fs::is_symlink(workspace() / "link"));
  EXPECT_TRUE(fs::is_symlink(workspace() / "passwd"));
  EXPECT_TRUE(fs::exists("/etc/passwd"));

  // A skill that never wrote a file has no workspace: said so, and nothing is created.
  Exec r = skillbox({"workspace", "ls", "--skill", "never"}, "", home_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("skill \"never\" has no workspace"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(home_ / "skills" / "never"));
  r = skillbox({"workspace", "ls", "--skill", "../files"}, "", home_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a valid skill id"), std::string::npos) << r.err;
  // A workspace folder that is itself a symlink is refused before anything is read through it.
  fs::create_directories(home_ / "skills" / "linked");
  fs::create_directory_symlink(workspace(), home_ / "skills" / "linked" / "workspace");
  r = skillbox({"workspace", "ls", "--skill", "linked"}, "", home_);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("skillbox refuses to follow it"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace

// ---- skillbox run FILE.js -----------------------------------------------------------------------------

// A single file has no manifest: it gets nothing (no network) until the command line grants it, and then
// exactly what was granted (a loopback prefix can reach loopback).
TEST_F(CliTest, ASingleFileRunsWithOnlyWhatTheCommandLineGrants) {
  testing::HttpTestServer server;
  const fs::path file = tmp_ / "probe.js";
  std::ofstream(file) << "export default async () => (await openhuman.http.get('"
                      << server.url("/text?body=hi") << "')).body;\n";
  const Exec denied = run({file.string(), "--isolation", "inprocess"});
  EXPECT_EQ(denied.exit_code, 1) << denied.err;
  EXPECT_NE(denied.err.find("PermissionDenied"), std::string::npos) << denied.err;
  const Exec granted = run({file.string(), "--allow-http", server.origin() + "/"});
  EXPECT_EQ(granted.exit_code, 0) << granted.err;
  EXPECT_EQ(granted.out, "\"hi\"\n");
  const Exec elsewhere = run({file.string(), "--allow-http", server.origin() + "/other/"});
  EXPECT_EQ(elsewhere.exit_code, 1) << elsewhere.err;
  const Exec bad = run({file.string(), "--allow-http", "ftp://x"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--allow-http ftp://x"), std::string::npos) << bad.err;
}

TEST_F(CliTest, ASingleFileImportsFromBesideItAndKeepsItsOwnStore) {
  for (const char* folder : {"one", "two"}) {
    fs::create_directories(tmp_ / folder);
    std::ofstream(tmp_ / folder / "lib.js") << "export const name = '" << folder << "';\n";
    std::ofstream(tmp_ / folder / "main.js")
        << "import { name } from './lib.js';\n"
           "export default async () => { const before = await store.get('k');"
           " await store.set('k', name); return [before ?? null, name]; };\n";
  }
  // Two files called main.js in two folders: two ids, two stores (no "belongs to another folder").
  EXPECT_EQ(run({(tmp_ / "one/main.js").string()}).out, "[\n  null,\n  \"one\"\n]\n");
  EXPECT_EQ(run({(tmp_ / "two/main.js").string()}).out, "[\n  null,\n  \"two\"\n]\n");
  const Exec again = run({(tmp_ / "one/main.js").string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "[\n  \"one\",\n  \"one\"\n]\n");
}

TEST_F(CliTest, RunOfATypeScriptFileOrEntrySaysHowToCompileIt) {
  const fs::path file = tmp_ / "tool.ts";
  std::ofstream(file) << "export default (): number => 1;\n";
  const Exec r = run({file.string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("tool.ts is TypeScript"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("esbuild tool.ts"), std::string::npos) << r.err;
  const std::string dir = skill("ts", R"({"id": "ts", "entry": "index.ts"})");
  std::ofstream(fs::path(dir) / "index.ts") << "export default (): number => 1;\n";
  const Exec entry = run({dir});
  EXPECT_EQ(entry.exit_code, 2) << entry.err;
  EXPECT_NE(entry.err.find("skill.json: entry index.ts is TypeScript"), std::string::npos) << entry.err;
}

}  // namespace skillbox
