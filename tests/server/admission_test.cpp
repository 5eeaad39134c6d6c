// Admission as clients see it (docs/server.md "Admission"): a tenant that floods one run thread does
// not starve a quiet one, time spent queued counts against a run's timeout, a client that closes its
// connection takes its request out of the queue or cancels its run, and GET /metrics reports all of it
// in a format `promtool check metrics` accepts, to the operator's key only. Quotas per minute refuse a
// tenant's runs with 429 and an honest Retry-After, and leave the other tenant alone.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <regex>
#include <string>
#include <thread>

#include "serve_support.h"
#include "server/api_key.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* kKeyA = "admission-a-key-0123456789";
constexpr const char* kKeyB = "admission-b-key-0123456789";
constexpr const char* kOperatorKey = "admission-operator-key-0123456789";

std::string hash(const char* key) {
  return server::key_hash_hex(server::hash_api_key(key));
}

/// Two tenants on one run thread, with the operator's metrics key.
class Admission : public ::testing::Test {
 protected:
  void start(const std::string& tenant_a_extra = "", bool metrics = true) {
    for (const char* t : {"a", "b"}) {
      const fs::path skills = tmp_.path() / (std::string(t) + "-skills");
      write_skill(skills / "greet", "greet", "export default () => 'hi'");
      // Sleeps input.ms (default 150) and answers how long it slept.
      write_skill(skills / "nap", "nap",
                  "export default (input) => new Promise((r) => setTimeout(() => r(input?.ms ?? 150), "
                  "input?.ms ?? 150));",
                  R"("limits": {"timeout_ms": 5000})");
      write_skill(skills / "spin", "spin", "export default () => { for (;;) {} }",
                  R"("limits": {"timeout_ms": 30000, "steps": 1000000000000})");
    }
    std::string config = "listen = [\"127.0.0.1:0\"]\nrun_threads = 1\n";
    if (metrics) config += "metrics_key_sha256 = [\"" + hash(kOperatorKey) + "\"]\n";
    config += "[tenants.a]\nkey_sha256 = [\"" + hash(kKeyA) +
              "\"]\nskills = \"a-skills\"\ndata_dir = \"a-data\"\n" + tenant_a_extra;
    config +=
        "[tenants.b]\nkey_sha256 = [\"" + hash(kKeyB) + "\"]\nskills = \"b-skills\"\ndata_dir = \"b-data\"\n";
    write_file(tmp_.path() / "serve.toml", config);
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (tmp_.path() / "serve.toml").string()});
  }

  HttpReply run(const char* key, const std::string& skill, const std::string& body = "{}") const {
    return http("POST", server_->url + "/v1/skills/" + skill + "/run", key, body);
  }

  std::future<HttpReply> run_async(const char* key, const std::string& skill,
                                   const std::string& body = "{}") {
    return std::async(std::launch::async, [this, key, skill, body] { return run(key, skill, body); });
  }

  std::string scrape() const { return http("GET", server_->url + "/metrics", kOperatorKey).body; }

  /// The value of the series `series` (name and labels, exactly as written) in a scrape, or -1.
  double sample(const std::string& series) const {
    const std::string text = scrape();
    const size_t at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }

  /// Waits up to 10 s for the series to read `value`.
  bool wait_for(const std::string& series, double value) const {
    for (int i = 0; i < 500; ++i) {
      if (sample(series) == value) return true;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << series << " never became " << value << "; last scrape:\n" << scrape();
    return false;
  }

  /// POST /v1/skills/SKILL/run of tenant a on a raw connection (closed by the caller).
  int raw_run(const std::string& skill) const {
    const int fd = connect_raw(server_->url);
    const std::string body = "{}";
    EXPECT_TRUE(send_all(fd, "POST /v1/skills/" + skill +
                                 "/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + kKeyA +
                                 "\r\nContent-Type: application/json\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body));
    return fd;
  }

  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Admission, ATenantFloodingTheOnlyThreadDoesNotStarveAQuietOne) {
  start("max_concurrent_runs = 1\nmax_queued_runs = 8\n");
  std::vector<std::future<HttpReply>> flood;
  std::vector<Clock::time_point> done(5);
  for (int i = 0; i < 5; ++i) {
    flood.push_back(std::async(std::launch::async, [this, i, &done] {
      HttpReply r = run(kKeyA, "nap");
      done[static_cast<size_t>(i)] = Clock::now();
      return r;
    }));
  }
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="a"})", 4));  // one runs, four wait
  const HttpReply quiet = run(kKeyB, "nap");
  const Clock::time_point quiet_done = Clock::now();
  EXPECT_EQ(quiet.status, 200);
  EXPECT_EQ(quiet.json()["outcome"], "ok") << quiet.body;
  int after = 0;
  for (size_t i = 0; i < flood.size(); ++i) {
    EXPECT_EQ(flood[i].get().json()["outcome"], "ok");
    if (done[i] > quiet_done) ++after;
  }
  // First come, first served would finish b after all five of a; fair sharing starts b next.
  EXPECT_GE(after, 3);
}

TEST_F(Admission, BeyondItsQueueATenantGets429AndTheOtherTenantIsStillServed) {
  start("max_concurrent_runs = 1\nmax_queued_runs = 1\n");
  auto running = run_async(kKeyA, "nap", R"({"input": {"ms": 600}})");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_in_flight{tenant="a"})", 1));
  auto queued = run_async(kKeyA, "greet");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="a"})", 1));
  const HttpReply refused = run(kKeyA, "greet");
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.json()["error"]["code"], "too_many_requests");
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_NE(refused.json()["error"]["message"].get<std::string>().find("max_queued_runs"), std::string::npos);
  EXPECT_EQ(run(kKeyB, "greet").status, 200);  // b's own queue is empty
  EXPECT_EQ(running.get().status, 200);
  EXPECT_EQ(queued.get().status, 200);
  EXPECT_EQ(sample(R"(skillbox_requests_shed_total{tenant="a",reason="tenant_queue_full"})"), 1);
  EXPECT_EQ(sample(R"(skillbox_requests_shed_total{tenant="b",reason="tenant_queue_full"})"), 0);
}

TEST_F(Admission, TimeSpentQueuedCountsAgainstTheRunsTimeout) {
  start();
  // Alone, a 300 ms nap fits a 900 ms timeout.
  EXPECT_EQ(run(kKeyA, "nap", R"({"input": {"ms": 300}, "limits": {"timeout_ms": 900}})").json()["outcome"],
            "ok");
  auto busy = run_async(kKeyB, "nap", R"({"input": {"ms": 800}})");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_in_flight{tenant="b"})", 1));
  // Behind 800 ms of b's run, it has ~100 ms left: not enough.
  auto squeezed = run_async(kKeyA, "nap", R"({"input": {"ms": 300}, "limits": {"timeout_ms": 900}})");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="a"})", 1));
  // Its whole 300 ms timeout passes in the queue: it never starts.
  auto expired = run_async(kKeyB, "nap", R"({"input": {"ms": 10}, "limits": {"timeout_ms": 300}})");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="b"})", 1));
  EXPECT_EQ(busy.get().json()["outcome"], "ok");
  const nlohmann::json s = squeezed.get().json();
  EXPECT_EQ(s["outcome"], "timeout") << s;
  const HttpReply e = expired.get();
  EXPECT_EQ(e.status, 200);
  EXPECT_EQ(e.json()["outcome"], "timeout") << e.body;
  EXPECT_NE(e.json()["error"]["message"].get<std::string>().find("the run did not start"), std::string::npos)
      << e.body;
  EXPECT_EQ(e.json()["usage"]["wall_ms"], 0);
  EXPECT_EQ(sample(R"(skillbox_runs_total{tenant="b",outcome="timeout"})"), 1);
}

TEST_F(Admission, AClientThatClosesItsConnectionCancelsItsQueuedRequestAndItsRun) {
  start();
  const int running = raw_run("spin");  // 30 s timeout: only a cancel ends it soon
  ASSERT_TRUE(wait_for(R"(skillbox_runs_in_flight{tenant="a"})", 1));
  const int queued = raw_run("spin");
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="a"})", 1));
  ::close(queued);
  ASSERT_TRUE(wait_for(R"(skillbox_runs_queued{tenant="a"})", 0));
  EXPECT_EQ(sample(R"(skillbox_runs_in_flight{tenant="a"})"), 1);
  const Clock::time_point closed = Clock::now();
  ::close(running);
  // The thread is free again long before the spin's 30 s: b is served.
  const HttpReply next = run(kKeyB, "greet");
  EXPECT_EQ(next.status, 200);
  EXPECT_LT(Clock::now() - closed, 10s);
  EXPECT_TRUE(wait_for(R"(skillbox_runs_total{tenant="a",outcome="cancelled"})", 2));
  EXPECT_EQ(sample(R"(skillbox_runs_in_flight{tenant="a"})"), 0);
  EXPECT_EQ(server_->stop(SIGTERM), 0);
  const std::string log = server_->err();
  size_t cancelled = 0;
  for (size_t at = log.find("outcome=cancelled"); at != std::string::npos;
       at = log.find("outcome=cancelled", at + 1)) {
    ++cancelled;
  }
  EXPECT_EQ(cancelled, 2u) << log;
}

TEST_F(Admission, MetricsPassPromtoolAndCountRunsByTenantAndOutcome) {
  start("weight = 2\n");
  EXPECT_EQ(run(kKeyA, "greet").status, 200);
  EXPECT_EQ(run(kKeyA, "nap", R"({"input": {"ms": 50}, "limits": {"timeout_ms": 10}})").json()["outcome"],
            "timeout");
  EXPECT_EQ(run(kKeyB, "greet").status, 200);
  const HttpReply r = http("GET", server_->url + "/metrics", kOperatorKey);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("\nskillbox_runs_total{tenant=\"a\",outcome=\"ok\"} 1\n"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("\nskillbox_runs_total{tenant=\"a\",outcome=\"timeout\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("\nskillbox_runs_total{tenant=\"b\",outcome=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("\nskillbox_run_duration_seconds_count{tenant=\"a\"} 2\n"), std::string::npos);
  EXPECT_NE(r.body.find("\nskillbox_queue_wait_seconds_count{tenant=\"b\"} 1\n"), std::string::npos);
  EXPECT_NE(r.body.find("\nskillbox_worker_crashes_total{tenant=\"a\"} 0\n"), std::string::npos);
  // The gauge drops once the run thread is done with the request, which may be just after the client
  // has its answer.
  EXPECT_TRUE(wait_for(R"(skillbox_runs_in_flight{tenant="b"})", 0));

  // promtool is part of the test command (scripts/setup.sh installs the Debian package prometheus).
  ASSERT_EQ(std::system("command -v promtool >/dev/null 2>&1"), 0)
      << "promtool is not on PATH: install the Debian package prometheus (scripts/setup.sh does)";
  const fs::path scraped = tmp_.path() / "metrics.txt";
  write_file(scraped, r.body);
  const std::string command = "promtool check metrics < '" + scraped.string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buf[512];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = ::pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_EQ(out, "");  // no lint finding either
}

TEST_F(Admission, BeyondRunsPerMinuteATenantGets429WithRetryAfterAndAReloadKeepsTheCount) {
  start("runs_per_minute = 2\n");
  EXPECT_EQ(run(kKeyA, "greet").status, 200);
  EXPECT_EQ(run(kKeyA, "greet").status, 200);
  const HttpReply refused = run(kKeyA, "greet");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.json()["error"]["code"], "quota_exceeded") << refused.body;
  EXPECT_NE(refused.json()["error"]["message"].get<std::string>().find("runs_per_minute"), std::string::npos)
      << refused.body;
  // 2 a minute: the next run is due in about 30 s, never 0.
  const std::string retry = refused.header("retry-after");
  ASSERT_FALSE(retry.empty());
  EXPECT_GE(std::stoi(retry), 1);
  EXPECT_LE(std::stoi(retry), 30);
  EXPECT_EQ(run(kKeyB, "greet").status, 200);  // b has no quota, and a's is a's
  // Listings are not runs.
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kKeyA).status, 200);
  EXPECT_EQ(sample(R"(skillbox_requests_shed_total{tenant="a",reason="runs_per_minute"})"), 1);
  EXPECT_EQ(sample(R"(skillbox_requests_shed_total{tenant="b",reason="runs_per_minute"})"), 0);
  // A reload (the same file) does not hand out a fresh minute.
  server_->signal(SIGHUP);
  ASSERT_TRUE(server_->wait_for_err("config reloaded from")) << server_->err();
  EXPECT_EQ(run(kKeyA, "greet").status, 429);
}

TEST_F(Admission, BeyondCpuSecondsPerMinuteATenantGets429UntilItsDebtIsRepaid) {
  start("cpu_seconds_per_minute = 1\n");
  // Each spin burns CPU until its 1.5 s timeout; its usage.cpu_ms is charged when it ends. However
  // little CPU a loaded machine gives it, a few of them spend the second.
  HttpReply refused;
  for (int i = 0; i < 10 && refused.status != 429; ++i) {
    const HttpReply r = run(kKeyA, "spin", R"({"limits": {"timeout_ms": 1500}})");
    if (r.status == 200) {
      EXPECT_EQ(r.json()["outcome"], "timeout") << r.body;
    } else {
      refused = r;
    }
  }
  ASSERT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.json()["error"]["code"], "quota_exceeded") << refused.body;
  EXPECT_NE(refused.json()["error"]["message"].get<std::string>().find("cpu_seconds_per_minute"),
            std::string::npos)
      << refused.body;
  EXPECT_GE(std::stoi(refused.header("retry-after")), 1);
  EXPECT_EQ(run(kKeyA, "greet").status, 429);  // any run, until the debt is repaid
  EXPECT_EQ(run(kKeyB, "greet").status, 200);
  EXPECT_GE(sample(R"(skillbox_requests_shed_total{tenant="a",reason="cpu_seconds_per_minute"})"), 2);
}

TEST_F(Admission, MetricsAreTheOperatorsOnly) {
  start();
  const HttpReply none = http("GET", server_->url + "/metrics");
  EXPECT_EQ(none.status, 401);
  const HttpReply tenant = http("GET", server_->url + "/metrics", kKeyA);
  EXPECT_EQ(tenant.status, 403);  // a tenant would learn the other tenants' names
  EXPECT_EQ(tenant.json()["error"]["code"], "forbidden");
  EXPECT_EQ(tenant.body.find("tenant=\"b\""), std::string::npos);
  EXPECT_EQ(http("GET", server_->url + "/metrics", kOperatorKey).status, 200);
  // The operator's key is no tenant's.
  EXPECT_EQ(http("GET", server_->url + "/v1/skills", kOperatorKey).status, 401);
}

TEST_F(Admission, WithoutAMetricsKeyMetricsAreOff) {
  start("", /*metrics=*/false);
  const HttpReply r = http("GET", server_->url + "/metrics", kKeyA);
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.json()["error"]["message"].get<std::string>().find("metrics_key_sha256"), std::string::npos);
}

}  // namespace
}  // namespace skillbox::testing
