// A tenant's env values, credentials and origin map from the config file (docs/server.md
// "Env values, credentials and origin maps"), as a client and a server on the far side see them: env.get
// reads only the names the manifest declares and only the tenant's own values; a credential reaches the
// loopback server its origin is mapped to, while the run result, the log and the audit hold only
// placeholders (the audit names the origin the run contacted, as the skill named it); a SIGHUP reload
// applies new values.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compat/bundle_support.h"
#include "serve_support.h"
#include "server/api_key.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kKeyA = "secrets-tenant-a-key-0123456789";
constexpr const char* kKeyB = "secrets-tenant-b-key-0123456789";
constexpr const char* kToken = "ya29.TENANT-A-REAL-TOKEN-5e6f7a";

std::string hash(const char* key) {
  return server::key_hash_hex(server::hash_api_key(key));
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class TenantSecrets : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* t : {"a", "b"}) {
      // Reads a declared name and one it does not declare.
      write_skill(root() / (std::string(t) + "-skills") / "envy", "envy",
                  "export default () => [env.get('GREETING') ?? null, env.get('UNDECLARED') ?? null]",
                  R"("permissions": {"env": ["GREETING"]})");
    }
    // The mailbox bundle reaches https://proxy.example with oauth.fetch; the operator grants that origin
    // (and not the loopback server, which only the origin map reaches).
    const Bundle mailbox("mailbox", "");
    fs::copy(mailbox.dir(), root() / "a-skills" / "mailbox", fs::copy_options::recursive);
    write_file(root() / "a-skills" / "mailbox" / "skill.json",
               R"({"permissions": {"http": {"allow": ["https://proxy.example/"]}}})");
    write_config("hello from the config");
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (root() / "serve.toml").string()});
    ASSERT_FALSE(server_->url.empty());
  }

  void write_config(const std::string& greeting) {
    write_file(root() / "serve.toml",
               "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\naudit = \"audit.jsonl\"\n"
               "[tenants.a]\nkey_sha256 = [\"" +
                   hash(kKeyA) +
                   "\"]\nskills = \"a-skills\"\ndata_dir = \"a-data\"\n"
                   "[tenants.a.env]\nGREETING = \"" +
                   greeting +
                   "\"\nUNDECLARED = \"never seen\"\n"
                   "[tenants.a.origin_map]\n\"https://proxy.example\" = \"" +
                   proxy_.origin() +
                   "\"\n"
                   "[tenants.a.credentials.mailbox.oauth]\ncredentialId = \"c1\"\naccessToken = \"" +
                   kToken +
                   "\"\nbaseUrl = \"https://proxy.example\"\n"
                   "[tenants.b]\nkey_sha256 = [\"" +
                   hash(kKeyB) + "\"]\nskills = \"b-skills\"\ndata_dir = \"b-data\"\n");
  }

  HttpReply run(const char* key, const std::string& skill, const std::string& body = "{}") const {
    return http("POST", server_->url + "/v1/skills/" + skill + "/run", key, body);
  }

  fs::path root() const { return tmp_.path(); }

  HttpTestServer proxy_;
  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(TenantSecrets, EnvGetReadsOnlyDeclaredNamesOfItsOwnTenant) {
  const HttpReply a = run(kKeyA, "envy");
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.json()["value"], json({"hello from the config", nullptr})) << a.body;
  // Tenant b has no env values, and the server's own environment is never read.
  EXPECT_EQ(run(kKeyB, "envy").json()["value"], json({nullptr, nullptr}));
}

TEST_F(TenantSecrets, ACredentialReachesTheMappedLoopbackServerAndNeverTheResultOrTheAudit) {
  const HttpReply r = run(kKeyA, "mailbox", R"({"export": "tool:inbox"})");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json()["outcome"], "ok") << r.body;
  // The loopback server, reached through the origin map, saw the real token.
  EXPECT_TRUE(saw_header(proxy_.recorded(), "Authorization", std::string("Bearer ") + kToken))
      << "the proxy saw " << proxy_.recorded().size() << " requests";
  // The bundle saw, and its result holds, only a placeholder.
  EXPECT_EQ(r.body.find(kToken), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("skillbox-secret:mailbox/oauth/accessToken/"), std::string::npos) << r.body;
  EXPECT_TRUE(server_->wait_for_err("\"POST /v1/skills/mailbox/run\" status=200"));
  EXPECT_EQ(server_->err().find(kToken), std::string::npos);
  const std::string audit = read_all(root() / "audit.jsonl");
  EXPECT_EQ(audit.find(kToken), std::string::npos);
  // The audit line names the origin the run contacted as the skill named it (not the stand-in), and no
  // path or query.
  const std::string id = r.header("x-request-id");
  const size_t at = audit.find(id);
  ASSERT_NE(at, std::string::npos) << audit;
  const size_t start = audit.rfind('\n', at);
  const json line =
      json::parse(audit.substr(start == std::string::npos ? 0 : start + 1,
                               audit.find('\n', at) - (start == std::string::npos ? 0 : start + 1)));
  EXPECT_EQ(line["origins"], json::array({"https://proxy.example"})) << line;
  // Tenant b has no such skill, credential or map: nothing of a's reaches it.
  EXPECT_EQ(run(kKeyB, "mailbox", R"({"export": "tool:inbox"})").status, 404);
}

// A tools/call over /mcp is audited as a /v1 run is: the request's line names the skill, its digest,
// the tool, the permissions, the outcome, the usage and the origins the run contacted; never the secret.
TEST_F(TenantSecrets, AnMcpToolCallsAuditLineNamesItsRunsFactsAndOrigins) {
  const std::vector<std::string> headers = {"Accept: application/json, text/event-stream",
                                            "Content-Type: application/json"};
  const std::string mcp = server_->url + "/mcp";
  const HttpReply init = http("POST", mcp, kKeyA,
                              R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                              R"("protocolVersion":"2025-11-25","capabilities":{},)"
                              R"("clientInfo":{"name":"audit-test","version":"1"}}})",
                              headers);
  ASSERT_EQ(init.status, 200) << init.body;
  std::vector<std::string> in_session = headers;
  in_session.push_back("Mcp-Session-Id: " + init.header("mcp-session-id"));
  const HttpReply call = http("POST", mcp, kKeyA,
                              R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{)"
                              R"("name":"mailbox__inbox","arguments":{}}})",
                              in_session);
  ASSERT_EQ(call.status, 200) << call.body;
  ASSERT_NE(call.body.find("\"isError\":false"), std::string::npos) << call.body;
  // A call that streamed (its log lines) is audited once its last chunk went out, which may be just after
  // the client read it: wait for the line.
  std::string audit;
  json line;
  for (int i = 0; i < 500 && !line.is_object(); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    audit = read_all(root() / "audit.jsonl");
    std::istringstream lines(audit);
    for (std::string text; std::getline(lines, text);) {
      const json j = json::parse(text, nullptr, false);
      if (j.is_object() && j["request_id"] == call.header("x-request-id")) line = j;
    }
  }
  ASSERT_TRUE(line.is_object()) << audit;
  EXPECT_EQ(audit.find(kToken), std::string::npos);
  EXPECT_EQ(line["route"], "POST /mcp") << line;
  EXPECT_EQ(line["skill"], "mailbox") << line;
  EXPECT_EQ(line["export"], "mailbox__inbox") << line;
  EXPECT_EQ(line["outcome"], "ok") << line;
  EXPECT_TRUE(line["digest"].is_string() && !line["digest"].get<std::string>().empty()) << line;
  EXPECT_GT(line["usage"]["steps"].get<uint64_t>(), 0u) << line;
  EXPECT_TRUE(line["permissions"].is_object()) << line;
  EXPECT_EQ(line["origins"], json::array({"https://proxy.example"})) << line;
}

TEST_F(TenantSecrets, AReloadAppliesNewEnvValues) {
  write_config("hello after the reload");
  server_->signal(SIGHUP);
  ASSERT_TRUE(server_->wait_for_err("config reloaded from")) << server_->err();
  EXPECT_EQ(run(kKeyA, "envy").json()["value"][0], "hello after the reload");
}

}  // namespace
}  // namespace skillbox::testing
