// cli/test_file.cpp — see test_file.h.
#include "cli/test_file.h"

#include <cerrno>
#include <set>
#include <utility>

#include "base/escape.h"
#include "base/file_read.h"
#include "base/json_text.h"
#include "skillbox/skillbox.h"
#include "skillbox/workspace.h"

namespace skillbox::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

bool is_header_token(const std::string& name) {
  return !name.empty() && name.find_first_of(" \t\r\n:\"(),/;<=>?@[\\]{}") == std::string::npos;
}

/// A fixture's "request": the headers and body the skill's request must carry to be answered by it.
void read_request(FileReader& r, const json& f, const std::string& at, FixtureRequest& request) {
  if (!f.contains("request")) return;
  const json& q = f["request"];
  const std::string where = at + ".request";
  if (!q.is_object()) {
    r.add(where, "expected an object {headers, body, json}: what the request must carry");
    return;
  }
  json others = q;
  for (const char* beside : {"method", "url"}) {
    if (!q.contains(beside)) continue;
    r.add(where + "." + beside,
          std::string("give the fixture's \"") + beside +
              "\" beside \"request\", not inside it (\"request\" holds headers, body, json)");
    others.erase(beside);
  }
  r.keys(others, where, {"headers", "body", "json"});
  if (q.contains("headers")) {
    if (!q["headers"].is_object()) {
      r.add(where + ".headers", "expected an object of header name: value (strings)");
    } else {
      for (const auto& [name, value] : q["headers"].items()) {
        const std::string lowered = lower_ascii(name);
        if (!value.is_string() || !is_header_token(name) ||
            value.get<std::string>().find_first_of("\r\n") != std::string::npos)
          r.add(where + ".headers." + name, "expected a header name and a one-line string value");
        else if (lowered == "host")
          // The request reaches the fixture server through the origin map, addressed to it.
          r.add(where + ".headers." + name, "the Host header is the fixture's url; leave it out");
        else
          request.headers.emplace_back(lowered, value.get<std::string>());
      }
    }
  }
  if (q.contains("body") && q.contains("json")) {
    r.add(where, "give \"body\" or \"json\", not both");
  } else if (q.contains("body")) {
    // As for the response's body: a string is the text itself, any other value is JSON.
    if (q["body"].is_string())
      request.body = q["body"].get<std::string>();
    else
      request.json = q["body"];
  } else if (q.contains("json")) {
    request.json = q["json"];
  }
}

std::vector<HttpFixture> read_fixtures(FileReader& r, const json& test, const std::string& path) {
  std::vector<HttpFixture> out;
  if (!test.contains("http")) return out;
  if (!test["http"].is_array()) {
    r.add(path + ".http", "expected an array of fixtures {method, url, request, status, headers, body}");
    return out;
  }
  for (size_t i = 0; i < test["http"].size(); ++i) {
    const json& f = test["http"][i];
    const std::string at = path + ".http[" + std::to_string(i) + "]";
    if (!f.is_object()) {
      r.add(at, "expected an object {method, url, request, status, headers, body}");
      continue;
    }
    r.keys(f, at, {"method", "url", "request", "status", "headers", "body"});
    HttpFixture fixture;
    FixtureRequest& request = fixture.route.request;
    request.label = "http[" + std::to_string(i) + "]";
    request.method = r.string(f, "method", at).value_or("GET");
    for (char& c : request.method)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    read_request(r, f, at, request);
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
    request.target = split->second;
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
          const std::string lowered = lower_ascii(name);
          if (!value.is_string() || !is_header_token(name) ||
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

/// `object[key]`, an object of workspace path: JSON value, with each path checked and normalized by the
/// rules of the skill's own fs calls; `add` takes each (normalized path, value). A skill whose manifest
/// grants no fs has no workspace: then the key is refused as a whole.
template <typename Add>
void read_workspace_map(FileReader& r, const json& object, const std::string& key, const std::string& at,
                        FsMode fs_mode, const Add& add) {
  if (!object.contains(key)) return;
  const std::string where = at + "." + key;
  if (fs_mode == FsMode::none) {
    r.add(where,
          "the skill has no workspace: skill.json does not grant fs (permissions.fs.mode is \"none\"); grant "
          "it, such as \"permissions\": {\"fs\": {\"mode\": \"readwrite\"}}, or leave \"" +
              key + "\" out");
    return;
  }
  if (!object[key].is_object()) {
    r.add(where, "expected an object of workspace path: file content, such as {\"notes/a.txt\": \"text\"}");
    return;
  }
  std::map<std::string, std::string> seen;  // normalized -> as written
  for (const auto& [given, value] : object[key].items()) {
    const std::string here = where + "[" + base::json_text::write(json(given)) + "]";
    auto normalized = WorkspaceFiles::file_path(given);
    if (!normalized) {
      r.add(here, normalized.error().message +
                      " (paths are relative to the skill's workspace, as its fs calls see them)");
      continue;
    }
    if (auto [it, fresh] = seen.emplace(*normalized, given); !fresh) {
      r.add(here, "names the same file as " + base::json_text::write(json(it->second)));
      continue;
    }
    add(here, *normalized, value);
  }
}

/// The files a test puts in the workspace before its run: a string is the content as it is, any other
/// value is written as JSON text.
std::map<std::string, std::string> read_seed(FileReader& r, const json& test, const std::string& path,
                                             FsMode fs_mode) {
  std::map<std::string, std::string> out;
  read_workspace_map(
      r, test, "workspace", path, fs_mode,
      [&](const std::string& at, const std::string& file, const json& v) {
        if (v.is_null())
          r.add(at, "null means \"must not exist\", which only expect.workspace can say; leave the file out");
        else
          out.emplace(file, v.is_string() ? v.get<std::string>() : base::json_text::write(v));
      });
  return out;
}

Expectation read_expect(FileReader& r, const json& test, const std::string& path, FsMode fs_mode) {
  Expectation e;
  if (!test.contains("expect")) return e;
  const json& x = test["expect"];
  const std::string at = path + ".expect";
  if (!x.is_object()) {
    r.add(at, "expected an object {outcome, value, error, logs, store, workspace}");
    return e;
  }
  r.keys(x, at, {"outcome", "value", "error", "logs", "store", "workspace"});
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
  read_workspace_map(r, x, "workspace", at, fs_mode,
                     [&](const std::string&, const std::string& file, const json& v) {
                       FileExpectation f;
                       if (v.is_string()) {
                         f.kind = FileExpectation::Kind::text;
                         f.text = v.get<std::string>();
                       } else if (!v.is_null()) {
                         f.kind = FileExpectation::Kind::json;
                         f.value = v;
                       }
                       e.workspace.emplace(file, std::move(f));
                     });
  return e;
}

}  // namespace

Result<std::vector<TestCase>> read_test_file(const fs::path& file, const std::string& shown, FsMode fs_mode) {
  auto text = base::read_file(file.c_str(), {.max_bytes = kMaxTestFileBytes, .allow_pipe = false});
  if (!text) {
    if (text.error().code == base::ReadErrc::open_failed && text.error().sys_errno == ENOENT)
      return Error{shown +
                   ": not found; write one (skillbox init makes a folder with one; man skillbox-test "
                   "gives the format)"};
    return Error{shown + ": " + text.error().message};
  }
  // Checked whole first (no tree, any depth) so that the message can say how deep it goes.
  if (const size_t depth = base::json_text::check(*text).depth; depth > kMaxTestFileDepth)
    return Error{shown + ": nested " + std::to_string(depth) + " levels deep; at most " +
                 std::to_string(kMaxTestFileDepth) + " levels of arrays and objects"};
  const json doc = base::json_text::parse(*text, kMaxTestFileDepth);
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
      r.add(path, "expected an object {name, call, input, env, store, workspace, http, expect}");
      continue;
    }
    r.keys(t, path, {"name", "call", "input", "env", "store", "workspace", "http", "expect"});
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
    c.workspace = read_seed(r, t, path, fs_mode);
    c.http = read_fixtures(r, t, path);
    c.expect = read_expect(r, t, path, fs_mode);
    tests.push_back(std::move(c));
  }
  if (!r.problems.empty()) {
    std::string message = shown + ":";
    for (const std::string& p : r.problems) message += "\n  " + p;
    return Error{message};
  }
  return tests;
}

}  // namespace skillbox::cli
