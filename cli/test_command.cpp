// cli/test_command.cpp — `skillbox test DIR`: runs the tests of a skill's test file (skill.test.json).
//
// Each test is one invocation in a throwaway data directory of its own (so store and workspace start
// empty, or with the test's "store" entries and "workspace" files), with env.get answered from the
// test's "env" only (never the caller's environment), and with HTTP answered from the test's fixtures
// by loopback servers (cli/fixture_server.h) through the origin map. The run's allow list is narrowed
// to the fixture origins, and with no fixtures the network is denied: a test never reaches, or
// resolves, anything. The file is read by cli/test_file.h; --json and --junit are cli/test_report.h.
// docs/cli.md "skillbox test" gives the file format and the outputs.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/scratch_dir.h"
#include "cli/commands.h"
#include "cli/file_skill.h"
#include "cli/fixture_server.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "cli/test_file.h"
#include "cli/test_report.h"
#include "skillbox/store.h"
#include "skillbox/workspace.h"

namespace skillbox::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kShownBytes = 400;         // of a value in a failure message
constexpr size_t kMaxStackFramesShown = 5;  // of an unexpected error, under its outcome line

struct TestOptions {
  std::string dir;
  std::string file = "skill.test.json";
  std::string filter;
  std::string isolation = "process";
  bool json_report = false;  // --json
  std::string junit;         // --junit FILE
};

std::string shown_json(const json& v) {
  std::string text = base::json_text::write(v, {.indent = -1, .ascii = true});
  if (text.size() > kShownBytes) text = text.substr(0, kShownBytes) + "...";
  return text;
}

/// `text` quoted for a failure message, cut after kShownBytes.
std::string shown_text(const std::string& text) {
  if (text.size() <= kShownBytes) return "\"" + text + "\"";
  return "\"" + text.substr(0, kShownBytes) + "...\" (" + std::to_string(text.size()) + " bytes)";
}

/// Compares the workspace in `data_dir` with what the test expects of it, calling `fail` with a line
/// for each file that differs.
template <typename Fail>
void check_workspace(const fs::path& data_dir, const std::string& id,
                     const std::map<std::string, FileExpectation>& expected, const Fail& fail) {
  // Made when the skill wrote nothing: then every expected file is missing, which the loop says.
  auto ws = WorkspaceFiles::create(data_dir, id);
  if (!ws) {
    fail("workspace: " + ws.error().message);
    return;
  }
  for (const auto& [path, want] : expected) {
    const std::string at = "workspace: " + path + ": ";
    auto exists = ws->exists(path);
    if (!exists) {
      fail(at + exists.error().message);
      continue;
    }
    const std::string wanted =
        want.kind == FileExpectation::Kind::text ? shown_text(want.text) : "JSON " + shown_json(want.value);
    if (want.kind == FileExpectation::Kind::absent) {
      if (*exists) fail(at + "expected no such file, but it exists");
      continue;
    }
    if (!*exists) {
      fail(at + "expected " + wanted + ", but the file does not exist");
      continue;
    }
    auto bytes = ws->read(path);
    if (!bytes) {
      fail(at + "expected " + wanted + ", but it cannot be read: " + bytes.error().message);
    } else if (want.kind == FileExpectation::Kind::text) {
      if (*bytes != want.text) fail(at + "expected " + wanted + ", got " + shown_text(*bytes));
    } else if (const json got = base::json_text::parse(*bytes); got.is_discarded()) {
      fail(at + "expected " + wanted + ", got " + shown_text(*bytes) + ", not JSON");
    } else if (got != want.value) {
      fail(at + "expected " + wanted + ", got " + shown_json(got));
    }
  }
}

/// Fills a fresh data directory with the test's "store" entries and "workspace" files; returns what
/// went wrong, or std::nullopt.
std::optional<std::string> seed_state(const fs::path& data_dir, const Skill& skill, const TestCase& t) {
  const std::string& id = skill.manifest().id;
  if (!t.store.empty()) {
    auto db = StoreDatabase::open(StoreDatabase::path_in(data_dir));
    if (!db) return "store: " + db.error().message;
    auto mine = db->skill(id, skill.manifest().permissions.store);
    if (!mine) return "store: " + mine.error().message;
    for (const auto& [key, value] : t.store)
      if (auto set = mine->set(key, base::json_text::write(value)); !set)
        return "store: " + key + ": " + set.error().message;
  }
  if (!t.workspace.empty()) {
    auto ws = WorkspaceFiles::create(data_dir, id);
    if (!ws) return "workspace: " + ws.error().message;
    for (const auto& [path, bytes] : t.workspace)
      if (auto put = ws->write(path, bytes); !put) return "workspace: " + path + ": " + put.error().message;
  }
  return std::nullopt;
}

/// Checks the run's outcome, and then its value and error, against what the test expects.
template <typename Fail>
void check_outcome(const TestCase& t, const RunResult& result, const Fail& fail) {
  const std::string outcome(to_string(result.outcome));
  if (outcome != t.expect.outcome) {
    std::string line = "outcome: expected " + t.expect.outcome + ", got " + outcome;
    if (result.error)
      line += " (" + base::escape_text(result.error->name + ": " + result.error->message) + ")";
    fail(line);
    if (!result.error) return;
    // Where it was thrown: the first frames (a built skill's are already its .ts lines).
    size_t shown = 0;
    for (size_t at = 0; at < result.error->stack.size() && shown < kMaxStackFramesShown; ++shown) {
      const size_t end = std::min(result.error->stack.find('\n', at), result.error->stack.size());
      const std::string frame = result.error->stack.substr(at, end - at);
      if (frame.find_first_not_of(' ') != std::string::npos)
        fail("  " + frame.substr(frame.find_first_not_of(' ')));
      at = end + 1;
    }
    return;
  }
  if (t.expect.value) {
    const json got = base::json_text::parse(result.value_json);
    if (got.is_discarded())
      fail("value: nested deeper than " + std::to_string(base::json_text::kMaxDepth) +
           " levels of arrays and objects; skillbox test compares values up to that depth");
    else if (got != *t.expect.value)
      fail("value: expected " + shown_json(*t.expect.value) + ", got " + shown_json(got));
  }
  if (t.expect.error_name && result.error && result.error->name != *t.expect.error_name)
    fail("error.name: expected " + *t.expect.error_name + ", got " + base::escape_text(result.error->name));
  if (t.expect.error_message && result.error &&
      result.error->message.find(*t.expect.error_message) == std::string::npos)
    fail("error.message: expected it to contain \"" + base::escape_text(*t.expect.error_message) +
         "\", got \"" + base::escape_text(result.error->message) + "\"");
}

/// Checks that the expected log fragments appear, in order, each in a later line than the one before.
template <typename Fail>
void check_logs(const TestCase& t, const RunResult& result, const Fail& fail) {
  size_t from = 0;
  for (const std::string& wanted : t.expect.logs) {
    size_t at = from;
    while (at < result.logs.size() && result.logs[at].message.find(wanted) == std::string::npos) ++at;
    if (at == result.logs.size()) {
      fail("logs: no log line" + std::string(from > 0 ? " after the one before" : "") + " contains \"" +
           base::escape_text(wanted) + "\"");
      return;
    }
    from = at + 1;
  }
}

/// Compares the store in `data_dir` with what the test expects of it.
template <typename Fail>
void check_store(const fs::path& data_dir, const Skill& skill, const TestCase& t, const Fail& fail) {
  if (t.expect.store.empty()) return;
  auto db = StoreDatabase::open(StoreDatabase::path_in(data_dir));
  auto mine = db ? db->skill(skill.manifest().id, skill.manifest().permissions.store)
                 : StoreResult<SkillStore>(db.error());
  if (!mine) {
    fail("store: " + mine.error().message);
    return;
  }
  for (const auto& [key, wanted] : t.expect.store) {
    auto got = mine->get(key);
    if (!got) {
      fail("store: " + key + ": " + got.error().message);
    } else if (!*got) {
      fail("store: " + key + ": expected " + shown_json(wanted) + ", but the key does not exist");
    } else if (const json stored = base::json_text::parse(**got); stored != wanted) {
      fail("store: " + key + ": expected " + shown_json(wanted) + ", got " + shown_json(stored));
    }
  }
}

/// Says, for each request the fixture servers answered 404, which fixture came closest and how it differs.
template <typename Fail>
void check_http_misses(const std::vector<std::unique_ptr<FixtureServer>>& servers, const Fail& fail) {
  for (const auto& server : servers) {
    for (const FixtureMiss& miss : server->misses()) {
      if (miss.closest.empty()) {
        fail("http: no fixture for " + miss.request + " (it was answered 404); add one to \"http\"");
        continue;
      }
      fail("http: no fixture for " + miss.request + " (it was answered 404); the closest, " + miss.closest +
           ", differs in:");
      for (const std::string& d : miss.differences) fail("  " + d);
    }
  }
}

/// Runs one test; returns "" when it passed, else what went wrong (lines).
std::string run_test(const TestOptions& o, const Skill& skill, const TestCase& t, const CancelToken& cancel) {
  base::ScratchDir data;
  // What went wrong before the run: one escaped line (a key of the test file may be in it).
  if (data.path().empty()) return base::escape_text("cannot create a temporary data directory") + "\n";
  if (auto seeded = seed_state(data.path(), skill, t)) return base::escape_text(*seeded) + "\n";

  // One loopback server per fixture origin.
  std::map<std::string, std::vector<FixtureRoute>> by_origin;
  for (const HttpFixture& f : t.http) by_origin[f.origin].push_back(f.route);
  std::vector<std::unique_ptr<FixtureServer>> servers;
  HostOptions host;
  host.data_dir = data.path();
  host.env = t.env;
  host.trust_loopback_origin_map_targets = true;
  Invocation invocation{.skill = skill, .export_name = t.call, .input_json = t.input_json};
  invocation.cancel = cancel;
  for (auto& [origin, routes] : by_origin) {
    auto server = FixtureServer::start(origin, std::move(routes));
    if (!server) return base::escape_text(server.error().message) + "\n";
    host.origin_map.emplace_back(origin, (*server)->address());
    invocation.narrowing.allow_http.push_back(origin + "/");
    servers.push_back(std::move(*server));
  }
  invocation.narrowing.deny_net = by_origin.empty();

  const std::unique_ptr<Runner> runner = make_runner(o.isolation, std::move(host));
  const RunResult result = checked_result(runner->run(invocation));

  std::string problems;
  // Every line is escaped once more as a whole (escaping keeps backslashes, so escaped parts stay as
  // they are): no part of it, whatever its source, can start a line or send a terminal escape.
  const auto fail = [&](const std::string& line) { problems += base::escape_text(line) + "\n"; };
  check_outcome(t, result, fail);
  check_logs(t, result, fail);
  check_store(data.path(), skill, t, fail);
  if (!t.expect.workspace.empty())
    check_workspace(data.path(), skill.manifest().id, t.expect.workspace, fail);
  check_http_misses(servers, fail);
  if (!problems.empty() && result.error && result.error->name == "PermissionDenied" &&
      (result.error->message.find("is not in permissions.http.allow") != std::string::npos ||
       result.error->message.find("no network access") != std::string::npos))
    fail("note: skillbox test answers HTTP only from the test's fixtures; other URLs are refused");
  if (!problems.empty() && !result.logs.empty()) {
    problems += "logs:\n";
    const size_t first = result.logs.size() > 20 ? result.logs.size() - 20 : 0;
    for (size_t i = first; i < result.logs.size(); ++i) problems += "  " + log_line(result.logs[i]);
  }
  return problems;
}

/// The reasons of a failed test as the human output shows them, under its FAIL line.
std::string indented(const std::string& problems) {
  std::string text;
  for (size_t at = 0; at < problems.size();) {
    const size_t eol = std::min(problems.find('\n', at), problems.size());
    text += "      " + problems.substr(at, eol - at) + "\n";
    at = eol + 1;
  }
  return text;
}

int run_tests(const TestOptions& o) {
  Result<Skill> skill = load_skill(o.dir);
  if (!skill) {
    say(o.dir, load_problem(o.dir, skill.error().message));
    return kExitUsage;
  }
  if (auto note = stale_build_note(*skill)) say(o.dir, "note: " + *note);
  const fs::path file = fs::path(o.file).is_absolute() ? fs::path(o.file) : fs::path(o.dir) / o.file;
  auto tests = read_test_file(file, o.file, skill->manifest().permissions.fs.mode);
  if (!tests) {
    say(o.dir, tests.error().message);
    return kExitUsage;
  }
  // Opened (and emptied) before any test runs, so that a path that cannot be written is said at once,
  // not after the tests.
  struct CloseFile {
    void operator()(std::FILE* f) const { (void)std::fclose(f); }
  };
  std::unique_ptr<std::FILE, CloseFile> junit;
  if (!o.junit.empty()) {
    junit.reset(std::fopen(o.junit.c_str(), "we"));  // e: O_CLOEXEC, no worker inherits it
    if (!junit) {
      say(o.dir, "--junit " + o.junit + ": cannot write it: " + std::strerror(errno));
      return kExitUsage;
    }
  }
  TestRun run{
      .skill_id = skill->manifest().id, .file = o.file, .tests = {}, .duration_ms = 0, .cancelled = false};
  size_t passed = 0;
  // Ctrl-C or SIGTERM cancels the test that is running; its data directory and fixture servers are
  // cleaned up and no further test starts. Before any runner: its threads must not take the signals.
  CancelToken cancel;
  const InterruptWatch interrupts(
      cancel, message(o.dir, "cancelling the tests (press Ctrl-C again to quit at once)"));
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return static_cast<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
            .count());
  };
  const auto run_started = std::chrono::steady_clock::now();
  for (const TestCase& t : *tests) {
    if (!o.filter.empty() && t.name.find(o.filter) == std::string::npos) continue;
    if (cancel.cancelled()) break;
    const auto started = std::chrono::steady_clock::now();
    std::string problems = run_test(o, *skill, t, cancel);
    TestRecord record{
        .name = t.name, .passed = problems.empty(), .duration_ms = since(started), .failure = {}};
    const std::string line = base::escape_text(t.name) + " (" + std::to_string(record.duration_ms) + " ms)\n";
    if (record.passed) {
      ++passed;
      if (!o.json_report) emit(stdout, "ok    " + line);
    } else {
      if (!o.json_report) emit(stdout, "FAIL  " + line + indented(problems));
      problems.pop_back();  // the last line's newline
      record.failure = std::move(problems);
    }
    run.tests.push_back(std::move(record));
  }
  run.duration_ms = since(run_started);
  run.cancelled = cancel.cancelled();
  const size_t selected = run.tests.size();
  const size_t failed = selected - passed;
  if (o.json_report && (selected > 0 || run.cancelled)) emit(stdout, test_run_json(run));
  if (junit) {
    const std::string xml = test_run_junit(run);
    const bool written = std::fwrite(xml.data(), 1, xml.size(), junit.get()) == xml.size();
    if (std::fclose(junit.release()) != 0 || !written) {
      say(o.dir, "--junit " + o.junit + ": could not write the report: " + std::strerror(errno));
      return exit_code(Outcome::internal);
    }
  }
  if (run.cancelled) {
    say(o.dir, "cancelled after " + std::to_string(selected) + (selected == 1 ? " test" : " tests") + ": " +
                   std::to_string(passed) + " passed, " + std::to_string(failed) + " failed");
    return exit_code(Outcome::cancelled);
  }
  if (selected == 0) {
    say(o.dir, "no test name contains \"" + o.filter + "\"; the tests are listed in " + o.file);
    return kExitUsage;
  }
  if (!o.json_report)
    emit(stdout, std::to_string(selected) + (selected == 1 ? " test: " : " tests: ") +
                     std::to_string(passed) + " passed, " + std::to_string(failed) + " failed\n");
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_test_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<TestOptions>();
  CLI::App* test = app.add_subcommand(
      "test", "Run a skill's tests (skill.test.json): inputs, expected outputs, HTTP answered by fixtures.");
  test->add_option("DIR", o->dir, "Skill folder (the one that holds skill.json)")->required()->type_name("");
  test->add_option("--file", o->file, "Test file, relative to DIR (default: skill.test.json)")
      ->type_name("FILE");
  test->add_option("--filter", o->filter, "Run only the tests whose name contains TEXT")->type_name("TEXT");
  add_isolation_option(*test, o->isolation);
  test->add_flag("--json", o->json_report,
                 "Print one JSON document instead of the lines: each test's name, status, duration_ms and "
                 "failure, and the totals");
  test->add_option("--junit", o->junit, "Also write a JUnit XML report to FILE (for CI)")->type_name("FILE");
  test->footer(
      "Each test runs in a fresh, throwaway data directory (store and workspace hold only the test's "
      "\"store\"\n"
      "and \"workspace\"); env.get sees only the test's \"env\"; HTTP requests are answered by the test's\n"
      "\"http\" fixtures on 127.0.0.1 and every other URL is refused.\n"
      "Format: man skillbox-test. Exit codes: 0 all passed, 1 a test failed, 2 invalid skill or "
      "test file,\n130 cancelled (Ctrl-C or SIGTERM: the running test is cancelled and cleaned up, no other "
      "starts).");
  test->callback([o, &status] { status.exit_code = run_tests(*o); });
}

}  // namespace skillbox::cli
