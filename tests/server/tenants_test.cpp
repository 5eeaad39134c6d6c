// Two tenants from one config file: whatever tenant A sends (guessed ids, path tricks, B's key in the
// query string), it never lists, describes or runs B's skills, and a run of A never sees B's store.
// Also: a bad config is refused at start, naming the key.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "serve_support.h"
#include "server/api_key.h"
#include "support/cli_exec.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyA = "tenant-a-key-0123456789abcdef";
constexpr const char* kKeyB = "tenant-b-key-0123456789abcdef";
/// Counts its runs in the store: the count says whose store a run saw.
constexpr const char* kCounter =
    "export default () => { const n = (store.get('runs') ?? 0) + 1; store.set('runs', n); return n; }";

class TwoTenants : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(root() / "a-skills" / "counter", "counter", kCounter);
    write_skill(root() / "a-skills" / "aonly", "aonly", "export default () => 'a'",
                R"("limits": {"timeout_ms": 4000})");
    write_skill(root() / "b-skills" / "counter", "counter", kCounter);
    write_skill(root() / "b-skills" / "bonly", "bonly", "export default () => 'secret of b'");
    write_file(root() / "serve.toml", config_text());
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (root() / "serve.toml").string()});
  }

  std::string config_text() const {
    return "listen = [\"127.0.0.1:0\"]\n"
           "[tenants.a]\n"
           "key_sha256 = [\"" +
           server::key_hash_hex(server::hash_api_key(kKeyA)) +
           "\"]\n"
           "skills = \"a-skills\"\n"  // relative: to the config file's folder
           "data_dir = \"a-data\"\n"
           "[tenants.a.ceilings]\n"
           "timeout_ms = 2000\n"
           "[tenants.b]\n"
           "key_sha256 = [\"" +
           server::key_hash_hex(server::hash_api_key(kKeyB)) +
           "\"]\n"
           "skills = \"b-skills\"\n"
           "data_dir = \"b-data\"\n";
  }

  fs::path root() const { return tmp_.path(); }
  std::string url(const std::string& path) const { return server_->url + path; }

  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

std::vector<std::string> listed_ids(const HttpReply& r) {
  std::vector<std::string> ids;
  const nlohmann::json list = r.json();  // kept: a range-for over r.json()["skills"] would dangle
  for (const auto& s : list["skills"]) ids.push_back(s["id"]);
  return ids;
}

TEST_F(TwoTenants, EachKeySeesOnlyItsTenantsSkills) {
  EXPECT_TRUE(server_->key.empty());  // keys come from the config: none is printed
  EXPECT_EQ(listed_ids(http("GET", url("/v1/skills"), kKeyA)),
            (std::vector<std::string>{"aonly", "counter"}));
  EXPECT_EQ(listed_ids(http("GET", url("/v1/skills"), kKeyB)),
            (std::vector<std::string>{"bonly", "counter"}));
  EXPECT_EQ(http("GET", url("/v1/skills/bonly"), kKeyA).status, 404);
  const HttpReply run = http("POST", url("/v1/skills/bonly/run"), kKeyA, "{}");
  EXPECT_EQ(run.status, 404);
  EXPECT_EQ(run.body.find("secret"), std::string::npos);
  EXPECT_EQ(http("POST", url("/v1/skills/bonly/run"), kKeyB, "{}").json()["value"], "secret of b");
}

TEST_F(TwoTenants, PathTricksNeverReachAnotherFolder) {
  for (const std::string& path : std::vector<std::string>{
           "/v1/skills/../b-skills/bonly/run", "/v1/skills/../../b-skills/bonly/run", "/v1/skills/%2e%2e/run",
           "/v1/skills/%2e%2e%2fb-skills%2fbonly/run", "/v1/skills/..%2fb-skills%2fbonly/run",
           "/v1/skills/bonly%00/run", "/v1/skills/./run", "/v1/skills/../run", "/v1/skills/BONLY/run",
           "/v1/skills//run", "/v1/skills/" + std::string(65, 'b') + "/run", "/v1/skills/%62only/run"}) {
    const HttpReply r = http("POST", url(path), kKeyA, "{}");
    EXPECT_TRUE(r.status == 400 || r.status == 404) << path << " -> " << r.status << " " << r.body;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << path;
    const HttpReply get = http("GET", url(path.substr(0, path.size() - 4)), kKeyA);
    EXPECT_TRUE(get.status == 400 || get.status == 404) << path << " -> " << get.status;
  }
}

TEST_F(TwoTenants, AnotherTenantsKeyInTheQueryStringIsIgnored) {
  EXPECT_EQ(listed_ids(http("GET", url("/v1/skills?key=") + kKeyB + "&api_key=" + kKeyB, kKeyA)),
            (std::vector<std::string>{"aonly", "counter"}));
  EXPECT_EQ(http("GET", url("/v1/skills?api_key=") + kKeyB).status, 401);
  EXPECT_EQ(http("POST", url("/v1/skills/bonly/run?tenant=b&key=") + kKeyB, kKeyA, "{}").status, 404);
}

TEST_F(TwoTenants, AStoreWriteOfOneTenantIsInvisibleToTheOther) {
  EXPECT_EQ(http("POST", url("/v1/skills/counter/run"), kKeyA, "{}").json()["value"], 1);
  EXPECT_EQ(http("POST", url("/v1/skills/counter/run"), kKeyA, "{}").json()["value"], 2);
  EXPECT_EQ(http("POST", url("/v1/skills/counter/run"), kKeyB, "{}").json()["value"], 1);
  EXPECT_EQ(http("POST", url("/v1/skills/counter/run"), kKeyA, "{}").json()["value"], 3);
  EXPECT_TRUE(fs::exists(root() / "a-data" / "store.sqlite"));
  EXPECT_TRUE(fs::exists(root() / "b-data" / "store.sqlite"));
}

TEST_F(TwoTenants, AnAsyncRunAndItsIdempotencyKeyAreTheTenantsOwn) {
  const std::vector<std::string> key{"Idempotency-Key: same-key"};
  const HttpReply a = http("POST", url("/v1/skills/counter/run?async=true"), kKeyA, "{}", key);
  ASSERT_EQ(a.status, 202) << a.body;
  const std::string a_run = a.json()["id"];
  // B's key finds no run of that id, and the same Idempotency-Key names B's own, new run.
  EXPECT_EQ(http("GET", url("/v1/runs/" + a_run), kKeyB).status, 404);
  const HttpReply b = http("POST", url("/v1/skills/counter/run?async=true"), kKeyB, R"({"input": 2})", key);
  ASSERT_EQ(b.status, 202) << b.body;
  EXPECT_NE(b.json()["id"], a_run);
  EXPECT_EQ(http("GET", url("/v1/runs/" + a_run), kKeyA).status, 200);
  EXPECT_EQ(http("POST", url("/v1/skills/bonly/run?async=true"), kKeyA, "{}").status, 404);
  // Each tenant's runs are in its own data directory.
  EXPECT_TRUE(fs::exists(root() / "a-data" / "runs.sqlite"));
  EXPECT_TRUE(fs::exists(root() / "b-data" / "runs.sqlite"));
}

TEST_F(TwoTenants, ATenantsCeilingsBoundItsRuns) {
  // aonly's manifest allows 4000 ms; tenant a's ceiling is 2000 ms.
  const HttpReply detail = http("GET", url("/v1/skills/aonly"), kKeyA);
  EXPECT_EQ(detail.json()["limits"]["timeout_ms"], 2000);
  EXPECT_EQ(http("POST", url("/v1/skills/aonly/run"), kKeyA, R"({"limits": {"timeout_ms": 3000}})").status,
            400);
  EXPECT_EQ(http("POST", url("/v1/skills/aonly/run"), kKeyA, R"({"limits": {"timeout_ms": 1500}})")
                .json()["outcome"],
            "ok");
}

CliOptions quick() {
  CliOptions o;
  o.timeout_s = 30;  // a refused start is immediate; a server that started would hang until then
  return o;
}

TEST(ServeConfig, ABadConfigIsRefusedAtStartNamingTheKey) {
  TempDir tmp;
  write_file(tmp.path() / "bad.toml",
             "listen = [\"127.0.0.1:0\"]\n[tenants.a]\nkey_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kKeyA)) +
                 "\"]\nskills = \"s\"\ndata_dir = \"d\"\n[tenants.a.ceilings]\nmemory_mb = \"lots\"\n");
  const CliExec r = run_cli({"serve", "--config", (tmp.path() / "bad.toml").string()}, quick());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tenants.a.ceilings.memory_mb: expected an integer from 1 to 4096"), std::string::npos)
      << r.err;
  write_file(tmp.path() / "syntax.toml", "listen = [\n");
  const CliExec syntax = run_cli({"serve", "--config", (tmp.path() / "syntax.toml").string()}, quick());
  EXPECT_EQ(syntax.exit_code, 2);
  EXPECT_NE(syntax.err.find("line "), std::string::npos) << syntax.err;
  const CliExec both =
      run_cli({"serve", "--config", (tmp.path() / "bad.toml").string(), "--isolation", "inprocess"}, quick());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("leave out SKILLS_DIR, --api-key-file, --data-dir and --isolation"),
            std::string::npos)
      << both.err;
  const CliExec missing = run_cli({"serve"}, quick());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--config"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace skillbox::testing
