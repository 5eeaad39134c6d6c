// A run's answer streamed as it happens (`Accept: application/x-ndjson`: the `--json-stream` lines) and
// a run request's `narrowing`, as a client sees them on a real `skillbox serve`: the first log line
// arrives while the run still waits, a client that leaves the stream cancels its run, errors before a
// run stay JSON errors, and narrowing only ever takes permissions away. Both isolation modes.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "server/api_key.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kKey = "stream-tenant-key-0123456789";
constexpr const char* kOperatorKey = "stream-operator-key-0123456789";

std::string hash(const char* key) {
  return server::key_hash_hex(server::hash_api_key(key));
}

/// The body of a chunked HTTP response `raw` (status line and headers included), its chunks joined.
std::string dechunk(const std::string& raw) {
  std::string body;
  size_t at = raw.find("\r\n\r\n");
  if (at == std::string::npos) return body;
  at += 4;
  while (at < raw.size()) {
    const size_t eol = raw.find("\r\n", at);
    if (eol == std::string::npos) break;
    const size_t size = std::stoul(raw.substr(at, eol - at), nullptr, 16);
    if (size == 0) break;
    body += raw.substr(eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return body;
}

/// Each line of an NDJSON body, parsed.
std::vector<json> ndjson_lines(const std::string& body) {
  std::vector<json> out;
  for (size_t at = 0; at < body.size();) {
    const size_t end = body.find('\n', at);
    out.push_back(json::parse(body.substr(at, end - at), nullptr, false));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

class RunStream : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // Logs, waits on a timer, then on the test's gate (only the test opens it), then logs again.
    write_skill(skills() / "chatty", "chatty",
                "export default async () => { log('first'); await new Promise((r) => setTimeout(r, 5)); "
                "const g = await openhuman.http.get('" +
                    gate_.url("/gate") + "'); log('second ' + g.status); return 'done'; }",
                R"("limits": {"timeout_ms": 60000}, "permissions": {"http": {"allow": [")" + gate_.origin() +
                    R"(/"], "allow_private_addresses": true}})");
    // Tries each permission its manifest grants and reports what it was allowed.
    write_skill(
        skills() / "probe", "probe",
        "export default async () => { const out = {};"
        " try { await openhuman.http.get('" +
            gate_.url("/plain") +
            "'); out.http = 'ok'; } catch (e) { out.http = e.name; }"
            " try { await openhuman.fs.writeFile('n.txt', 'x'); out.write = 'ok'; } catch (e) { "
            "out.write = e.name; }"
            " out.env = env.get('GREETING') ?? null; return out; }",
        R"("permissions": {"http": {"allow": [")" + gate_.origin() +
            R"(/"], "allow_private_addresses": true}, "fs": {"mode": "readwrite"}, "env": ["GREETING"]})");
    write_file(root() / "serve.toml",
               "listen = [\"127.0.0.1:0\"]\nisolation = \"" + GetParam() + "\"\nmetrics_key_sha256 = [\"" +
                   hash(kOperatorKey) + "\"]\n[tenants.a]\nkey_sha256 = [\"" + hash(kKey) +
                   "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n[tenants.a.env]\nGREETING = \"hello\"\n");
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (root() / "serve.toml").string()});
    ASSERT_FALSE(server_->url.empty());
  }

  fs::path root() const { return tmp_.path(); }
  fs::path skills() const { return root() / "skills"; }

  /// POST /v1/skills/SKILL/run asking for the stream, on a raw connection (closed by the caller).
  int stream_run(const std::string& skill, const std::string& body = "{}") const {
    const int fd = connect_raw(server_->url);
    EXPECT_TRUE(send_all(
        fd, "POST /v1/skills/" + skill + "/run HTTP/1.1\r\nHost: 127.0.0.1\r\n" + "Authorization: Bearer " +
                kKey + "\r\nAccept: application/x-ndjson\r\nContent-Length: " + std::to_string(body.size()) +
                "\r\n\r\n" + body));
    return fd;
  }

  /// Reads from `fd` into `text` until it holds `wanted` or 30 s pass; false then.
  static bool read_until(int fd, std::string& text, const std::string& wanted) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (text.find(wanted) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      text.append(buf, static_cast<size_t>(n));
    }
    return text.find(wanted) != std::string::npos;
  }

  HttpReply run(const std::string& skill, const std::string& body) const {
    return http("POST", server_->url + "/v1/skills/" + skill + "/run", kKey, body);
  }

  HttpTestServer gate_;
  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

INSTANTIATE_TEST_SUITE_P(Isolation, RunStream, ::testing::Values("inprocess", "process"));

TEST_P(RunStream, TheFirstLogLineArrivesWhileTheRunStillWaitsThenTheResultComesLast) {
  const int fd = stream_run("chatty");
  ASSERT_GE(fd, 0);
  std::string raw;
  // The run cannot end before the gate opens, and the gate opens only once the first line is here.
  ASSERT_TRUE(read_until(fd, raw, "\"message\":\"first\"")) << raw;
  EXPECT_TRUE(raw.starts_with("HTTP/1.1 200")) << raw;
  EXPECT_NE(raw.find("Content-Type: application/x-ndjson"), std::string::npos) << raw;
  EXPECT_NE(raw.find("Transfer-Encoding: chunked"), std::string::npos) << raw;
  EXPECT_EQ(raw.find("\"type\":\"result\""), std::string::npos) << raw;
  gate_.open_gate(1);
  ASSERT_TRUE(read_until(fd, raw, "\r\n0\r\n\r\n")) << raw;
  ::close(fd);

  const std::vector<json> lines = ndjson_lines(dechunk(raw));
  ASSERT_GE(lines.size(), 3u) << raw;
  std::vector<std::string> logs;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    ASSERT_TRUE(lines[i]["type"] == "log" || lines[i]["type"] == "event") << lines[i];
    EXPECT_TRUE(lines[i]["t_ms"].is_number()) << lines[i];
    if (lines[i]["type"] == "log") logs.push_back(lines[i]["message"]);
  }
  EXPECT_EQ(logs, (std::vector<std::string>{"first", "second 200"}));
  // The last line is the result, as `skillbox run --json-stream` ends.
  const json& result = lines.back();
  EXPECT_EQ(result["type"], "result") << result;
  EXPECT_EQ(result["outcome"], "ok") << result;
  EXPECT_EQ(result["value"], "done") << result;
  EXPECT_EQ(result["logs"].size(), 2u) << result;
}

TEST_P(RunStream, AClientThatLeavesTheStreamCancelsItsRun) {
  const int fd = stream_run("chatty");
  ASSERT_GE(fd, 0);
  std::string raw;
  ASSERT_TRUE(read_until(fd, raw, "\"message\":\"first\"")) << raw;
  ::close(fd);  // the run waits at the gate, which never opens
  std::string metrics;
  for (int i = 0; i < 300; ++i) {
    metrics = http("GET", server_->url + "/metrics", kOperatorKey).body;
    if (metrics.find("skillbox_runs_total{tenant=\"a\",outcome=\"cancelled\"} 1\n") != std::string::npos)
      break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_NE(metrics.find("skillbox_runs_total{tenant=\"a\",outcome=\"cancelled\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_TRUE(server_->wait_for_err("status=200 tenant=a outcome=cancelled")) << server_->err();
}

TEST_P(RunStream, ErrorsBeforeTheRunAreOrdinaryJsonErrors) {
  const HttpReply bad = http("POST", server_->url + "/v1/skills/chatty/run", kKey,
                             R"({"limits": {"steps": 0}})", {"Accept: application/x-ndjson"});
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.header("content-type"), "application/json");
  EXPECT_EQ(bad.json()["error"]["code"], "invalid_request") << bad.body;
  const HttpReply missing =
      http("POST", server_->url + "/v1/skills/nope/run", kKey, "{}", {"Accept: application/x-ndjson"});
  EXPECT_EQ(missing.status, 404) << missing.body;
  EXPECT_EQ(missing.json()["error"]["code"], "skill_not_found") << missing.body;
  // Without the Accept header, the same run is one JSON object.
  const HttpReply plain = run("probe", "{}");
  EXPECT_EQ(plain.header("content-type"), "application/json");
  EXPECT_EQ(plain.json()["outcome"], "ok") << plain.body;
}

TEST_P(RunStream, NarrowingTakesPermissionsAwayAndNeverGrantsAny) {
  const json granted = run("probe", "{}").json();
  EXPECT_EQ(granted["value"], json({{"http", "ok"}, {"write", "ok"}, {"env", "hello"}})) << granted;

  const json narrowed =
      run("probe", R"({"narrowing": {"deny_net": true, "fs_mode": "read", "deny_env": true}})").json();
  EXPECT_EQ(narrowed["value"],
            json({{"http", "PermissionDenied"}, {"write", "PermissionDenied"}, {"env", nullptr}}))
      << narrowed;
  // allow_http narrows to the intersection: another origin adds nothing, so the gate's origin is gone.
  const json elsewhere =
      run("probe", R"({"narrowing": {"allow_http": ["https://api.example.com/"]}})").json();
  EXPECT_EQ(elsewhere["value"]["http"], "PermissionDenied") << elsewhere;
  const json same = run("probe", R"({"narrowing": {"allow_http": [")" + gate_.origin() + R"(/"]}})").json();
  EXPECT_EQ(same["value"]["http"], "ok") << same;
}

TEST_P(RunStream, ABadNarrowingIs400NamingTheField) {
  const auto message = [&](const std::string& body) {
    const HttpReply r = run("probe", body);
    EXPECT_EQ(r.status, 400) << body << " -> " << r.body;
    EXPECT_EQ(r.json()["error"]["code"], "invalid_request") << r.body;
    return r.json()["error"]["message"].get<std::string>();
  };
  EXPECT_TRUE(
      message(R"({"narrowing": {"allow_http": ["ftp://x/"]}})").starts_with("narrowing.allow_http[0]: "));
  EXPECT_TRUE(message(R"({"narrowing": {"fs_mode": "all"}})").starts_with("narrowing.fs_mode: "));
  EXPECT_TRUE(message(R"({"narrowing": {"deny_net": "yes"}})").starts_with("narrowing.deny_net: "));
  EXPECT_TRUE(message(R"({"narrowing": {"allow_net": true}})").starts_with("narrowing.allow_net: unknown"));
  EXPECT_TRUE(message(R"({"narrowing": []})").starts_with("narrowing: "));
}

}  // namespace
}  // namespace skillbox::testing
