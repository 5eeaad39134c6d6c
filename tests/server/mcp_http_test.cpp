// MCP over Streamable HTTP: `/mcp` of a real `skillbox serve` on 127.0.0.1, seen as a client sees it:
// statuses, headers, JSON bodies and event streams. Each test runs with both isolation modes.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compat/bundle_support.h"
#include "serve_support.h"
#include "server/api_key.h"
#include "support/cli_exec.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kKeyA = "mcp-tenant-a-key-0123456789";
constexpr const char* kKeyB = "mcp-tenant-b-key-0123456789";
constexpr const char* kOperatorKey = "mcp-operator-key-0123456789";
constexpr const char* kAccept = "Accept: application/json, text/event-stream";
constexpr const char* kJson = "Content-Type: application/json";

std::string hash(const char* key) {
  return server::key_hash_hex(server::hash_api_key(key));
}

json initialize_message(int id = 1, const std::string& version = "2025-11-25") {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "initialize"},
          {"params",
           {{"protocolVersion", version},
            {"capabilities", json::object()},
            {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
}

json request(int id, const std::string& method, const json& params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

/// The data of each event of an event-stream body, as JSON.
std::vector<json> events(const HttpReply& r) {
  std::vector<json> out;
  size_t at = 0;
  while ((at = r.body.find("data: ", at)) != std::string::npos) {
    const size_t end = r.body.find('\n', at);
    out.push_back(json::parse(r.body.substr(at + 6, end - at - 6), nullptr, false));
    at = end;
  }
  return out;
}

/// One MCP client of the server: its URL, key and session.
struct Client {
  std::string base;  // "http://127.0.0.1:PORT"
  std::string key;
  std::string session;

  HttpReply post(const std::string& body, std::vector<std::string> headers = {kAccept, kJson}) const {
    if (!session.empty()) headers.push_back("Mcp-Session-Id: " + session);
    return http("POST", base + "/mcp", key, body, headers);
  }
  HttpReply post(const json& message) const { return post(message.dump()); }

  /// initialize and notifications/initialized; the session id is kept.
  void start() {
    const HttpReply r = post(initialize_message());
    ASSERT_EQ(r.status, 200) << r.body;
    session = r.header("mcp-session-id");
    ASSERT_FALSE(session.empty()) << r.body;
    EXPECT_EQ(post(json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).status, 202);
  }
};

class McpHttp : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    write_skill(
        root() / "a-skills" / "hello", "hello",
        "export default (i) => { log(`greeting ${i.name}`); return {greeting: `Hello, ${i.name}!`}; }");
    write_skill(root() / "a-skills" / "quiet", "quiet", "export default (i) => i.n * 2");
    write_skill(root() / "a-skills" / "spin", "spin",
                "export default () => new Promise((done) => setTimeout(() => done('late'), 30000))",
                R"("limits": {"timeout_ms": 60000})");
    const Bundle notes("notes", grants({}));
    fs::copy(notes.dir(), root() / "a-skills" / "notes", fs::copy_options::recursive);
    write_skill(root() / "a-skills" / "nap", "nap",
                "export default () => new Promise((done) => { log('napping'); setTimeout(() => "
                "done('rested'), 1000); })");
    write_skill(root() / "b-skills" / "bonly", "bonly", "export default () => 'b'");
    write_file(root() / "serve.toml", config_text(extra_config()));
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (root() / "serve.toml").string()});
    for (const std::string& line : server_->lines)
      if (line.starts_with("url: ")) urls_.push_back(line.substr(5));
    ASSERT_EQ(urls_.size(), 2u);
  }

  virtual std::string extra_config() const { return ""; }
  /// More keys of tenant a's table.
  virtual std::string tenant_a_config() const { return ""; }

  std::string config_text(const std::string& extra) const {
    return "listen = [\"127.0.0.1:0\", {address = \"127.0.0.1:0\", auth = \"none\", tenant = \"a\"}]\n"
           "isolation = \"" +
           GetParam() + "\"\nmetrics_key_sha256 = [\"" + hash(kOperatorKey) + "\"]\n" + extra +
           "[tenants.a]\nkey_sha256 = [\"" + hash(kKeyA) +
           "\"]\nskills = \"a-skills\"\ndata_dir = \"a-data\"\n" + tenant_a_config() +
           "[tenants.b]\nkey_sha256 = [\"" + hash(kKeyB) +
           "\"]\nskills = \"b-skills\"\ndata_dir = \"b-data\"\n"
           "[tenants.a.code]\nallow_upload = true\n";
  }

  fs::path root() const { return tmp_.path(); }
  Client client(const char* key = kKeyA) const { return Client{urls_[0], key, ""}; }

  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
  std::vector<std::string> urls_;
};

INSTANTIATE_TEST_SUITE_P(Isolation, McpHttp, ::testing::Values("inprocess", "process"));

TEST_P(McpHttp, InitializeGivesAnUnguessableSessionAndToolsAreTheTenantsSkills) {
  Client c = client();
  const HttpReply r = c.post(initialize_message());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.json()["result"]["protocolVersion"], "2025-11-25") << r.body;
  const std::string id = r.header("mcp-session-id");
  EXPECT_EQ(id.size(), 48u) << id;  // 192 random bits as hex
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  EXPECT_NE(c.post(initialize_message()).header("mcp-session-id"), id);  // each initialize, a new session

  c.session = id;
  const HttpReply list = c.post(request(2, "tools/list"));
  ASSERT_EQ(list.status, 200) << list.body;
  std::vector<std::string> names;
  const json listed = list.json();
  for (const json& t : listed["result"]["tools"]) names.push_back(t["name"].get<std::string>());
  EXPECT_NE(std::find(names.begin(), names.end(), "hello"), names.end()) << list.body;
  EXPECT_NE(std::find(names.begin(), names.end(), "notes__bump"), names.end()) << list.body;
  EXPECT_EQ(std::find(names.begin(), names.end(), "bonly"), names.end()) << list.body;  // tenant b's
}

TEST_P(McpHttp, ACallWithoutNotificationsIsOneJsonResponse) {
  Client c = client();
  c.start();
  const HttpReply r = c.post(request(3, "tools/call", {{"name", "quiet"}, {"arguments", {{"n", 21}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json");
  EXPECT_EQ(r.json()["id"], 3);
  EXPECT_EQ(r.json()["result"]["content"][0]["text"], "42") << r.body;
}

TEST_P(McpHttp, ACallThatLogsStreamsItsLogLinesThenItsResponse) {
  Client c = client();
  c.start();
  const HttpReply r = c.post(request(4, "tools/call", {{"name", "hello"}, {"arguments", {{"name", "Ada"}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_NE(r.body.find("event: message\ndata: "), std::string::npos) << r.body;
  const std::vector<json> e = events(r);
  ASSERT_EQ(e.size(), 2u) << r.body;
  EXPECT_EQ(e[0]["method"], "notifications/message");
  EXPECT_EQ(e[0]["params"]["data"], "greeting Ada");
  EXPECT_EQ(e[1]["id"], 4);
  EXPECT_EQ(e[1]["result"]["isError"], false) << r.body;

  // Below the level the client set, the log line is not sent: one JSON response again.
  EXPECT_EQ(c.post(request(5, "logging/setLevel", {{"level", "error"}})).status, 200);
  const HttpReply quiet =
      c.post(request(6, "tools/call", {{"name", "hello"}, {"arguments", {{"name", "B"}}}}));
  EXPECT_EQ(quiet.header("content-type"), "application/json") << quiet.body;
}

TEST_P(McpHttp, ProgressOfABundleCallArrivesOnItsStream) {
  Client c = client();
  c.start();
  const HttpReply r =
      c.post(request(7, "tools/call", {{"name", "notes__bump"}, {"_meta", {{"progressToken", "tok"}}}}));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  const std::vector<json> e = events(r);
  ASSERT_FALSE(e.empty()) << r.body;
  size_t progress = 0;
  for (const json& m : e)
    if (m.value("method", "") == "notifications/progress") {
      EXPECT_EQ(m["params"]["progressToken"], "tok");
      EXPECT_EQ(m["params"]["progress"], ++progress);
    }
  EXPECT_EQ(progress, 4u) << r.body;  // platform.notify, memory.insert, two cron registrations
  EXPECT_EQ(e.back()["id"], 7) << r.body;
  EXPECT_EQ(e.back()["result"]["content"][0]["text"], "1") << r.body;
}

TEST_P(McpHttp, SessionsAreRequiredKnownAndBoundToTheirTenant) {
  Client a = client();
  a.start();
  Client none = client();
  const HttpReply missing = none.post(request(2, "tools/list"));
  EXPECT_EQ(missing.status, 400) << missing.body;
  EXPECT_NE(missing.body.find("Mcp-Session-Id"), std::string::npos) << missing.body;
  none.session = std::string(48, 'a');
  EXPECT_EQ(none.post(request(2, "tools/list")).status, 404);

  // Tenant b with tenant a's session id: the same 404 as an unknown id.
  Client b{a.base, kKeyB, a.session};
  const HttpReply other = b.post(request(2, "tools/list"));
  EXPECT_EQ(other.status, 404) << other.body;
  EXPECT_EQ(other.json()["error"]["code"], -32001) << other.body;
  EXPECT_EQ(http("DELETE", a.base + "/mcp", kKeyB, std::nullopt, {"Mcp-Session-Id: " + a.session}).status,
            404);
  EXPECT_EQ(a.post(request(3, "tools/list")).status, 200);  // still a's

  // DELETE ends it; the id is then unknown.
  const HttpReply del =
      http("DELETE", a.base + "/mcp", kKeyA, std::nullopt, {"Mcp-Session-Id: " + a.session});
  EXPECT_EQ(del.status, 204) << del.body;
  EXPECT_EQ(a.post(request(4, "tools/list")).status, 404);
  EXPECT_EQ(http("DELETE", a.base + "/mcp", kKeyA, std::nullopt, {"Mcp-Session-Id: " + a.session}).status,
            404);
}

TEST_P(McpHttp, EndingASessionCancelsItsRunningCall) {
  Client c = client();
  c.start();
  auto call = std::async(std::launch::async, [&] {
    return c.post(request(9, "tools/call", {{"name", "spin"}}));
  });
  std::this_thread::sleep_for(1500ms);  // the call is running
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(http("DELETE", c.base + "/mcp", kKeyA, std::nullopt, {"Mcp-Session-Id: " + c.session}).status,
            204);
  ASSERT_EQ(call.wait_for(20s), std::future_status::ready);
  const HttpReply r = call.get();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json()["result"]["isError"], true) << r.body;
  EXPECT_TRUE(r.json()["result"]["content"][0]["text"].get<std::string>().starts_with("cancelled")) << r.body;
}

TEST_P(McpHttp, ACancelledCallEndsItsStreamWithoutAResponse) {
  Client c = client();
  c.start();
  auto call = std::async(std::launch::async, [&] {
    return c.post(request(11, "tools/call", {{"name", "spin"}}));
  });
  std::this_thread::sleep_for(1500ms);
  const HttpReply cancel = c.post(
      json{{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 11}}}});
  EXPECT_EQ(cancel.status, 202);
  ASSERT_EQ(call.wait_for(20s), std::future_status::ready);
  const HttpReply r = call.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream");
  EXPECT_TRUE(events(r).empty()) << r.body;  // MCP "Cancellation": no response for a cancelled request
  EXPECT_EQ(c.post(request(12, "ping")).status, 200);  // the session goes on
}

TEST_P(McpHttp, AClientThatDisconnectsDoesNotCancelItsCall) {
  Client c = client();
  c.start();
  const std::string body = request(13, "tools/call", {{"name", "nap"}}).dump();
  const int fd = connect_raw(c.base);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                               std::string(kKeyA) + "\r\n" + kAccept + "\r\n" + kJson +
                               "\r\nMcp-Session-Id: " + c.session +
                               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  std::this_thread::sleep_for(300ms);
  ::close(fd);  // gone while the call runs
  // MCP 2025-06-18 and 2025-11-25: disconnection is not cancellation; the run ends as it would have.
  const auto deadline = std::chrono::steady_clock::now() + 15s;
  std::string metrics;
  while (std::chrono::steady_clock::now() < deadline) {
    metrics = http("GET", c.base + "/metrics", kOperatorKey).body;
    if (metrics.find("skillbox_runs_total{tenant=\"a\",outcome=\"ok\"} 1\n") != std::string::npos) break;
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_NE(metrics.find("skillbox_runs_total{tenant=\"a\",outcome=\"ok\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("skillbox_runs_total{tenant=\"a\",outcome=\"cancelled\"} 0\n"), std::string::npos)
      << metrics;
  EXPECT_EQ(c.post(request(14, "ping")).status, 200);
}

/// Reads from `fd` until what was read holds `text`, at most `wait`; returns all that was read.
std::string read_until(int fd, const std::string& text, std::chrono::milliseconds wait) {
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (got.find(text) == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    char buf[4096];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

/// Opens the GET stream of `c`'s session on a raw connection; returns its fd (the stream's head read).
int open_stream(const Client& c) {
  const int fd = connect_raw(c.base);
  EXPECT_GE(fd, 0);
  EXPECT_TRUE(send_all(fd, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + c.key +
                               "\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + c.session + "\r\n\r\n"));
  const std::string head = read_until(fd, "skillbox: the session's stream", 20s);
  EXPECT_NE(head.find("HTTP/1.1 200"), std::string::npos) << head;
  EXPECT_NE(head.find("text/event-stream"), std::string::npos) << head;
  return fd;
}

TEST_P(McpHttp, TheSessionsStreamTellsOfASkillAddedToTheFolder) {
  Client c = client();
  c.start();
  const int fd = open_stream(c);
  // One stream per session while it is open.
  const HttpReply second = http("GET", c.base + "/mcp", kKeyA, std::nullopt,
                                {"Accept: text/event-stream", "Mcp-Session-Id: " + c.session});
  EXPECT_EQ(second.status, 409) << second.body;
  write_skill(root() / "a-skills" / "added", "added", "export default () => 'new'");
  const std::string got = read_until(fd, "notifications/tools/list_changed", 30s);
  EXPECT_NE(got.find(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}})"),
            std::string::npos)
      << got;
  const HttpReply listed = c.post(request(2, "tools/list"));
  EXPECT_NE(listed.body.find(R"("name":"added")"), std::string::npos) << listed.body;
  const HttpReply called = c.post(request(3, "tools/call", {{"name", "added"}}));
  EXPECT_EQ(called.json()["result"]["content"][0]["text"], "\"new\"") << called.body;
  // DELETE ends the stream: its last chunk, and the connection is free again.
  EXPECT_EQ(http("DELETE", c.base + "/mcp", kKeyA, std::nullopt, {"Mcp-Session-Id: " + c.session}).status,
            204);
  EXPECT_NE(read_until(fd, "0\r\n\r\n", 20s).find("0\r\n\r\n"), std::string::npos);
  ::close(fd);
}

TEST_P(McpHttp, AnUploadedSkillIsAToolAndEachNewVersionIsTold) {
  Client c = client();
  c.start();
  const int fd = open_stream(c);
  const auto upload = [&c](const std::string& js) {
    const json files = {{"skill.json", R"({"id": "sent", "entry": "index.js"})"}, {"index.js", js}};
    return http("PUT", c.base + "/v1/skills/sent", kKeyA, json{{"files", files}}.dump(), {kJson});
  };
  const std::string changed = R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}})";
  ASSERT_EQ(upload("export default () => 'first'").status, 201);
  std::string got = read_until(fd, changed, 30s);
  EXPECT_NE(got.find(changed), std::string::npos) << got;
  HttpReply called = c.post(request(2, "tools/call", {{"name", "sent"}}));
  EXPECT_EQ(called.json()["result"]["content"][0]["text"], "\"first\"") << called.body;
  // A new version with the same tool: the next call runs it at once (nothing to tell: the list is the same).
  ASSERT_EQ(upload("export default () => 'second'").status, 201);
  called = c.post(request(3, "tools/call", {{"name", "sent"}}));
  EXPECT_EQ(called.json()["result"]["content"][0]["text"], "\"second\"") << called.body;
  // One whose manifest names the skill: the tool has a new title, a new list told on the stream.
  const json described = {{"skill.json", R"({"id": "sent", "entry": "index.js", "name": "Sent Three"})"},
                          {"index.js", "export default () => 'third'"}};
  ASSERT_EQ(http("PUT", c.base + "/v1/skills/sent", kKeyA, json{{"files", described}}.dump(), {kJson}).status,
            201);
  got = read_until(fd, changed, 30s);
  EXPECT_NE(got.find(changed), std::string::npos) << got;
  EXPECT_NE(c.post(request(4, "tools/list")).body.find(R"("title":"Sent Three")"), std::string::npos);
  // Deleted: told, and no longer called.
  ASSERT_EQ(http("DELETE", c.base + "/v1/skills/sent", kKeyA, std::nullopt, {}).status, 204);
  got = read_until(fd, changed, 30s);
  EXPECT_NE(got.find(changed), std::string::npos) << got;
  EXPECT_EQ(c.post(request(5, "tools/call", {{"name", "sent"}})).json()["error"]["code"], -32602);
  // Another tenant's session neither lists nor calls it.
  Client b = client(kKeyB);
  b.start();
  EXPECT_EQ(b.post(request(2, "tools/list")).body.find(R"("name":"sent")"), std::string::npos);
  EXPECT_EQ(b.post(request(3, "tools/call", {{"name", "sent"}})).json()["error"]["code"], -32602);
  ::close(fd);
}

TEST_P(McpHttp, ToolsListSeesTheFolderAsItIsNow) {
  Client c = client();
  c.start();
  write_skill(root() / "a-skills" / "fresh", "fresh", "export default () => 1");
  const HttpReply listed = c.post(request(2, "tools/list"));  // no wait for the sweeper
  EXPECT_NE(listed.body.find(R"("name":"fresh")"), std::string::npos) << listed.body;
  fs::remove_all(root() / "a-skills" / "fresh");
  EXPECT_EQ(c.post(request(4, "tools/list")).body.find(R"("name":"fresh")"), std::string::npos);
  EXPECT_EQ(c.post(request(5, "tools/call", {{"name", "fresh"}})).json()["error"]["code"], -32602);
}

TEST_P(McpHttp, TheStreamIsRefusedWithoutASessionAndEndsWhenTheServerDrains) {
  Client c = client();
  c.start();
  EXPECT_EQ(http("GET", c.base + "/mcp", kKeyA, std::nullopt, {"Accept: text/event-stream"}).status, 400);
  EXPECT_EQ(
      http("GET", c.base + "/mcp", kKeyA, std::nullopt,
           {"Accept: text/event-stream", "Mcp-Session-Id: 00112233445566778899aabbccddeeff0011223344556677"})
          .status,
      404);
  EXPECT_EQ(http("GET", c.base + "/mcp", kKeyA, std::nullopt,
                 {"Accept: application/json", "Mcp-Session-Id: " + c.session})
                .status,
            406);
  const HttpReply put = http("PUT", c.base + "/mcp", kKeyA, std::string("{}"), {kJson});
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(put.header("allow"), "GET, POST, DELETE");
  const int fd = open_stream(c);
  // SIGTERM: the open stream ends with the drain, long before drain_timeout_ms (30 s) would pass.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(server_->stop(SIGTERM), 0) << server_->err();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  ::close(fd);
}

TEST_P(McpHttp, TransportRulesAreEnforcedAndBadInputNeverStopsTheServer) {
  Client c = client();
  c.start();
  // DNS rebinding: a foreign Origin is refused, key or not; a loopback origin and none are served.
  EXPECT_EQ(c.post(request(2, "ping").dump(), {kAccept, kJson, "Origin: http://evil.example"}).status, 403);
  EXPECT_EQ(c.post(request(2, "ping").dump(), {kAccept, kJson, "Origin: http://localhost:6274"}).status, 200);
  // The client must take both JSON and event streams.
  EXPECT_EQ(c.post(request(2, "ping").dump(), {"Accept:", kJson}).status, 406);
  EXPECT_EQ(c.post(request(2, "ping").dump(), {"Accept: application/json", kJson}).status, 406);
  EXPECT_EQ(c.post(request(2, "ping").dump(), {kAccept, "Content-Type: text/plain"}).status, 415);
  // Protocol version header: supported, or absent; anything else is 400.
  EXPECT_EQ(c.post(request(2, "ping").dump(), {kAccept, kJson, "MCP-Protocol-Version: 2025-06-18"}).status,
            200);
  const HttpReply old =
      c.post(request(2, "ping").dump(), {kAccept, kJson, "MCP-Protocol-Version: 1999-01-01"});
  EXPECT_EQ(old.status, 400) << old.body;
  EXPECT_NE(old.body.find("1999-01-01"), std::string::npos) << old.body;
  // A batch (removed in 2025-06-18) and text that is not JSON: JSON-RPC errors with 400.
  const HttpReply batch = c.post(json::array({request(2, "ping"), request(3, "ping")}));
  EXPECT_EQ(batch.status, 400) << batch.body;
  EXPECT_EQ(batch.json()["error"]["code"], -32600) << batch.body;
  const HttpReply junk = c.post(std::string("{\"jsonrpc\":"));
  EXPECT_EQ(junk.status, 400) << junk.body;
  EXPECT_EQ(junk.json()["error"]["code"], -32700) << junk.body;
  // A notification is accepted with 202 and no body.
  const HttpReply note = c.post(json{{"jsonrpc", "2.0"}, {"method", "notifications/progress"}});
  EXPECT_EQ(note.status, 202);
  EXPECT_TRUE(note.body.empty()) << note.body;
  // A GET without a session opens no stream; no key.
  const HttpReply get = http("GET", c.base + "/mcp", kKeyA, std::nullopt, {kAccept});
  EXPECT_EQ(get.status, 400);
  EXPECT_EQ(get.json()["error"]["code"], -32000) << get.body;
  const Client keyless{c.base, "", c.session};
  EXPECT_EQ(keyless.post(request(2, "ping")).status, 401);
  // Still serving.
  EXPECT_EQ(c.post(request(10, "ping")).json()["result"], json::object());
}

TEST_P(McpHttp, AnUnauthenticatedLoopbackListenerServesOnlyMcpAsItsTenant) {
  Client c{urls_[1], "", ""};
  c.start();
  const HttpReply r = c.post(request(2, "tools/call", {{"name", "quiet"}, {"arguments", {{"n", 2}}}}));
  EXPECT_EQ(r.json()["result"]["content"][0]["text"], "4") << r.body;
  EXPECT_EQ(http("GET", urls_[1] + "/v1/skills").status, 404);
  // DNS rebinding: a name that is not a loopback one in Host is refused there.
  EXPECT_EQ(c.post(request(4, "ping").dump(), {kAccept, kJson, "Host: rebound.example:8081"}).status, 403);
  EXPECT_EQ(c.post(request(4, "ping").dump(), {kAccept, kJson, "Host: localhost:8081"}).status, 200);
  EXPECT_EQ(http("GET", urls_[1] + "/metrics", kOperatorKey).status, 404);
  // The same session id on the keyed listener with tenant b's key: unknown.
  const Client b{urls_[0], kKeyB, c.session};
  EXPECT_EQ(b.post(request(3, "tools/list")).status, 404);
}

TEST_P(McpHttp, MetricsCountSessionsAndCalls) {
  Client c = client();
  c.start();
  c.post(request(2, "tools/call", {{"name", "quiet"}, {"arguments", {{"n", 1}}}}));
  const HttpReply m = http("GET", c.base + "/metrics", kOperatorKey);
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("skillbox_mcp_sessions{tenant=\"a\"} 1\n"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("skillbox_mcp_calls_total{tenant=\"a\"} 1\n"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("skillbox_runs_total{tenant=\"a\",outcome=\"ok\"} 1\n"), std::string::npos) << m.body;
}

/// One run thread: a second request waits in the queue while the first runs.
class McpHttpOneThread : public McpHttp {
  std::string extra_config() const override { return "run_threads = 1\n"; }
};

INSTANTIATE_TEST_SUITE_P(Isolation, McpHttpOneThread, ::testing::Values("inprocess", "process"));

TEST_P(McpHttpOneThread, ACallsTimeoutCountsFromItsArrivalNotFromItsStart) {
  write_skill(root() / "a-skills" / "slow", "slow",
              "export default () => new Promise((done) => setTimeout(() => done('slept'), 600))",
              R"("limits": {"timeout_ms": 1000})");
  Client c = client();
  c.start();
  ASSERT_NE(c.post(request(2, "tools/list")).body.find(R"("name":"slow")"), std::string::npos);
  // Alone, it ends well inside its timeout.
  EXPECT_EQ(c.post(request(3, "tools/call", {{"name", "slow"}})).json()["result"]["content"][0]["text"],
            "\"slept\"");
  // Behind nap (1 s) on the only run thread, it waits about 1 s: past its 1,000 ms before it starts.
  const int fd = connect_raw(c.base);
  ASSERT_GE(fd, 0);
  const std::string body = request(4, "tools/call", {{"name", "nap"}}).dump();
  ASSERT_TRUE(send_all(fd, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                               std::string(kKeyA) + "\r\n" + kAccept + "\r\n" + kJson +
                               "\r\nMcp-Session-Id: " + c.session +
                               "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  ASSERT_NE(read_until(fd, "napping", 30s).find("napping"), std::string::npos);  // nap runs
  const HttpReply queued = c.post(request(5, "tools/call", {{"name", "slow"}}));
  ASSERT_EQ(queued.status, 200) << queued.body;
  EXPECT_EQ(queued.json()["result"]["isError"], true) << queued.body;
  EXPECT_TRUE(queued.json()["result"]["content"][0]["text"].get<std::string>().starts_with("timeout"))
      << queued.body;
  ::close(fd);
}

/// Tenant a may start one run a minute.
class McpHttpQuota : public McpHttp {
  std::string tenant_a_config() const override { return "runs_per_minute = 1\n"; }
};

INSTANTIATE_TEST_SUITE_P(Isolation, McpHttpQuota, ::testing::Values("inprocess"));

// A tools/call is a run: it takes from the tenant's runs_per_minute as a /v1 run does, from the same
// bucket, and a refused one is a 429 with Retry-After whose JSON-RPC error names the quota.
TEST_P(McpHttpQuota, ToolCallsTakeFromTheTenantsQuotas) {
  Client c = client();
  c.start();
  const HttpReply first = c.post(request(2, "tools/call", {{"name", "quiet"}, {"arguments", {{"n", 2}}}}));
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json()["result"]["content"][0]["text"], "4") << first.body;
  const HttpReply second = c.post(request(3, "tools/call", {{"name", "quiet"}, {"arguments", {{"n", 3}}}}));
  EXPECT_EQ(second.status, 429) << second.body;
  EXPECT_GE(std::stoi(second.header("retry-after")), 1) << second.body;
  EXPECT_EQ(second.json()["id"], 3) << second.body;
  EXPECT_NE(second.json()["error"]["message"].get<std::string>().find("runs_per_minute"), std::string::npos)
      << second.body;
  EXPECT_EQ(c.post(request(4, "tools/list")).status, 200);  // listing is not a run
  EXPECT_EQ(http("POST", c.base + "/v1/skills/quiet/run", kKeyA, R"({"input": {"n": 1}})").status, 429);
  // Tenant b's bucket is its own.
  EXPECT_EQ(http("POST", c.base + "/v1/skills/bonly/run", kKeyB, "{}").status, 200);
}

class McpHttpBounds : public McpHttp {
  std::string extra_config() const override {
    return "[mcp]\nmax_sessions_per_tenant = 2\nsession_idle_timeout_ms = 1500\n";
  }
};

INSTANTIATE_TEST_SUITE_P(Isolation, McpHttpBounds, ::testing::Values("inprocess"));

TEST_P(McpHttpBounds, SessionsAreCappedPerTenantAndExpireWhenIdle) {
  Client first = client();
  first.start();
  client().start();
  const HttpReply third = client().post(initialize_message());
  EXPECT_EQ(third.status, 429) << third.body;
  EXPECT_NE(third.body.find("max_sessions_per_tenant"), std::string::npos) << third.body;
  EXPECT_EQ(client(kKeyB).post(initialize_message()).status, 200);  // another tenant's cap is its own
  std::this_thread::sleep_for(3500ms);
  EXPECT_EQ(first.post(request(2, "tools/list")).status, 404);
  EXPECT_EQ(client().post(initialize_message()).status, 200);
}

TEST(McpHttpConfig, AnUnauthenticatedListenerMustBeLoopback) {
  CliOptions quick;
  quick.timeout_s = 30;  // a refused start is immediate
  TempDir tmp;
  write_file(tmp.path() / "serve.toml",
             "listen = [{address = \"0.0.0.0:0\", auth = \"none\", tenant = \"a\"}]\n"
             "[tenants.a]\nskills = \"s\"\ndata_dir = \"d\"\n");
  const CliExec r = run_cli({"serve", "--config", (tmp.path() / "serve.toml").string()}, quick);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("listen[0].auth"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("loopback"), std::string::npos) << r.err;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// The curl session of docs/mcp.md "Over HTTP", as written, against a real server: every command succeeds
// (curl --fail-with-body) and the call's answer is there.
TEST(McpHttpDocs, TheCurlSessionWorksAsWritten) {
  std::ifstream doc(SKILLBOX_MCP_DOC);
  ASSERT_TRUE(doc) << SKILLBOX_MCP_DOC;
  std::stringstream text;
  text << doc.rdbuf();
  std::string script;
  bool in_sh = false;
  for (std::string line; std::getline(text, line);) {
    if (line.starts_with("```")) {
      in_sh = line == "```sh";
      continue;
    }
    if (in_sh) script += line + "\n";
  }
  ASSERT_NE(script.find("initialize"), std::string::npos) << "no ```sh block in docs/mcp.md";

  TempDir tmp;
  write_skill(tmp.path() / "s" / "hello", "hello",
              "export default (i) => { log(`greeting ${i.name}`); return {greeting: `Hello, ${i.name}!`}; }");
  write_file(tmp.path() / "serve.toml",
             "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\n[tenants.a]\nkey_sha256 = [\"" +
                 hash(kKeyA) + "\"]\nskills = \"s\"\ndata_dir = \"d\"\n");
  ServeProcess server({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_FALSE(server.url.empty());
  const std::string body = replace_all(replace_all(script, "http://127.0.0.1:8080", server.url), "curl ",
                                       "curl --noproxy '*' --fail-with-body ");
  write_file(tmp.path() / "session.sh", "set -euo pipefail\nexport KEY=" + std::string(kKeyA) + "\n" + body);
  const std::string command = "bash " + (tmp.path() / "session.sh").string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_NE(out.find("\"name\":\"hello\""), std::string::npos) << out;  // tools/list
  EXPECT_NE(out.find("event: message\ndata: "), std::string::npos) << out;
  EXPECT_NE(out.find("greeting Ada"), std::string::npos) << out;
  EXPECT_NE(out.find("Hello, Ada!"), std::string::npos) << out;
  // The DELETE ended the session: the server holds none.
  EXPECT_NE(server.err().find("\"DELETE /mcp\" status=204"), std::string::npos) << server.err();
}

}  // namespace
}  // namespace skillbox::testing
