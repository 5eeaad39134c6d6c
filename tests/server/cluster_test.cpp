// The rig of docs/scale-out.md, as scripts/cluster.sh starts it for a user: PostgreSQL 15, three
// `skillbox serve --database` replicas and HAProxy checking their /readyz, all on 127.0.0.1. One replica
// is killed with SIGKILL under load: HAProxy takes it out, the load goes on through the others, the
// requests it held fail with a clear status, and no acknowledged write is lost or applied twice.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "support/cli_exec.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kIncrement = kIncrementSource;

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

/// Whether process `pid` runs: it exists and is not a zombie (the rig's processes are reparented to
/// whatever reaps orphans here, which may be slow to).
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

/// scripts/cluster.sh up in a folder of the test's own; down when it ends.
class Rig {
 public:
  explicit Rig(const fs::path& skills) {
    const CliExec up = script("up", skills.string());
    if (up.exit_code != 0) {
      ADD_FAILURE() << "cluster.sh up: exit " << up.exit_code << "\n" << up.err;
      return;
    }
    url = first_line(state_.path() / "url");
    key = first_line(state_.path() / "key");
    EXPECT_NE(up.out.find("url: " + url), std::string::npos) << up.out;
  }
  ~Rig() {
    const CliExec down = script("down");
    EXPECT_EQ(down.exit_code, 0) << down.err;
  }
  Rig(const Rig&) = delete;
  Rig& operator=(const Rig&) = delete;

  [[nodiscard]] pid_t replica_pid(int n) const {
    return static_cast<pid_t>(
        std::stol(first_line(state_.path() / ("replica-" + std::to_string(n)) / "pid")));
  }
  [[nodiscard]] pid_t haproxy_pid() const {
    return static_cast<pid_t>(std::stol(first_line(state_.path() / "haproxy.pid")));
  }
  std::string url;
  std::string key;

 private:
  CliExec script(const std::string& action, const std::string& extra = "") const {
    std::vector<std::string> argv = {"bash", std::string(SKILLBOX_SOURCE_DIR) + "/scripts/cluster.sh", action,
                                     state_.path().string()};
    if (!extra.empty()) argv.push_back(extra);
    CliOptions options;
    options.env = {std::string("SKILLBOX=") + SKILLBOX_CLI_PATH};
    return run_program(argv, options);
  }
  TempDir state_;
};

TEST(PostgresCluster, AReplicaKilledUnderLoadIsTakenOutAndLosesNoAcknowledgedWrite) {
  TempDir tmp;
  write_skill(tmp.path() / "skills" / "counter", "counter", kIncrement, R"("permissions": {"store": {}})");
  std::vector<pid_t> pids;
  {
    Rig rig(tmp.path() / "skills");
    ASSERT_FALSE(rig.url.empty());
    pids = {rig.replica_pid(1), rig.replica_pid(2), rig.replica_pid(3), rig.haproxy_pid()};

    // Four clients increment the counter through HAProxy without pause; each keeps what was
    // acknowledged (200, outcome ok) and the statuses of what was not.
    std::atomic<bool> stop{false};
    std::atomic<bool> killed{false};
    std::mutex mu;
    std::vector<long> acknowledged;
    std::vector<std::string> failed;       // after the kill: what the client saw
    std::vector<bool> outcome_after_kill;  // true: acknowledged; in order, all clients together
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c) {
      clients.emplace_back([&] {
        while (!stop.load()) {
          const bool after = killed.load();
          const HttpReply r = http("POST", rig.url + "/v1/skills/counter/run", rig.key, R"({"input":{}})");
          const nlohmann::json body = r.json();
          const bool ok = r.status == 200 && body.is_object() && body.value("outcome", "") == "ok";
          std::lock_guard lock(mu);
          if (ok) acknowledged.push_back(body["value"].get<long>());
          if (!ok) failed.push_back(std::to_string(r.status) + " " + r.body.substr(0, 200));
          if (after) outcome_after_kill.push_back(ok);
        }
      });
    }
    const auto acknowledged_count = [&] {
      std::lock_guard lock(mu);
      return acknowledged.size();
    };
    const auto wait_for = [&](size_t n) {
      const auto deadline = Clock::now() + std::chrono::seconds(60);
      while (acknowledged_count() < n && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return acknowledged_count() >= n;
    };
    EXPECT_TRUE(wait_for(40));
    ASSERT_EQ(::kill(rig.replica_pid(2), SIGKILL), 0);
    killed = true;
    // HAProxy's checks (every 500 ms, out after two failures) take it out within about a second; the
    // load then runs on the other two.
    const size_t at_kill = acknowledged_count();
    EXPECT_TRUE(wait_for(at_kill + 150)) << "the load goes on through the other replicas";
    stop = true;
    for (std::thread& t : clients) t.join();

    // Only the requests the dead replica held can fail (one per client at most), with a clear status:
    // 502 from HAProxy. A request whose connection failed before it was sent went to another replica.
    EXPECT_LE(failed.size(), 4u) << "first failure: " << (failed.empty() ? "" : failed.front());
    for (const std::string& f : failed) EXPECT_TRUE(f.starts_with("502") || f.starts_with("503")) << f;
    // Once HAProxy has taken the replica out, nothing fails: the last 100 requests were all acknowledged.
    ASSERT_GE(outcome_after_kill.size(), 100u);
    for (size_t i = outcome_after_kill.size() - 100; i < outcome_after_kill.size(); ++i)
      EXPECT_TRUE(outcome_after_kill[i]) << "request " << i << " after the kill failed";

    // No value acknowledged twice; the counter holds at least the highest one (nothing acknowledged was
    // lost) and at most one more per unacknowledged request (a run cut off may have committed).
    const std::set<long> distinct(acknowledged.begin(), acknowledged.end());
    EXPECT_EQ(distinct.size(), acknowledged.size()) << "an increment was applied twice";
    const HttpReply stored = http("GET", rig.url + "/v1/skills/counter/store/n", rig.key);
    ASSERT_EQ(stored.status, 200) << stored.body;
    const long n = stored.json()["value"].get<long>();
    EXPECT_GE(n, *distinct.rbegin());
    EXPECT_LE(static_cast<size_t>(n), acknowledged.size() + failed.size());
  }
  // `down` left no process running.
  for (const pid_t pid : pids) EXPECT_FALSE(alive(pid)) << "process " << pid << " still runs after down";
}

}  // namespace
}  // namespace skillbox::testing
