// cli/test_command.cpp — `skillbox test DIR`: runs the tests of a skill's test file (skill.test.json).
//
// Each test is one invocation in a throwaway data directory of its own (so store and workspace start
// empty, or with the test's "store" entries), with env.get answered from the test's "env" only (never
// the caller's environment), and with HTTP answered from the test's fixtures by loopback servers
// (cli/fixture_server.h) through the origin map. The run's allow list is narrowed to the fixture
// origins, and with no fixtures the network is denied: a test never reaches, or resolves, anything.
// docs/cli.md "skillbox test" gives the file format.
#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/file_read.h"
#include "base/json_text.h"
#include "cli/commands.h"
#include "cli/fixture_server.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "cli/scratch_dir.h"
#include "skillbox/store.h"

namespace skillbox::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kMaxTestFileBytes = 16u << 20;
constexpr size_t kMaxTests = 1000;
constexpr size_t kShownBytes = 400;  // of a value in a failure message
constexpr size_t kMaxFixtureOrigins = 64;
/// Deepest nesting of arrays and objects in a test file: inputs and expected values are data, and
/// copying or printing a value nested far deeper would exhaust the stack.
constexpr size_t kMaxDepth = 64;

struct TestOptions {
  std::string dir;
  std::string file = "skill.test.json";
  std::string filter;
  std::string isolation = "process";
};

struct HttpFixture {
  std::string origin;  // normalized "https://api.example.com"
  FixtureRoute route;
};

struct Expectation {
  std::string outcome = "ok";
  std::optional<json> value;
  std::optional<std::string> error_name;
  std::optional<std::string> error_message;  // a substring of the message
  std::vector<std::string> logs;             // substrings of log lines, in order
  std::map<std::string, json> store;
};

struct TestCase {
  std::string name;
  std::string call;
  std::string input_json = "null";
  std::map<std::string, std::string> env;
  std::map<std::string, json> store;
  std::vector<HttpFixture> http;
  Expectation expect;
};

/// Collects the problems of a test file, each with its key path ("tests[1].expect.outcome").
struct FileReader {
  std::vector<std::string> problems;

  // Key paths and values come from the file: escaped here (newlines too), so a key cannot start a line of
  // its own or send terminal escapes.
  void add(const std::string& path, const std::string& what) {
    problems.push_back(base::escape_text(path) + ": " + base::escape_text(what));
  }

  bool keys(const json& object, const std::string& path, const std::set<std::string>& allowed) {
    bool ok = true;
    for (const auto& [key, value] : object.items()) {
      if (allowed.contains(key)) continue;
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      add(path + "." + key, "unknown key; the keys here are " + list);
      ok = false;
    }
    return ok;
  }

  std::optional<std::string> string(const json& object, const std::string& key, const std::string& path) {
    if (!object.contains(key)) return std::nullopt;
    if (!object[key].is_string()) {
      add(path + "." + key, "expected a string, got " + base::json_text::write(object[key]).substr(0, 80));
      return std::nullopt;
    }
    return object[key].get<std::string>();
  }

  std::map<std::string, json> json_map(const json& object, const std::string& key, const std::string& path) {
    std::map<std::string, json> out;
    if (!object.contains(key)) return out;
    if (!object[key].is_object()) {
      add(path + "." + key, "expected an object of key: JSON value");
      return out;
    }
    for (const auto& [k, v] : object[key].items()) out.emplace(k, v);
    return out;
  }
};

/// "https://api.example.com/v1/x?y=1" -> {"https://api.example.com", "/v1/x?y=1"}, origin normalized.
std::optional<std::pair<std::string, std::string>> split_url(const std::string& url, std::string& why) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos || !(url.starts_with("http://") || url.starts_with("https://"))) {
    why = "expected an http:// or https:// URL";
    return std::nullopt;
  }
  std::string rest = url.substr(0, url.find('#'));
  size_t path_at = rest.find_first_of("/?", scheme_end + 3);
  std::string origin = rest.substr(0, path_at);
  std::string target = path_at == std::string::npos ? "/" : rest.substr(path_at);
  if (target.front() == '?') target = "/" + target;
  auto normalized = parse_origin_mapping(origin + "=" + origin);
  if (!normalized) {
    why = "its origin " + origin + " is not scheme://host[:port] (" + normalized.error().message + ")";
    return std::nullopt;
  }
  return std::make_pair(normalized->first, target);
}

std::vector<HttpFixture> read_fixtures(FileReader& r, const json& test, const std::string& path) {
  std::vector<HttpFixture> out;
  if (!test.contains("http")) return out;
  if (!test["http"].is_array()) {
    r.add(path + ".http", "expected an array of fixtures {method, url, status, headers, body}");
    return out;
  }
  for (size_t i = 0; i < test["http"].size(); ++i) {
    const json& f = test["http"][i];
    const std::string at = path + ".http[" + std::to_string(i) + "]";
    if (!f.is_object()) {
      r.add(at, "expected an object {method, url, status, headers, body}");
      continue;
    }
    r.keys(f, at, {"method", "url", "status", "headers", "body"});
    HttpFixture fixture;
    fixture.route.method = r.string(f, "method", at).value_or("GET");
    for (char& c : fixture.route.method)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    const std::optional<std::string> url = r.string(f, "url", at);
    if (!url) {
      if (!f.contains("url"))
        r.add(at + ".url", "missing: the URL the skill requests, such as \"https://api.example.com/v1/x\"");
      continue;
    }
    std::string why;
    auto split = split_url(*url, why);
    if (!split) {
      r.add(at + ".url", why);
      continue;
    }
    fixture.origin = split->first;
    fixture.route.target = split->second;
    if (f.contains("status")) {
      // No 1xx: after an interim response the client reads the "body" as the next response, which could
      // then be a redirect that no fixture check saw.
      if (!f["status"].is_number_integer() || f["status"].get<int64_t>() < 200 ||
          f["status"].get<int64_t>() > 599)
        r.add(at + ".status",
              "expected an HTTP status from 200 to 599 (interim 1xx responses cannot be fixtures)");
      else
        fixture.route.response.status = f["status"].get<int>();
    }
    bool has_type = false;
    if (f.contains("headers")) {
      if (!f["headers"].is_object()) {
        r.add(at + ".headers", "expected an object of header name: value (strings)");
      } else {
        for (const auto& [name, value] : f["headers"].items()) {
          std::string lowered = name;
          for (char& c : lowered)
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
          const bool token =
              !name.empty() && name.find_first_of(" \t\r\n:\"(),/;<=>?@[\\]{}") == std::string::npos;
          if (!value.is_string() || !token ||
              value.get<std::string>().find_first_of("\r\n") != std::string::npos) {
            r.add(at + ".headers." + name, "expected a header name and a one-line string value");
          } else if (lowered == "content-length" || lowered == "connection" ||
                     lowered == "transfer-encoding") {
            r.add(at + ".headers." + name, "set by skillbox test itself; leave it out");
          } else if (lowered == "location") {
            // A redirect is followed by the http capability itself, past the origin map: it would
            // leave the fixtures for the real origin.
            r.add(at + ".headers." + name,
                  "redirects cannot be fixtures (the skill would follow them out of the fixtures); answer "
                  "the final URL instead");
          } else {
            has_type = has_type || lowered == "content-type";
            fixture.route.response.headers.emplace_back(name, value.get<std::string>());
          }
        }
      }
    }
    const int status = fixture.route.response.status;
    if (f.contains("body") && (status == 204 || status == 304)) {
      r.add(at + ".body", "a " + std::to_string(status) + " response has no body; leave it out");
    } else if (f.contains("body")) {
      if (f["body"].is_string()) {
        fixture.route.response.body = f["body"].get<std::string>();
      } else {
        fixture.route.response.body = base::json_text::write(f["body"]);
        if (!has_type) fixture.route.response.headers.emplace_back("Content-Type", "application/json");
      }
    }
    out.push_back(std::move(fixture));
  }
  std::set<std::string> origins;
  for (const HttpFixture& f : out) origins.insert(f.origin);
  if (origins.size() > kMaxFixtureOrigins)
    r.add(path + ".http", "fixtures for " + std::to_string(origins.size()) + " origins; at most " +
                              std::to_string(kMaxFixtureOrigins) +
                              " per test (each gets a server of its own)");
  return out;
}

Expectation read_expect(FileReader& r, const json& test, const std::string& path) {
  Expectation e;
  if (!test.contains("expect")) return e;
  const json& x = test["expect"];
  const std::string at = path + ".expect";
  if (!x.is_object()) {
    r.add(at, "expected an object {outcome, value, error, logs, store}");
    return e;
  }
  r.keys(x, at, {"outcome", "value", "error", "logs", "store"});
  if (x.contains("value")) e.value = x["value"];
  if (x.contains("error")) {
    e.outcome = "error";
    if (!x["error"].is_object()) {
      r.add(at + ".error", "expected an object {name, message}");
    } else {
      r.keys(x["error"], at + ".error", {"name", "message"});
      e.error_name = r.string(x["error"], "name", at + ".error");
      e.error_message = r.string(x["error"], "message", at + ".error");
    }
  }
  if (auto outcome = r.string(x, "outcome", at)) {
    static const std::set<std::string> kOutcomes = {"ok",         "error",   "invalid",        "memory_limit",
                                                    "step_limit", "timeout", "stack_overflow", "crashed"};
    if (!kOutcomes.contains(*outcome)) {
      r.add(at + ".outcome",
            "expected one of ok, error, invalid, memory_limit, step_limit, timeout, "
            "stack_overflow, crashed");
    } else {
      e.outcome = *outcome;
    }
  }
  if (e.value && e.outcome != "ok") r.add(at + ".value", "a value is only returned when the outcome is ok");
  if (x.contains("logs")) {
    if (!x["logs"].is_array()) {
      r.add(at + ".logs", "expected an array of strings, each part of a log line, in order");
    } else {
      for (const json& l : x["logs"]) {
        if (l.is_string())
          e.logs.push_back(l.get<std::string>());
        else
          r.add(at + ".logs", "expected strings only");
      }
    }
  }
  e.store = r.json_map(x, "store", at);
  return e;
}

/// Reads and checks the whole test file; every problem is reported at once.
Result<std::vector<TestCase>> read_test_file(const fs::path& file, const std::string& shown) {
  auto text = base::read_file(file.c_str(), {.max_bytes = kMaxTestFileBytes, .allow_pipe = false});
  if (!text) {
    if (text.error().code == base::ReadErrc::open_failed && text.error().sys_errno == ENOENT)
      return Error{shown +
                   ": not found; write one (skillbox init makes a folder with one; man skillbox-test "
                   "gives the format)"};
    return Error{shown + ": " + text.error().message};
  }
  // Checked whole first (no tree, any depth) so that the message can say how deep it goes.
  if (const size_t depth = base::json_text::check(*text).depth; depth > kMaxDepth)
    return Error{shown + ": nested " + std::to_string(depth) + " levels deep; at most " +
                 std::to_string(kMaxDepth) + " levels of arrays and objects"};
  const json doc = base::json_text::parse(*text, kMaxDepth);
  if (doc.is_discarded()) return Error{shown + ": not valid JSON"};
  FileReader r;
  if (!doc.is_object() || !doc.contains("tests") || !doc["tests"].is_array() || doc["tests"].empty())
    return Error{shown + ": expected an object {\"tests\": [...]} with at least one test"};
  r.keys(doc, "", {"tests", "$schema"});  // "$schema": for editors (skill.test.schema.json)
  if (doc["tests"].size() > kMaxTests)
    return Error{shown + ": more than " + std::to_string(kMaxTests) + " tests; split the file"};
  std::vector<TestCase> tests;
  std::set<std::string> names;
  for (size_t i = 0; i < doc["tests"].size(); ++i) {
    const json& t = doc["tests"][i];
    const std::string path = "tests[" + std::to_string(i) + "]";
    if (!t.is_object()) {
      r.add(path, "expected an object {name, call, input, env, store, http, expect}");
      continue;
    }
    r.keys(t, path, {"name", "call", "input", "env", "store", "http", "expect"});
    TestCase c;
    if (auto name = r.string(t, "name", path)) {
      c.name = *name;
      if (c.name.empty()) r.add(path + ".name", "must not be empty");
      if (!names.insert(c.name).second) r.add(path + ".name", "\"" + c.name + "\" names two tests");
    } else if (!t.contains("name")) {
      r.add(path + ".name", "missing: a short description, such as \"greets by name\"");
    }
    c.call = r.string(t, "call", path).value_or("");
    if (t.contains("input")) c.input_json = base::json_text::write(t["input"]);
    for (const auto& [k, v] : r.json_map(t, "env", path)) {
      if (v.is_string())
        c.env.emplace(k, v.get<std::string>());
      else
        r.add(path + ".env." + k, "expected a string value");
    }
    c.store = r.json_map(t, "store", path);
    c.http = read_fixtures(r, t, path);
    c.expect = read_expect(r, t, path);
    tests.push_back(std::move(c));
  }
  if (!r.problems.empty()) {
    std::string message = shown + ":";
    for (const std::string& p : r.problems) message += "\n  " + p;
    return Error{message};
  }
  return tests;
}

std::string shown_json(const json& v) {
  std::string text = base::json_text::write(v, {.indent = -1, .ascii = true});
  if (text.size() > kShownBytes) text = text.substr(0, kShownBytes) + "...";
  return text;
}

/// Runs one test; returns "" when it passed, else what went wrong (lines).
std::string run_test(const TestOptions& o, const Skill& skill, const TestCase& t, const CancelToken& cancel) {
  // What went wrong before the run: one escaped line (a key of the test file may be in it).
  const auto setup_failed = [](const std::string& why) { return base::escape_text(why) + "\n"; };
  ScratchDir data;
  if (data.path().empty()) return setup_failed("cannot create a temporary data directory");
  const std::string& id = skill.manifest().id;

  if (!t.store.empty()) {
    auto db = StoreDatabase::open(StoreDatabase::path_in(data.path()));
    if (!db) return setup_failed("store: " + db.error().message);
    auto mine = db->skill(id, skill.manifest().permissions.store);
    if (!mine) return setup_failed("store: " + mine.error().message);
    for (const auto& [key, value] : t.store)
      if (auto set = mine->set(key, base::json_text::write(value)); !set)
        return setup_failed("store: " + key + ": " + set.error().message);
  }

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
    if (!server) return setup_failed(server.error().message);
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
  const std::string outcome(to_string(result.outcome));
  if (outcome != t.expect.outcome) {
    std::string line = "outcome: expected " + t.expect.outcome + ", got " + outcome;
    if (result.error)
      line += " (" + base::escape_text(result.error->name + ": " + result.error->message) + ")";
    fail(line);
  } else {
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
  size_t from = 0;
  for (const std::string& wanted : t.expect.logs) {
    size_t at = from;
    while (at < result.logs.size() && result.logs[at].message.find(wanted) == std::string::npos) ++at;
    if (at == result.logs.size()) {
      fail("logs: no log line" + std::string(from > 0 ? " after the one before" : "") + " contains \"" +
           base::escape_text(wanted) + "\"");
      break;
    }
    from = at + 1;
  }
  if (!t.expect.store.empty()) {
    auto db = StoreDatabase::open(StoreDatabase::path_in(data.path()));
    auto mine = db ? db->skill(id, skill.manifest().permissions.store) : StoreResult<SkillStore>(db.error());
    if (!mine) {
      fail("store: " + mine.error().message);
    } else {
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
  }
  for (const auto& server : servers)
    for (const std::string& miss : server->misses())
      fail("http: no fixture for " + base::escape_text(miss) + " (it was answered 404); add one to \"http\"");
  if (!problems.empty() && result.error && result.error->name == "PermissionDenied" &&
      result.error->message.find("http:") != std::string::npos)
    fail("note: skillbox test answers HTTP only from the test's fixtures; other URLs are refused");
  if (!problems.empty() && !result.logs.empty()) {
    problems += "logs:\n";
    const size_t first = result.logs.size() > 20 ? result.logs.size() - 20 : 0;
    for (size_t i = first; i < result.logs.size(); ++i) problems += "  " + log_line(result.logs[i]);
  }
  return problems;
}

int run_tests(const TestOptions& o) {
  Result<Skill> skill = load_skill(o.dir);
  if (!skill) {
    say(o.dir, load_problem(o.dir, skill.error().message));
    return kExitUsage;
  }
  const fs::path file = fs::path(o.file).is_absolute() ? fs::path(o.file) : fs::path(o.dir) / o.file;
  auto tests = read_test_file(file, o.file);
  if (!tests) {
    say(o.dir, tests.error().message);
    return kExitUsage;
  }
  size_t passed = 0;
  size_t failed = 0;
  size_t selected = 0;
  // Ctrl-C or SIGTERM cancels the test that is running; its data directory and fixture servers are
  // cleaned up and no further test starts. Before any runner: its threads must not take the signals.
  CancelToken cancel;
  const InterruptWatch interrupts(
      cancel, message(o.dir, "cancelling the tests (press Ctrl-C again to quit at once)"));
  for (const TestCase& t : *tests) {
    if (!o.filter.empty() && t.name.find(o.filter) == std::string::npos) continue;
    if (cancel.cancelled()) break;
    ++selected;
    const auto started = std::chrono::steady_clock::now();
    const std::string problems = run_test(o, *skill, t, cancel);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started)
            .count();
    if (problems.empty()) {
      ++passed;
      emit(stdout, "ok    " + base::escape_text(t.name) + " (" + std::to_string(ms) + " ms)\n");
    } else {
      ++failed;
      std::string text = "FAIL  " + base::escape_text(t.name) + " (" + std::to_string(ms) + " ms)\n";
      for (size_t at = 0; at < problems.size();) {
        const size_t eol = std::min(problems.find('\n', at), problems.size());
        text += "      " + problems.substr(at, eol - at) + "\n";
        at = eol + 1;
      }
      emit(stdout, text);
    }
  }
  if (cancel.cancelled()) {
    say(o.dir, "cancelled after " + std::to_string(selected) + (selected == 1 ? " test" : " tests") + ": " +
                   std::to_string(passed) + " passed, " + std::to_string(failed) + " failed");
    return exit_code(Outcome::cancelled);
  }
  if (selected == 0) {
    say(o.dir, "no test name contains \"" + o.filter + "\"; the tests are listed in " + o.file);
    return kExitUsage;
  }
  emit(stdout, std::to_string(selected) + (selected == 1 ? " test: " : " tests: ") + std::to_string(passed) +
                   " passed, " + std::to_string(failed) + " failed\n");
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
  test->footer(
      "Each test runs in a fresh, throwaway data directory; env.get sees only the test's \"env\"; HTTP\n"
      "requests are answered by the test's \"http\" fixtures on 127.0.0.1 and every other URL is refused.\n"
      "Format: man skillbox-test. Exit codes: 0 all passed, 1 a test failed, 2 invalid skill or "
      "test file,\n130 cancelled (Ctrl-C or SIGTERM: the running test is cancelled and cleaned up, no other "
      "starts).");
  test->callback([o, &status] { status.exit_code = run_tests(*o); });
}

}  // namespace skillbox::cli
