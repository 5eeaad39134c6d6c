// `skillbox serve SKILLS_DIR`, the no-config mode, as a client sees it: the lines it prints, the key
// check, runs that answer what `skillbox run --json` prints, and every way a request can be refused.
#include <curl/curl.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <future>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "support/cli_exec.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

class ServeFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(skills() / "greet", "greet",
                "export default (input) => { log('hi'); return {hello: input?.name ?? 'world'}; }");
    write_skill(skills() / "fails", "fails", "export default () => { throw new TypeError('bad input'); }");
    write_skill(skills() / "spin", "spin", "export default () => { for (;;) {} }",
                R"("limits": {"timeout_ms": 3000})");
    write_skill(skills() / "slow", "slow",
                "export default () => new Promise((resolve) => setTimeout(() => resolve('done'), 1500));",
                R"("limits": {"timeout_ms": 5000})");
  }

  fs::path skills() const { return tmp_.path() / "skills"; }
  fs::path data() const { return tmp_.path() / "data"; }

  /// `skillbox serve` on the test's skills, a free port and its own data directory.
  std::unique_ptr<ServeProcess> start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {skills().string(), "--listen", "127.0.0.1:0", "--data-dir",
                                     data().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ServeProcess>(args);
  }

  TempDir tmp_;
};

TEST_F(ServeFolder, PrintsTheUrlAndAFreshKeyOnce) {
  auto server = start();
  ASSERT_EQ(server->lines.size(), 2u) << server->err();
  EXPECT_TRUE(std::regex_match(server->lines[0], std::regex(R"(url: http://127\.0\.0\.1:[0-9]+)")))
      << server->lines[0];
  EXPECT_TRUE(std::regex_match(server->lines[1], std::regex("key: sbx_[0-9a-f]{64}"))) << server->lines[1];
  auto second = start();
  EXPECT_NE(second->key, server->key);  // generated per start
  EXPECT_EQ(server->stop(SIGTERM), 0) << server->err();
}

TEST_F(ServeFolder, HealthAndReadinessNeedNoKeyAndEveryResponseHasARequestId) {
  auto server = start();
  const HttpReply health = http("GET", server->url + "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_TRUE(std::regex_match(health.header("x-request-id"), std::regex("[0-9a-f]{32}")));
  EXPECT_EQ(http("GET", server->url + "/readyz").status, 200);
  const HttpReply refused = http("GET", server->url + "/v1/skills");
  EXPECT_EQ(refused.status, 401);
  const std::string id = refused.header("x-request-id");
  EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{32}")));
  EXPECT_NE(id, health.header("x-request-id"));
  EXPECT_EQ(server->stop(SIGTERM), 0);
  EXPECT_NE(server->err().find("request_id=" + id), std::string::npos) << server->err();  // and in the log
}

TEST_F(ServeFolder, AMissingOrWrongKeyIs401AndTheKeyIsNeverLogged) {
  auto server = start();
  for (const std::string& key : {std::string(), std::string("sbx_wrong"), server->key + "x"}) {
    const HttpReply r = http("GET", server->url + "/v1/skills", key);
    EXPECT_EQ(r.status, 401) << key;
    EXPECT_EQ(r.json()["error"]["code"], "unauthorized");
    EXPECT_EQ(r.header("www-authenticate"), "Bearer");
  }
  // A key in the query string is not a key.
  EXPECT_EQ(http("GET", server->url + "/v1/skills?api_key=" + server->key).status, 401);
  EXPECT_EQ(http("GET", server->url + "/v1/skills", "", std::nullopt, {"Authorization: Basic " + server->key})
                .status,
            401);
  EXPECT_EQ(http("GET", server->url + "/v1/skills", server->key).status, 200);
  server->stop(SIGTERM);
  EXPECT_EQ(server->err().find(server->key), std::string::npos);
}

TEST_F(ServeFolder, ListsAndDescribesTheSkills) {
  auto server = start();
  const nlohmann::json list = http("GET", server->url + "/v1/skills", server->key).json();
  ASSERT_TRUE(list["skills"].is_array()) << list;
  std::vector<std::string> ids;
  for (const auto& s : list["skills"]) ids.push_back(s["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"fails", "greet", "slow", "spin"}));
  const HttpReply one = http("GET", server->url + "/v1/skills/spin", server->key);
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.json()["limits"]["timeout_ms"], 3000);
  EXPECT_EQ(one.json()["exports"], nlohmann::json::array({"default"}));
  EXPECT_EQ(one.json()["permissions"]["fs"]["mode"], "none");
  EXPECT_EQ(http("GET", server->url + "/v1/skills/nosuch", server->key).status, 404);
}

TEST_F(ServeFolder, ARunAnswersWhatSkillboxRunJsonPrints) {
  auto server = start();
  const HttpReply r =
      http("POST", server->url + "/v1/skills/greet/run", server->key, R"({"input": {"name": "Ada"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const CliExec cli = run_cli({"run", (skills() / "greet").string(), "--json", "--input",
                               R"({"name": "Ada"})", "--data-dir", (tmp_.path() / "cli-data").string()});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  nlohmann::json served = r.json();
  nlohmann::json printed = nlohmann::json::parse(cli.out);
  // Keys in the same order, the same values; only the measured usage differs.
  EXPECT_EQ(r.body.substr(0, r.body.find("\"usage\"")), cli.out.substr(0, cli.out.find("\"usage\"")));
  served.erase("usage");
  printed.erase("usage");
  EXPECT_EQ(served, printed);
  EXPECT_EQ(served["value"], nlohmann::json::parse(R"({"hello": "Ada"})"));
}

TEST_F(ServeFolder, ASkillErrorIsStill200WithItsOutcome) {
  auto server = start();
  const HttpReply r = http("POST", server->url + "/v1/skills/fails/run", server->key, "{}");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.json()["outcome"], "error");
  EXPECT_EQ(r.json()["error"]["name"], "TypeError");
  const HttpReply missing =
      http("POST", server->url + "/v1/skills/greet/run", server->key, R"({"export": "nope"})");
  EXPECT_EQ(missing.status, 200);
  EXPECT_EQ(missing.json()["outcome"], "invalid");
}

TEST_F(ServeFolder, LimitsCanBeLoweredButNotRaised) {
  auto server = start();
  const HttpReply lowered =
      http("POST", server->url + "/v1/skills/slow/run", server->key, R"({"limits": {"timeout_ms": 200}})");
  ASSERT_EQ(lowered.status, 200) << lowered.body;
  EXPECT_EQ(lowered.json()["outcome"], "timeout");
  EXPECT_LT(lowered.json()["usage"]["wall_ms"].get<int>(), 1500);
  const HttpReply fewer_steps =
      http("POST", server->url + "/v1/skills/spin/run", server->key, R"({"limits": {"steps": 1000}})");
  EXPECT_EQ(fewer_steps.json()["outcome"], "step_limit");
  EXPECT_LE(fewer_steps.json()["usage"]["steps"].get<int>(), 1001);
  const HttpReply raised =
      http("POST", server->url + "/v1/skills/spin/run", server->key, R"({"limits": {"timeout_ms": 3001}})");
  EXPECT_EQ(raised.status, 400);
  EXPECT_EQ(raised.json()["error"]["code"], "limit_too_high");
  EXPECT_NE(raised.json()["error"]["message"].get<std::string>().find("limits.timeout_ms"),
            std::string::npos);
  EXPECT_EQ(
      http("POST", server->url + "/v1/skills/spin/run", server->key, R"({"limits": {"memory_mb": 4096}})")
          .status,
      400);
}

TEST_F(ServeFolder, BadBodiesAre400SayingWhatIsWrong) {
  auto server = start();
  const auto message = [&](const std::string& body) {
    const HttpReply r = http("POST", server->url + "/v1/skills/greet/run", server->key, body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(r.json()["error"]["code"], "invalid_request") << r.body;
    return r.json()["error"]["message"].get<std::string>();
  };
  EXPECT_NE(message(R"({"input": )").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"input": 1,})").find("line 1"), std::string::npos);
  EXPECT_NE(message("[1]").find("JSON object"), std::string::npos);
  EXPECT_NE(message("").find("not valid JSON"), std::string::npos);
  EXPECT_NE(message(R"({"export": 5})").find("export: expected a string"), std::string::npos);
  EXPECT_NE(message(R"({"limits": {"steps": "many"}})").find("limits.steps"), std::string::npos);
  EXPECT_NE(message(R"({"limits": {"stack": 1}})").find("limits.stack"), std::string::npos);
  EXPECT_NE(message(R"({"inptu": 1})").find("inptu: unknown field"), std::string::npos);
  EXPECT_NE(message(std::string(100, '[') + std::string(100, ']')).find("deeper than"), std::string::npos);
}

TEST_F(ServeFolder, AnOversizeBodyIs413) {
  auto server = start();
  const std::string big = R"({"input": ")" + std::string(1024 * 1024, 'a') + R"("})";
  const HttpReply r = http("POST", server->url + "/v1/skills/greet/run", server->key, big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(r.json()["error"]["code"], "payload_too_large");
  // The server goes on serving.
  EXPECT_EQ(http("GET", server->url + "/healthz").status, 200);
}

TEST_F(ServeFolder, UnknownRoutesAre404AndWrongMethods405) {
  auto server = start();
  EXPECT_EQ(http("GET", server->url + "/v2/skills", server->key).status, 404);
  EXPECT_EQ(http("GET", server->url + "/v1/skills/greet/run/x", server->key).status, 404);
  const HttpReply wrong = http("GET", server->url + "/v1/skills/greet/run", server->key);
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("allow"), "POST");
  const HttpReply patch = http("PATCH", server->url + "/v1/skills/greet", server->key);
  EXPECT_EQ(patch.status, 405);
  EXPECT_EQ(patch.header("allow"), "GET, PUT, DELETE");
  const HttpReply long_target =
      http("GET", server->url + "/v1/skills/" + std::string(5000, 'a'), server->key);
  EXPECT_EQ(long_target.status, 414);
}

TEST_F(ServeFolder, SigtermLetsARunInProgressFinishThenExits0) {
  auto server = start();
  auto run = std::async(std::launch::async,
                        [&] { return http("POST", server->url + "/v1/skills/slow/run", server->key, "{}"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(server->stop(SIGTERM), 0) << server->err();
  const HttpReply r = run.get();
  EXPECT_EQ(r.status, 200) << server->err();
  EXPECT_EQ(r.json()["value"], "done");
  EXPECT_EQ(http("GET", server->url + "/healthz").status, 0);  // no longer listening
}

/// GET `url` on the reusable handle `curl` (keep-alive); returns the status.
long get_on(CURL* curl, const std::string& url) {
  std::string body;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(
      curl, CURLOPT_WRITEFUNCTION, +[](char* d, size_t s, size_t n, void* u) {
        static_cast<std::string*>(u)->append(d, s * n);
        return s * n;
      });
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
  long status = 0;
  if (curl_easy_perform(curl) == CURLE_OK) curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

TEST_F(ServeFolder, WhileDrainingReadyzIs503OnAnOpenConnection) {
  auto server = start();
  CURL* curl = curl_easy_init();
  ASSERT_EQ(get_on(curl, server->url + "/readyz"), 200);  // the connection stays open (keep-alive)
  auto run = std::async(std::launch::async,
                        [&] { return http("POST", server->url + "/v1/skills/slow/run", server->key, "{}"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  std::future<int> stopped = std::async(std::launch::async, [&] { return server->stop(SIGTERM); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  long reuse = 0;
  EXPECT_EQ(get_on(curl, server->url + "/readyz"), 503);
  curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &reuse);
  EXPECT_EQ(reuse, 0);  // asked on the connection opened before the signal
  curl_easy_cleanup(curl);
  EXPECT_EQ(run.get().status, 200);
  EXPECT_EQ(stopped.get(), 0);
}

TEST_F(ServeFolder, AnApiKeyFileGivesTheKey) {
  const fs::path key_file = tmp_.path() / "key";
  write_file(key_file, "a-shared-replica-key-0123456789\n");
  auto server = start({"--api-key-file", key_file.string()});
  EXPECT_TRUE(server->key.empty());  // the operator has it already: not printed
  EXPECT_EQ(http("GET", server->url + "/v1/skills", "a-shared-replica-key-0123456789").status, 200);
  write_file(key_file, "short");
  const CliExec refused = run_cli({"serve", skills().string(), "--api-key-file", key_file.string()});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--api-key-file"), std::string::npos) << refused.err;
}

TEST_F(ServeFolder, ADatabaseThatIsNotAPostgresUrlIsRefusedAtStartWithoutEchoingIt) {
  const CliExec refused = run_cli({"serve", skills().string(), "--database",
                                   "host=db.internal password=s3cret", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--database: expected a postgres:// or postgresql:// URL"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("s3cret"), std::string::npos) << refused.err;
  // The same from the environment, as `skillbox db migrate` takes it.
  CliOptions env;
  env.env = {"SKILLBOX_DATABASE_URL=mysql://root@127.0.0.1/db"};
  EXPECT_EQ(run_cli({"serve", skills().string(), "--listen", "127.0.0.1:0"}, env).exit_code, 2);
}

TEST_F(ServeFolder, ATenantOverItsRunningAndQueuedBoundsGets429WithRetryAfter) {
  const fs::path config = tmp_.path() / "serve.toml";
  write_file(config,
             "listen = [\"127.0.0.1:0\"]\nisolation = \"process\"\n[tenants.solo]\nkey_sha256 = "
             "[\"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\"]\nskills = \"" +
                 skills().string() + "\"\ndata_dir = \"" + data().string() +
                 "\"\nmax_concurrent_runs = 1\nmax_queued_runs = 0\n");
  ServeProcess server({"--config", config.string()});
  // sha256("test") is the key_sha256 above.
  auto slow = std::async(std::launch::async,
                         [&] { return http("POST", server.url + "/v1/skills/slow/run", "test", "{}"); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const HttpReply busy = http("POST", server.url + "/v1/skills/greet/run", "test", "{}");
  EXPECT_EQ(busy.status, 429) << busy.body;
  EXPECT_EQ(busy.header("retry-after"), "1");
  EXPECT_EQ(slow.get().status, 200);
  EXPECT_EQ(http("POST", server.url + "/v1/skills/greet/run", "test", "{}").status, 200);  // free again
}

/// The pid of the zygote of the server `parent` (its child `skillbox-worker --zygote ...`), or -1.
pid_t zygote_of(pid_t parent) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream status(e.path() / "status");
    std::string line;
    pid_t ppid = -1;
    while (std::getline(status, line))
      if (line.starts_with("PPid:")) ppid = std::stoi(line.substr(5));
    if (ppid != parent) continue;
    std::ifstream cmdline(e.path() / "cmdline");
    std::string args;  // NUL-separated, no newline: one getline reads it all
    std::getline(cmdline, args);
    if (args.find("--zygote") != std::string::npos) return std::stoi(name);
  }
  return -1;
}

TEST_F(ServeFolder, KillingTheZygoteUnderLoadEndsOnlyTheRunsItHeld) {
  auto server = start();  // process isolation, the default
  const auto run = [&](const std::string& id) {
    return http("POST", server->url + "/v1/skills/" + id + "/run", server->key, std::string("{}"));
  };
  ASSERT_EQ(run("greet").json()["outcome"], "ok");
  const pid_t zygote = zygote_of(server->pid());
  ASSERT_GT(zygote, 0) << "no zygote among the server's children";
  // Three slow runs in workers of that zygote, then the zygote killed under them.
  std::vector<std::future<HttpReply>> held;
  for (int i = 0; i < 3; ++i) held.push_back(std::async(std::launch::async, [&] { return run("slow"); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(::kill(zygote, SIGKILL), 0);
  int crashed = 0;
  for (auto& f : held) {
    const HttpReply r = f.get();
    ASSERT_EQ(r.status, 200) << r.body;
    const std::string outcome = r.json()["outcome"];
    // A run whose worker died with the zygote is `crashed`; one that had no worker yet ran on the next.
    EXPECT_TRUE(outcome == "crashed" || outcome == "ok") << r.body;
    crashed += outcome == "crashed" ? 1 : 0;
  }
  EXPECT_GE(crashed, 1);
  // The server goes on: a new zygote, and every run after the first that found it ends ok.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (run("greet").json()["outcome"] != "ok" && std::chrono::steady_clock::now() < until) {
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(run("greet").json()["outcome"], "ok") << i;
  const pid_t next = zygote_of(server->pid());
  EXPECT_GT(next, 0);
  EXPECT_NE(next, zygote);
  EXPECT_EQ(http("GET", server->url + "/readyz").status, 200);
  EXPECT_EQ(server->stop(SIGTERM), 0) << server->err();
}
}  // namespace
}  // namespace skillbox::testing
