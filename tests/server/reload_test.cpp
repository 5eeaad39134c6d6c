// SIGHUP reloads the config file (server/server.cpp Server::reload): a tenant's new key works and its
// old one stops at once, a connection opened before the reload still serves, a run in flight keeps the
// ceilings it started with, and a bad config is refused with its key path while the old one serves on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

constexpr const char* kOldKey = "reload-old-key-0123456789";
constexpr const char* kNewKey = "reload-new-key-0123456789";
constexpr const char* kOperatorKey = "reload-operator-key-0123456789";

std::string hash(const char* key) {
  return server::key_hash_hex(server::hash_api_key(key));
}

class Reload : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(tmp_.path() / "skills" / "greet", "greet", "export default () => 'hi'");
    // Busy for 1.5 s of wall time, well inside its own limits.
    write_skill(tmp_.path() / "skills" / "busy", "busy",
                "export default () => { const end = Date.now() + 1500; while (Date.now() < end) {} "
                "return 'done'; }",
                R"("limits": {"timeout_ms": 30000, "steps": 100000000000})");
    write_config(kOldKey, "timeout_ms = 30000");
    server_ = std::make_unique<ServeProcess>(std::vector<std::string>{"--config", config_.string()});
    ASSERT_FALSE(server_->url.empty());
  }

  void write_config(const char* key, const std::string& ceilings, const std::string& extra = "") {
    write_file(config_,
               "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\nidle_timeout_ms = 60000\n"
               "metrics_key_sha256 = [\"" +
                   hash(kOperatorKey) + "\"]\n[tenants.t]\nkey_sha256 = [\"" + hash(key) +
                   "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n" + extra + "[tenants.t.ceilings]\n" +
                   ceilings + "\n");
  }

  /// Sends SIGHUP and waits for the log line of the reload it causes (the `count`th of its kind).
  void reload(const std::string& line, int count = 1) {
    server_->signal(SIGHUP);
    for (int i = 0; i < 600 && occurrences(line) < count; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_GE(occurrences(line), count) << "no \"" << line << "\" in the log:\n" << server_->err();
  }

  int occurrences(const std::string& text) const {
    const std::string err = server_->err();
    int n = 0;
    for (size_t at = err.find(text); at != std::string::npos; at = err.find(text, at + 1)) ++n;
    return n;
  }

  TempDir tmp_;
  std::filesystem::path config_ = tmp_.path() / "serve.toml";
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Reload, ANewKeyWorksTheOldOneIsRefusedAndAnOpenConnectionStillServes) {
  const int kept = connect_raw(server_->url);
  ASSERT_GE(kept, 0);
  const std::string before =
      std::string("GET /v1/skills HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ") + kOldKey +
      "\r\n\r\n";
  ASSERT_TRUE(send_all(kept, before));
  ASSERT_TRUE(read_reply(kept).starts_with("HTTP/1.1 200"));

  write_config(kNewKey, "timeout_ms = 30000");
  reload("config reloaded from");

  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kOldKey).status, 401);
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kNewKey).status, 200);
  // The connection opened before the reload was not dropped: it serves the new key, refuses the old.
  ASSERT_TRUE(
      send_all(kept, std::string("GET /v1/skills HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ") +
                         kNewKey + "\r\n\r\n"));
  EXPECT_TRUE(read_reply(kept).starts_with("HTTP/1.1 200"));
  ASSERT_TRUE(send_all(kept, before));
  EXPECT_TRUE(read_reply(kept).starts_with("HTTP/1.1 401"));
  ::close(kept);
}

TEST_F(Reload, ABadConfigIsRefusedWithItsKeyAndTheOldOneServesOn) {
  write_config(kNewKey, "timeout_ms = 30000", "max_concurrent_runs = \"lots\"\n");
  reload("reload refused");
  const std::string err = server_->err();
  EXPECT_NE(
      err.find(
          "reload refused, the running config stays: " + config_.string() +
          ": tenants.t.max_concurrent_runs: expected an integer from 1 to 10000, got the string \"lots\""),
      std::string::npos)
      << err;
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kOldKey).status, 200);
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kNewKey).status, 401);

  // A change the server cannot make on reload is logged and left out; the rest applies.
  write_file(config_, "listen = [\"127.0.0.1:1\"]\nisolation = \"inprocess\"\n[tenants.t]\nkey_sha256 = [\"" +
                          hash(kNewKey) + "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
  reload("config reloaded from");
  EXPECT_NE(server_->err().find("reload: listen cannot change on reload"), std::string::npos)
      << server_->err();
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kNewKey).status, 200);
}

TEST_F(Reload, ARunInFlightKeepsTheCeilingsItStartedWith) {
  HttpReply first;
  std::thread run([&] { first = http("POST", server_->url + "/v1/skills/busy/run", kOldKey, "{}"); });
  // Wait until the run is on a run thread (the operator's metrics say so).
  bool in_flight = false;
  for (int i = 0; i < 300 && !in_flight; ++i) {
    in_flight = http("GET", server_->url + "/metrics", kOperatorKey)
                    .body.find("skillbox_runs_in_flight{tenant=\"t\"} 1") != std::string::npos;
    if (!in_flight) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(in_flight);
  write_config(kOldKey, "timeout_ms = 300");
  reload("config reloaded from");
  run.join();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.json()["outcome"], "ok") << first.body;
  const HttpReply second = http("POST", server_->url + "/v1/skills/busy/run", kOldKey, "{}");
  EXPECT_EQ(second.json()["outcome"], "timeout") << second.body;
}

// /mcp follows the reload too: a tenant added by it opens a session that serves its own skills, and a
// session opened before it serves on, bound to its tenant.
TEST_F(Reload, McpServesATenantTheReloadAddedAndKeepsTheSessionsItHad) {
  const std::vector<std::string> headers = {"Accept: application/json, text/event-stream",
                                            "Content-Type: application/json"};
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  const std::string list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})";
  const auto with_session = [&](const std::string& session) {
    std::vector<std::string> h = headers;
    h.push_back("Mcp-Session-Id: " + session);
    return h;
  };
  const HttpReply before = http("POST", server_->url + "/mcp", kOldKey, initialize, headers);
  ASSERT_EQ(before.status, 200) << before.body;
  const std::string kept = before.header("mcp-session-id");
  ASSERT_FALSE(kept.empty());

  write_skill(tmp_.path() / "u-skills" / "uonly", "uonly", "export default () => 'u'");
  write_config(kOldKey, "timeout_ms = 30000\n[tenants.u]\nkey_sha256 = [\"" + hash(kNewKey) +
                            "\"]\nskills = \"u-skills\"\ndata_dir = \"u-data\"");
  reload("config reloaded from");

  const HttpReply added = http("POST", server_->url + "/mcp", kNewKey, initialize, headers);
  ASSERT_EQ(added.status, 200) << added.body << server_->err();
  const std::string fresh = added.header("mcp-session-id");
  const HttpReply u_tools = http("POST", server_->url + "/mcp", kNewKey, list, with_session(fresh));
  ASSERT_EQ(u_tools.status, 200) << u_tools.body;
  EXPECT_NE(u_tools.body.find("\"uonly\""), std::string::npos) << u_tools.body;
  EXPECT_EQ(u_tools.body.find("\"greet\""), std::string::npos) << u_tools.body;

  const HttpReply t_tools = http("POST", server_->url + "/mcp", kOldKey, list, with_session(kept));
  ASSERT_EQ(t_tools.status, 200) << t_tools.body;
  EXPECT_NE(t_tools.body.find("\"greet\""), std::string::npos) << t_tools.body;
  EXPECT_EQ(t_tools.body.find("\"uonly\""), std::string::npos) << t_tools.body;
  // Each session stays its tenant's: the other key gets the answer of an unknown session.
  EXPECT_EQ(http("POST", server_->url + "/mcp", kNewKey, list, with_session(kept)).status, 404);
  EXPECT_EQ(http("POST", server_->url + "/mcp", kOldKey, list, with_session(fresh)).status, 404);
}

}  // namespace
}  // namespace skillbox::testing
