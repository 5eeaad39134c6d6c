// The curl examples of docs/server.md, run with the curl command against a real `skillbox serve`: every
// line of a ```sh block that starts with `curl` (with its `\` continuations) must get a 2xx answer of the
// shape its route answers. The docs' plain address is the server's plain listener, their https address
// its TLS listener (a certificate the test issues, and `cert.pem` the CA's).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "serve_support.h"
#include "server/api_key.h"
#include "support/test_pki.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyA = "docs-tenant-a-key-0123456789";
constexpr const char* kKeyB = "docs-tenant-b-key-0123456789";
constexpr const char* kOperatorKey = "docs-operator-key-0123456789";

/// Every `curl` command of the ```sh blocks of `markdown`, continuations joined.
std::vector<std::string> curl_examples(const std::string& markdown) {
  std::vector<std::string> out;
  std::istringstream in(markdown);
  bool in_sh = false;
  std::string pending;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("```")) {
      in_sh = line == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (!pending.empty()) {
      pending += " " + line;
    } else if (line.starts_with("curl ")) {
      pending = line;
    } else {
      continue;
    }
    if (pending.ends_with("\\")) {
      pending.pop_back();
      continue;
    }
    out.push_back(pending);
    pending.clear();
  }
  return out;
}

/// True when the docs show at least one HTTPS example (so the TLS listener above is exercised).
bool tls_examples_seen(const std::vector<std::string>& examples) {
  for (const std::string& e : examples)
    if (e.find("https://127.0.0.1:8443") != std::string::npos) return true;
  return false;
}

bool in_text(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// What an NDJSON run answer must hold: JSON lines, the last one the result.
std::string ndjson_problem(const std::string& out) {
  std::istringstream lines(out);
  nlohmann::json last;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    last = nlohmann::json::parse(line, nullptr, false);
    if (last.is_discarded()) return "a line that is not JSON: " + line;
  }
  return last.is_object() && last.value("type", "") == "result" && last.contains("outcome")
             ? ""
             : "not NDJSON ending in the result line ({\"type\":\"result\", ...})";
}

/// What the answer of `example` must hold, by the route it calls: "" when it does, else what is wrong.
/// A route without a rule here fails, so that a new example gets one. The more specific rules first.
std::string shape_problem(const std::string& example, const std::string& out) {
  const nlohmann::json json = nlohmann::json::parse(out, nullptr, false);
  const auto has = [&](const char* key) { return json.is_object() && json.contains(key); };
  const auto in = [&](const char* part) { return example.find(part) != std::string::npos; };
  const std::string url = example.substr(example.rfind(' ') + 1);  // the examples end with their URL
  const auto ends = [&](const char* tail) {
    return url.ends_with(tail) || url.ends_with(std::string(tail) + "'");
  };
  if (in("/metrics")) return in_text(out, "# TYPE skillbox_runs_total counter") ? "" : "no Prometheus series";
  if (in("application/x-ndjson")) return ndjson_problem(out);
  if (in("-X DELETE")) return out.empty() ? "" : "not an empty answer (204 No Content)";
  if (in("-X PUT"))
    return has("id") && has("digest") && has("version") && has("created")
               ? ""
               : "not an upload's answer (id, digest, version, created)";
  if (in("?async=true") || in("/v1/runs/"))
    return has("id") && has("state") && has("attempts") ? ""
                                                        : "not an async run's record (id, state, attempts)";
  if (in("/run") || in("/call") || in("/hooks/"))
    return has("outcome") && has("usage") && has("logs") ? "" : "not a run result (outcome, logs, usage)";
  if (ends("/tools"))
    return has("tools") && json["tools"].is_array() ? "" : "not a tool list ({\"tools\": [...]})";
  if (in("/store?") || ends("/store"))
    return has("keys") && has("next") ? "" : "not a page of keys (keys, next)";
  if (in("/store/")) return has("key") && has("value") ? "" : "not a stored value (key, value)";
  if (ends("/workspace")) return has("path") && has("entries") ? "" : "not a folder listing (path, entries)";
  if (in("/workspace/")) return !out.empty() && !json.is_object() ? "" : "not a file's bytes";
  if (ends("/v1/skills"))
    return has("skills") && json["skills"].is_array() ? "" : "not a skill list ({\"skills\": [...]})";
  if (in("/v1/skills/"))
    return has("id") && has("limits") && has("permissions") && has("digest") && has("source")
               ? ""
               : "not a skill (id, limits, permissions, digest, source)";
  if (in("/healthz") || in("/readyz")) return has("status") ? "" : "not a probe answer ({\"status\": ...})";
  return "no shape rule for this route in docs_examples_test.cpp: add one";
}

TEST(ServerDocs, EveryCurlExampleGetsA2xxAnswerOfItsRoutesShape) {
  std::ifstream doc(SKILLBOX_SERVER_DOC);
  ASSERT_TRUE(doc) << SKILLBOX_SERVER_DOC;
  std::stringstream text;
  text << doc.rdbuf();
  const std::vector<std::string> examples = curl_examples(text.str());
  ASSERT_GE(examples.size(), 5u);

  TempDir tmp;
  for (const char* t : {"a", "b"}) {
    const fs::path skills = tmp.path() / t;
    write_skill(skills / "hello", "hello", "export default (input) => `hello ${input?.name ?? 'world'}`");
    write_skill(skills / "slow", "slow",
                "export default () => new Promise((r) => setTimeout(() => r('done'), 100))");
    write_skill(skills / "runaway", "runaway", "export function wait() { for (;;) {} }");
  }
  const Bundle notes("notes", grants({}));  // the bundle routes' examples
  fs::copy(notes.dir(), tmp.path() / "a" / "notes", fs::copy_options::recursive);
  TestCa ca("docs CA");
  const PemPair tls = ca.issue({"IP:127.0.0.1"});
  write_file(tmp.path() / "cert.pem", ca.cert_pem());
  write_file(tmp.path() / "server-cert.pem", tls.cert_pem);
  write_file(tmp.path() / "server-key.pem", tls.key_pem);
  fs::permissions(tmp.path() / "server-key.pem", fs::perms::owner_read | fs::perms::owner_write);
  write_file(tmp.path() / "serve.toml",
             "listen = [\"127.0.0.1:0\", {address = \"127.0.0.1:0\", tls_cert = \"server-cert.pem\", "
             "tls_key = \"server-key.pem\"}]\nmetrics_key_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kOperatorKey)) +
                 "\"]\n[tenants.a]\nkey_sha256 = [\"" + server::key_hash_hex(server::hash_api_key(kKeyA)) +
                 "\"]\nskills = \"a\"\ndata_dir = \"a-data\"\n"
                 "[tenants.a.code]\nallow_upload = true\nallow_inline = true\n[tenants.b]\nkey_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kKeyB)) +
                 "\"]\nskills = \"b\"\ndata_dir = \"b-data\"\n");
  ServeProcess server({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_FALSE(server.url.empty());
  std::string tls_url;
  for (const std::string& line : server.lines)
    if (line.starts_with("url: https://")) tls_url = line.substr(5);
  ASSERT_FALSE(tls_url.empty());

  std::string run_id;  // the last async run an example queued: the docs' run id stands for it
  const std::regex docs_run_id("run_[0-9a-f]{32}");
  for (const std::string& example : examples) {
    // The docs' address becomes the test server's; --fail-with-body turns an HTTP error into exit 22.
    std::string curl = replace_all(example, "http://127.0.0.1:8080", server.url);
    if (!run_id.empty()) curl = std::regex_replace(curl, docs_run_id, run_id);
    curl = replace_all(curl, "https://127.0.0.1:8443", tls_url);
    curl = replace_all(curl, "curl ", "curl -sS --noproxy '*' --fail-with-body ");
    const std::string command = "cd " + tmp.path().string() + " && export KEY=" + kKeyA + " KEY_A=" + kKeyA +
                                " KEY_B=" + kKeyB + " OPERATOR_KEY=" + kOperatorKey + "; " + curl + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    const int status = ::pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << example << "\n" << out;
    EXPECT_EQ(shape_problem(example, out), "") << example << "\n" << out;
    const nlohmann::json answer = nlohmann::json::parse(out, nullptr, false);
    if (answer.is_object() && answer.contains("id") && answer["id"].is_string() &&
        std::regex_match(answer["id"].get<std::string>(), docs_run_id)) {
      run_id = answer["id"].get<std::string>();
    }
  }
  EXPECT_TRUE(tls_examples_seen(examples));
}

}  // namespace
}  // namespace skillbox::testing
