// `skillbox serve --database URL`: replicas that keep their tenants' state in one PostgreSQL
// (docs/scale-out.md "Serving from PostgreSQL"). Real replicas, a real PostgreSQL 15 on 127.0.0.1:
//   - three replicas, one counter, 200 concurrent compare-and-set runs: exactly 200;
//   - a replica that cannot use its database starts, is not ready, and says why; it turns ready once
//     the database can be used;
//   - PostgreSQL stopped (as if it crashed) and started again under load: the replicas turn unready,
//     then ready, and no acknowledged increment is lost or applied twice.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "compat/bundle_support.h"
#include "pg/connection.h"
#include "serve_support.h"
#include "server/api_key.h"
#include "support/cli_exec.h"
#include "support/http_test_server.h"
#include "support/postgres_test_db.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kIncrement = kIncrementSource;

/// A skill id of its own for each test: the tests share the cluster and the tenant "default".
std::string fresh_id(const std::string& prefix) {
  std::random_device rd;
  return prefix + "-" + std::to_string(rd() % 1'000'000'000);
}

/// Waits up to `limit` for GET /readyz of `url` to answer `status`; returns the last reply.
HttpReply await_ready(const std::string& url, long status, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  HttpReply reply = http("GET", url + "/readyz");
  while (reply.status != status && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    reply = http("GET", url + "/readyz");
  }
  return reply;
}

/// Replicas of one skills folder, all on `database`, sharing one API key.
class Replicas {
 public:
  Replicas(const fs::path& root, const std::string& database, size_t n) {
    write_file(root / "key", key);
    for (size_t i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<ServeProcess>(std::vector<std::string>{
          "--listen", "127.0.0.1:0", "--api-key-file", (root / "key").string(), "--database", database,
          "--isolation", "inprocess", "--data-dir", (root / ("data" + std::to_string(i))).string(),
          (root / "skills").string()}));
    }
  }
  const std::string key = "replica-key-0123456789abcdef";
  std::vector<std::unique_ptr<ServeProcess>> servers;
};

/// POST /v1/skills/ID/run on `url`; the run's value when it ended ok, else -1 (the reply in `why`).
long run_increment(const std::string& url, const std::string& key, const std::string& id, std::string& why) {
  const HttpReply r = http("POST", url + "/v1/skills/" + id + "/run", key, R"({"input":{}})");
  const nlohmann::json body = r.json();
  if (r.status == 200 && body.is_object() && body.value("outcome", "") == "ok" && body["value"].is_number())
    return body["value"].get<long>();
  why = std::to_string(r.status) + " " + r.body.substr(0, 300);
  return -1;
}

/// The store's "n" as GET /v1/skills/ID/store/n shows it on `url`.
long stored_n(const std::string& url, const std::string& key, const std::string& id) {
  const HttpReply r = http("GET", url + "/v1/skills/" + id + "/store/n", key);
  EXPECT_EQ(r.status, 200) << r.body;
  const nlohmann::json body = r.json();
  return body.is_object() && body["value"].is_number() ? body["value"].get<long>() : -1;
}

TEST(PostgresServe, ThreeReplicasIncrementOneCounterExactly200TimesByCompareAndSet) {
  const std::string database = migrated_postgres_url();
  ASSERT_FALSE(database.empty()) << postgres_missing();
  TempDir tmp;
  const std::string id = fresh_id("counter");
  write_skill(tmp.path() / "skills" / id, id, kIncrement, R"("permissions": {"store": {}})");
  Replicas replicas(tmp.path(), database, 3);
  for (const auto& s : replicas.servers)
    ASSERT_EQ(await_ready(s->url, 200, std::chrono::seconds(30)).status, 200);

  // 40 clients at once, 5 runs each, spread over the replicas. A refusal at admission (429, 503) ran
  // nothing, and is sent again until a minute has passed: 40 clients are more than the three replicas'
  // 36 places (4 running and 8 queued each), and under a sanitizer a place frees slowly.
  constexpr int kClients = 40;
  constexpr int kRunsEach = 5;
  std::mutex mu;
  std::vector<long> written;
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kRunsEach; ++i) {
        const std::string& url = replicas.servers[static_cast<size_t>(c + i) % 3]->url;
        std::string why;
        long value = -1;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(1);
        while (value < 0 && std::chrono::steady_clock::now() < give_up) {
          value = run_increment(url, replicas.key, id, why);
          if (value < 0 && !why.starts_with("429") && !why.starts_with("503")) break;
          if (value < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        std::lock_guard lock(mu);
        if (value < 0) {
          failures.push_back(why);
        } else {
          written.push_back(value);
        }
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " runs failed; the first: " << failures.front();
  // Each run wrote a value no other run wrote, and together they wrote 1..200.
  const std::set<long> distinct(written.begin(), written.end());
  EXPECT_EQ(distinct.size(), written.size()) << "two runs wrote the same value";
  EXPECT_EQ(written.size(), size_t{kClients * kRunsEach});
  if (!distinct.empty()) {
    EXPECT_EQ(*distinct.begin(), 1);
    EXPECT_EQ(*distinct.rbegin(), kClients * kRunsEach);
  }
  for (const auto& s : replicas.servers) EXPECT_EQ(stored_n(s->url, replicas.key, id), kClients * kRunsEach);
}

TEST(PostgresServe, AsyncRunsSentToEitherReplicaAreStoredOnceAndRunOnce) {
  const std::string database = migrated_postgres_url();
  ASSERT_FALSE(database.empty()) << postgres_missing();
  TempDir tmp;
  const std::string id = fresh_id("async");
  write_skill(tmp.path() / "skills" / id, id, kIncrement, R"("permissions": {"store": {}})");
  Replicas replicas(tmp.path(), database, 2);
  for (const auto& s : replicas.servers)
    ASSERT_EQ(await_ready(s->url, 200, std::chrono::seconds(30)).status, 200);

  // Each key sent to both replicas, as a client retrying on another replica would: one run per key.
  constexpr int kRuns = 30;
  std::vector<std::string> ids;
  for (int i = 0; i < kRuns; ++i) {
    const std::vector<std::string> key{"Idempotency-Key: " + id + "-" + std::to_string(i)};
    std::set<std::string> named;
    for (const auto& s : replicas.servers) {
      const HttpReply r =
          http("POST", s->url + "/v1/skills/" + id + "/run?async=true", replicas.key, "{}", key);
      ASSERT_EQ(r.status, 202) << r.body;
      named.insert(r.json()["id"].get<std::string>());
    }
    ASSERT_EQ(named.size(), 1u) << "the replicas stored two runs for one key";
    ids.push_back(*named.begin());
  }
  // Every run ends, on whichever replica claimed it, and wrote a value no other run wrote.
  std::set<long> written;
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& url = replicas.servers[i % 2]->url;
    nlohmann::json record;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    do {
      record = http("GET", url + "/v1/runs/" + ids[i], replicas.key).json();
      if (record["state"] == "completed") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (std::chrono::steady_clock::now() < give_up);
    ASSERT_EQ(record["state"], "completed") << record;
    EXPECT_EQ(record["attempts"], 1) << record;
    written.insert(record["result"]["value"].get<long>());
  }
  EXPECT_EQ(written.size(), size_t{kRuns}) << "two runs wrote the same value: one ran twice";
  EXPECT_EQ(*written.rbegin(), kRuns);
  EXPECT_EQ(stored_n(replicas.servers[0]->url, replicas.key, id), kRuns);
}

/// A replica of tenant `tenant` from a config file of its own: `lease_ms` for its async runs, polling
/// every 50 ms. (A tenant of the test's own: replicas of other tests on the cluster claim only theirs.)
std::unique_ptr<ServeProcess> async_replica(const fs::path& root, const std::string& name,
                                            const std::string& database, const std::string& tenant,
                                            const std::string& key, uint64_t lease_ms) {
  const fs::path config = root / (name + ".toml");
  write_file(config,
             "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\n"
             "[database]\nurl = \"" +
                 database +
                 "\"\n"
                 "[async]\nlease_ms = " +
                 std::to_string(lease_ms) +
                 "\npoll_ms = 50\n"
                 "[tenants." +
                 tenant + "]\nkey_sha256 = [\"" + server::key_hash_hex(server::hash_api_key(key)) +
                 "\"]\n"
                 "skills = \"" +
                 (root / "skills").string() + "\"\ndata_dir = \"" + (root / name).string() + "\"\n");
  return std::make_unique<ServeProcess>(std::vector<std::string>{"--config", config.string()});
}

TEST(PostgresServe, AsyncRunsOfAReplicaKilledMidRunAreTakenOverAndEachEndsOnce) {
  const std::string database = migrated_postgres_url();
  ASSERT_FALSE(database.empty()) << postgres_missing();
  TempDir tmp;
  const std::string key = "async-chaos-key-0123456789";
  const std::string tenant = fresh_id("chaos");
  // Waits 1.5 s, then counts itself by compare-and-set: a run killed while it waits has written nothing.
  write_skill(tmp.path() / "skills" / "slow", "slow",
              "export default async () => {\n"
              "  await new Promise((resolve) => setTimeout(resolve, 1500));\n"
              "  for (;;) {\n"
              "    const old = store.get('n');\n"
              "    const next = (old ?? 0) + 1;\n"
              "    if (store.compareAndSet('n', old, next)) return next;\n"
              "  }\n"
              "}\n",
              R"("permissions": {"store": {}}, "limits": {"timeout_ms": 10000})");
  constexpr int kRuns = 12;
  auto victim = async_replica(tmp.path(), "victim", database, tenant, key, 2000);
  ASSERT_EQ(await_ready(victim->url, 200, std::chrono::seconds(30)).status, 200);
  std::vector<std::string> ids;
  for (int i = 0; i < kRuns; ++i) {
    const HttpReply r = http("POST", victim->url + "/v1/skills/slow/run?async=true", key, "{}",
                             {"Idempotency-Key: chaos-" + std::to_string(i)});
    ASSERT_EQ(r.status, 202) << r.body;
    ids.push_back(r.json()["id"]);
  }
  // Once the victim has runs in progress, SIGKILL: no drain, no give-back.
  const auto running = [&] {
    int n = 0;
    for (const std::string& id : ids)
      n += http("GET", victim->url + "/v1/runs/" + id, key).json()["state"] == "running";
    return n;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (running() < 4 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_GE(running(), 4) << "the victim never held its runs; the first: "
                          << http("GET", victim->url + "/v1/runs/" + ids[0], key).body << "\n"
                          << victim->err();
  ASSERT_EQ(::kill(victim->pid(), SIGKILL), 0);

  // Another replica takes over: the queued runs at once, the victim's after their leases ran out.
  auto heir = async_replica(tmp.path(), "heir", database, tenant, key, 2000);
  ASSERT_EQ(await_ready(heir->url, 200, std::chrono::seconds(30)).status, 200);
  std::set<long> values;
  int taken_over = 0;
  for (const std::string& id : ids) {
    nlohmann::json record;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    do {
      record = http("GET", heir->url + "/v1/runs/" + id, key).json();
      if (record["state"] != "queued" && record["state"] != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while (std::chrono::steady_clock::now() < until);
    ASSERT_EQ(record["state"], "completed") << record;
    ASSERT_EQ(record["result"]["outcome"], "ok") << record;
    taken_over += record["attempts"].get<int>() > 1 ? 1 : 0;
    EXPECT_LE(record["attempts"].get<int>(), 2) << record;
    values.insert(record["result"]["value"].get<long>());
  }
  EXPECT_GE(taken_over, 4) << "the runs the victim held were not taken over as new attempts";
  EXPECT_EQ(values.size(), size_t{kRuns}) << "two completed runs report the same count";
  // Each run's count is in the store once. A run killed after its write and before its end would count
  // twice (its effects are not fenced yet: docs/scale-out.md); a 1.5 s wait before the write makes the
  // kill land in the wait.
  EXPECT_EQ(stored_n(heir->url, key, "slow"), kRuns);
}

TEST(PostgresServe, TwoReplicasShareABundlesDatabaseUnderOneLease) {
  const std::string database = migrated_postgres_url();
  ASSERT_FALSE(database.empty()) << postgres_missing();
  TempDir tmp;
  // The notes bundle's tool `bump` counts its calls in db.kv: its database, leased for each call.
  const std::string id = fresh_id("notes");
  const Bundle notes("notes", grants({}));
  fs::create_directories(tmp.path() / "skills");
  fs::copy(notes.dir(), tmp.path() / "skills" / id, fs::copy_options::recursive);
  nlohmann::json manifest =
      nlohmann::json::parse(std::ifstream(tmp.path() / "skills" / id / "manifest.json"));
  manifest["id"] = id;
  write_file(tmp.path() / "skills" / id / "manifest.json", manifest.dump());
  Replicas replicas(tmp.path(), database, 2);
  for (const auto& s : replicas.servers)
    ASSERT_EQ(await_ready(s->url, 200, std::chrono::seconds(30)).status, 200);

  std::mutex mu;
  std::vector<std::string> counts;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < 5; ++i) {
        const std::string& url = replicas.servers[static_cast<size_t>(c + i) % 2]->url;
        const HttpReply r =
            http("POST", url + "/v1/skills/" + id + "/tools/bump/call", replicas.key, R"({"arguments": {}})");
        const nlohmann::json body = r.json();
        std::lock_guard lock(mu);
        counts.push_back(r.status == 200 && body.is_object() && body.value("outcome", "") == "ok"
                             ? body["value"]["content"][0]["text"].get<std::string>()
                             : "failed: " + r.body.substr(0, 300));
      }
    });
  }
  for (std::thread& t : clients) t.join();
  // Every call saw the count the one before it left, whichever replica served either: 1 to 20.
  std::set<std::string> seen(counts.begin(), counts.end());
  std::set<std::string> expected;
  for (int n = 1; n <= 20; ++n) expected.insert(std::to_string(n));
  EXPECT_EQ(seen, expected);
}

TEST(PostgresServe, ACredentialFromTheSealedVaultReachesOnlyTheServerItIsBoundTo) {
  const std::string database = migrated_postgres_url();
  ASSERT_FALSE(database.empty()) << postgres_missing();
  constexpr const char* kToken = "ya29.FROM-THE-SEALED-VAULT-77aa";
  constexpr const char* kKey = "vault-tenant-key-0123456789abc";
  HttpTestServer proxy;
  TempDir tmp;
  const std::string tenant = fresh_id("vault");
  // The mailbox bundle reaches https://proxy.example with oauth.fetch; the origin map sends that to the
  // loopback server, which records what it receives.
  const Bundle mailbox("mailbox", "");
  fs::create_directories(tmp.path() / "skills");
  fs::copy(mailbox.dir(), tmp.path() / "skills" / "mailbox", fs::copy_options::recursive);
  write_file(tmp.path() / "skills" / "mailbox" / "skill.json",
             R"({"permissions": {"http": {"allow": ["https://proxy.example/"]}}})");
  write_file(tmp.path() / "vault.key", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
  fs::permissions(tmp.path() / "vault.key", fs::perms::owner_read | fs::perms::owner_write);
  write_file(tmp.path() / "credentials.json",
             std::string(R"({"mailbox": {"oauth": {"credentialId": "c1", "accessToken": ")") + kToken +
                 R"(", "baseUrl": "https://proxy.example"}}})");
  const CliExec imported =
      run_cli({"db", "credentials", "import", (tmp.path() / "credentials.json").string(), "--tenant", tenant,
               "--vault-key-file", (tmp.path() / "vault.key").string(), "--database", database});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  fs::remove(tmp.path() / "credentials.json");  // the only copy is the sealed one now

  write_file(tmp.path() / "serve.toml",
             "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\n"
             "[database]\nurl = \"" +
                 database +
                 "\"\nvault_key_file = \"vault.key\"\n"
                 "[tenants." +
                 tenant + "]\nkey_sha256 = [\"" + server::key_hash_hex(server::hash_api_key(kKey)) +
                 "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n"
                 "[tenants." +
                 tenant + ".origin_map]\n\"https://proxy.example\" = \"" + proxy.origin() + "\"\n");
  ServeProcess server({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_EQ(await_ready(server.url, 200, std::chrono::seconds(30)).status, 200);
  const HttpReply r =
      http("POST", server.url + "/v1/skills/mailbox/run", kKey, R"({"export": "tool:inbox"})");
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(r.json()["outcome"], "ok") << r.body;
  EXPECT_TRUE(saw_header(proxy.recorded(), "Authorization", std::string("Bearer ") + kToken))
      << "the loopback server saw " << proxy.recorded().size() << " requests";
  EXPECT_EQ(r.body.find(kToken), std::string::npos) << "the bundle saw only a placeholder: " << r.body;
  EXPECT_EQ(server.err().find(kToken), std::string::npos);
  EXPECT_EQ(server.stop(SIGTERM), 0);

  // Started with another key, the server refuses the run's credentials and says which key sealed them.
  write_file(tmp.path() / "vault.key", std::string(64, 'f'));
  fs::permissions(tmp.path() / "vault.key", fs::perms::owner_read | fs::perms::owner_write);
  ServeProcess other({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_EQ(await_ready(other.url, 200, std::chrono::seconds(30)).status, 200);
  const HttpReply refused =
      http("POST", other.url + "/v1/skills/mailbox/run", kKey, R"({"export": "tool:inbox"})");
  EXPECT_NE(refused.body.find("were sealed with another vault key"), std::string::npos) << refused.body;
  EXPECT_EQ(refused.body.find(kToken), std::string::npos);
}

TEST(PostgresServe, AReplicaThatCannotReachItsDatabaseStartsUnreadyAndSaysWhy) {
  // A port nobody listens on: bound and closed again.
  const CliExec port = run_program(
      {"python3", "-c",
       "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"});
  ASSERT_EQ(port.exit_code, 0) << port.err;
  std::string number = port.out;
  while (!number.empty() && number.back() == '\n') number.pop_back();
  const std::string database = "postgres://skillbox:hunter2-secret@127.0.0.1:" + number + "/skillbox";
  TempDir tmp;
  write_skill(tmp.path() / "skills" / "hello", "hello", "export default () => 'hi'");
  ServeProcess server({"--listen", "127.0.0.1:0", "--database", database, "--isolation", "inprocess",
                       "--data-dir", (tmp.path() / "data").string(), (tmp.path() / "skills").string()});
  ASSERT_FALSE(server.url.empty());

  EXPECT_EQ(http("GET", server.url + "/healthz").status, 200) << "the process lives";
  ASSERT_TRUE(server.wait_for_err("database: not ready")) << server.err();
  const HttpReply ready = http("GET", server.url + "/readyz");
  EXPECT_EQ(ready.status, 503);
  const nlohmann::json body = ready.json();
  ASSERT_TRUE(body.is_object()) << ready.body;
  EXPECT_EQ(body["error"]["code"], "database_unavailable");
  // An unauthenticated probe learns that the database cannot be used, not where it is or who logs in.
  EXPECT_EQ(body["error"]["message"], "not ready: the database cannot be used; the server's log says why");
  // The log says why, on one line.
  const std::string err = server.err();
  const size_t at = err.find(
      "database: not ready: cannot connect to the database postgres://skillbox:***@127.0.0.1:" + number);
  ASSERT_NE(at, std::string::npos) << err;
  const std::string line = err.substr(at, err.find('\n', at) - at);
  EXPECT_NE(line.find("Connection refused"), std::string::npos) << line;
  // The password is in neither the answer nor the log.
  EXPECT_EQ(ready.body.find("hunter2"), std::string::npos);
  EXPECT_EQ(server.err().find("hunter2"), std::string::npos) << server.err();
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

TEST(PostgresServe, AReplicaOnAnUnmigratedDatabaseNamesTheCommandAndTurnsReadyOnceMigrated) {
  ScratchDatabase scratch;
  ASSERT_FALSE(scratch.url().empty());
  TempDir tmp;
  write_skill(tmp.path() / "skills" / "hello", "hello", "export default () => 'hi'");
  ServeProcess server({"--listen", "127.0.0.1:0", "--database", scratch.url(), "--isolation", "inprocess",
                       "--data-dir", (tmp.path() / "data").string(), (tmp.path() / "skills").string()});
  ASSERT_FALSE(server.url.empty());
  ASSERT_TRUE(server.wait_for_err("database: not ready")) << server.err();
  const HttpReply unready = http("GET", server.url + "/readyz");
  EXPECT_EQ(unready.status, 503);
  EXPECT_NE(unready.body.find("database_unavailable"), std::string::npos) << unready.body;
  EXPECT_NE(server.err().find("has no skillbox schema yet: run `skillbox db migrate --database URL` first"),
            std::string::npos)
      << server.err();

  const CliExec migrate = run_cli({"db", "migrate", "--database", scratch.url()});
  ASSERT_EQ(migrate.exit_code, 0) << migrate.err;
  EXPECT_EQ(await_ready(server.url, 200, std::chrono::seconds(10)).status, 200) << server.err();
  EXPECT_TRUE(server.wait_for_err("database: ready")) << server.err();
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

/// A PostgreSQL cluster of the test's own (scripts/pg-cluster.sh), which it may stop and start.
class OwnCluster {
 public:
  OwnCluster() {
    const CliExec started = pg_cluster("start");
    if (started.exit_code != 0) {
      ADD_FAILURE() << "pg-cluster.sh start: " << started.err;
      return;
    }
    url = started.out.substr(0, started.out.find('\n'));
  }
  ~OwnCluster() { (void)pg_cluster("stop"); }
  OwnCluster(const OwnCluster&) = delete;
  OwnCluster& operator=(const OwnCluster&) = delete;

  CliExec pg_cluster(const std::string& action) const {
    return run_program({"bash", std::string(SKILLBOX_SOURCE_DIR) + "/scripts/pg-cluster.sh", action,
                        state_.path().string()});
  }
  std::string url;

 private:
  TempDir state_;
};

TEST(PostgresServe, PostgresRestartedUnderLoadLosesNoAcknowledgedIncrementAndAppliesNoneTwice) {
  OwnCluster cluster;
  ASSERT_FALSE(cluster.url.empty());
  ASSERT_EQ(run_cli({"db", "migrate", "--database", cluster.url}).exit_code, 0);
  TempDir tmp;
  const std::string id = "restart-counter";
  write_skill(tmp.path() / "skills" / id, id, kIncrement, R"("permissions": {"store": {}})");
  Replicas replicas(tmp.path(), cluster.url, 2);
  for (const auto& s : replicas.servers)
    ASSERT_EQ(await_ready(s->url, 200, std::chrono::seconds(30)).status, 200);

  // Four clients run increments without pause until told to stop; each keeps what was acknowledged.
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<long> acknowledged;
  size_t refused = 0;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; !stop.load(); ++i) {
        std::string why;
        const long value =
            run_increment(replicas.servers[static_cast<size_t>(c + i) % 2]->url, replicas.key, id, why);
        std::lock_guard lock(mu);
        if (value >= 0) {
          acknowledged.push_back(value);
        } else {
          ++refused;
        }
      }
    });
  }
  const auto acknowledged_count = [&] {
    std::lock_guard lock(mu);
    return acknowledged.size();
  };
  const auto wait_for_more = [&](size_t than) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (acknowledged_count() < than && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return acknowledged_count() >= than;
  };
  EXPECT_TRUE(wait_for_more(20)) << "the load runs before the restart";

  // PostgreSQL goes away at once, as in a crash: both replicas turn unready and say why.
  ASSERT_EQ(cluster.pg_cluster("down").exit_code, 0);
  for (const auto& s : replicas.servers) {
    const HttpReply r = await_ready(s->url, 503, std::chrono::seconds(15));
    EXPECT_EQ(r.status, 503) << "a replica stayed ready without its database";
    EXPECT_NE(r.body.find("database_unavailable"), std::string::npos) << r.body;
  }
  const size_t before_up = acknowledged_count();
  ASSERT_EQ(cluster.pg_cluster("up").exit_code, 0);
  for (const auto& s : replicas.servers) {
    EXPECT_EQ(await_ready(s->url, 200, std::chrono::seconds(30)).status, 200) << s->err();
  }
  EXPECT_TRUE(wait_for_more(before_up + 20)) << "the replicas recover and serve again";
  stop = true;
  for (std::thread& t : clients) t.join();

  // No value was acknowledged twice, and the counter holds at least the highest acknowledged one: an
  // increment acknowledged before the crash survived it. Runs that failed during the outage may or may
  // not have committed (their answer was lost), so the counter may hold more than was acknowledged,
  // never less.
  const std::set<long> distinct(acknowledged.begin(), acknowledged.end());
  EXPECT_EQ(distinct.size(), acknowledged.size()) << "an increment was applied twice";
  const long n = stored_n(replicas.servers[0]->url, replicas.key, id);
  ASSERT_FALSE(distinct.empty());
  EXPECT_GE(n, *distinct.rbegin());
  EXPECT_LE(static_cast<size_t>(n), acknowledged.size() + refused);
  EXPECT_GT(refused, 0u) << "the outage failed some runs (else the test did not test it)";
}

/// The audit lines of `tenant` in the database of `url` with request id `id`, as JSON texts.
std::vector<std::string> audit_rows(const std::string& url, const std::string& id) {
  auto c = pg::Connection::open(url, std::chrono::seconds(5), std::chrono::milliseconds(1000));
  if (!c) return {"cannot connect: " + c.error().message};
  auto rows = c->exec("reading the audit", "SELECT line::text FROM audit_log WHERE request_id = $1", {id});
  std::vector<std::string> out;
  if (rows)
    for (const auto& row : rows->rows) out.push_back(row.at(0).value_or(""));
  return out;
}

TEST(PostgresServe, TheAuditGoesToTheDatabaseAndWaitsOutAnOutageWithoutLosingALine) {
  OwnCluster cluster;
  ASSERT_FALSE(cluster.url.empty());
  ASSERT_EQ(run_cli({"db", "migrate", "--database", cluster.url}).exit_code, 0);
  TempDir tmp;
  constexpr const char* kKey = "audit-tenant-key-0123456789abc";
  write_skill(tmp.path() / "skills" / "hello", "hello", "export default () => 'hi'");
  write_file(tmp.path() / "serve.toml",
             "listen = [\"127.0.0.1:0\"]\nisolation = \"inprocess\"\naudit = \"database\"\n"
             "[database]\nurl = \"" +
                 cluster.url +
                 "\"\n"
                 "[tenants.acme]\nkey_sha256 = [\"" +
                 server::key_hash_hex(server::hash_api_key(kKey)) +
                 "\"]\nskills = \"skills\"\ndata_dir = \"data\"\n");
  ServeProcess server({"--config", (tmp.path() / "serve.toml").string()});
  ASSERT_EQ(await_ready(server.url, 200, std::chrono::seconds(30)).status, 200);

  const auto await_rows = [&](const std::string& id) {
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    std::vector<std::string> rows = audit_rows(cluster.url, id);
    while (rows.empty() && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      rows = audit_rows(cluster.url, id);
    }
    return rows;
  };
  const HttpReply ran = http("POST", server.url + "/v1/skills/hello/run", kKey, "{}");
  ASSERT_EQ(ran.status, 200) << ran.body;
  const HttpReply refused = http("GET", server.url + "/v1/skills", "not-a-key-of-anyone-0123456789");
  ASSERT_EQ(refused.status, 401);
  const std::vector<std::string> run_rows = await_rows(ran.header("x-request-id"));
  ASSERT_EQ(run_rows.size(), 1u);
  const nlohmann::json line = nlohmann::json::parse(run_rows[0]);
  EXPECT_EQ(line["tenant"], "acme");
  EXPECT_EQ(line["skill"], "hello");
  EXPECT_EQ(line["outcome"], "ok");
  EXPECT_EQ(await_rows(refused.header("x-request-id")).size(), 1u) << "refused requests are audited too";
  EXPECT_EQ(run_rows[0].find(kKey), std::string::npos);

  // PostgreSQL goes away: the skill needs no database, so runs go on, and their lines wait.
  ASSERT_EQ(cluster.pg_cluster("down").exit_code, 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    const HttpReply r = http("POST", server.url + "/v1/skills/hello/run", kKey, "{}");
    EXPECT_EQ(r.status, 200) << r.body;
    ids.push_back(r.header("x-request-id"));
  }
  EXPECT_TRUE(server.wait_for_err("cannot store the audit in the database")) << server.err();
  ASSERT_EQ(cluster.pg_cluster("up").exit_code, 0);
  for (const std::string& id : ids) EXPECT_EQ(await_rows(id).size(), 1u) << "the line of " << id << ", once";
  EXPECT_TRUE(server.wait_for_err("the audit is stored in the database again")) << server.err();
  EXPECT_EQ(server.stop(SIGTERM), 0);
}

}  // namespace
}  // namespace skillbox::testing
