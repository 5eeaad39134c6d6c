// Async runs on one server with the embedded ledger (runs.sqlite in the tenant's data directory):
// POST /v1/skills/{id}/run?async=true answers 202 with the run's record, GET /v1/runs/{id} shows it until
// it ends, and an Idempotency-Key names one request. The ledger's own contract is
// tests/state/run_ledger_contract_test.cpp; replicas on PostgreSQL are in database_test.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "serve_support.h"
#include "server/async_runs.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

/// Counts its runs in the store, by compare-and-set (async runs run in parallel), and returns the count
/// with its input.
constexpr const char* kCounter =
    "export default (input) => { for (;;) { const old = store.get('runs'); const n = (old ?? 0) + 1;"
    " if (store.compareAndSet('runs', old, n)) return {n, input}; } }";

/// GET /v1/runs/ID until its state is no longer queued or running (at most 30 s); the last record.
nlohmann::json await_end(const std::string& url, const std::string& key, const std::string& id) {
  nlohmann::json last;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    const HttpReply r = http("GET", url + "/v1/runs/" + id, key);
    last = r.json();
    if (r.status != 200) return last;
    if (last["state"] != "queued" && last["state"] != "running") return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return last;
}

class AsyncServe : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(tmp_.path() / "skills" / "counter", "counter", kCounter, R"("permissions": {"store": {}})");
    server_ = std::make_unique<ServeProcess>(serve_args());
  }
  /// One tenant from the skills folder, its data (and runs.sqlite) in a folder that outlives a restart.
  std::vector<std::string> serve_args() const {
    return {(tmp_.path() / "skills").string(), "--isolation", "inprocess",  "--data-dir",
            (tmp_.path() / "data").string(),   "--listen",    "127.0.0.1:0"};
  }
  HttpReply enqueue(const std::string& body, const std::vector<std::string>& headers = {}) const {
    return http("POST", server_->url + "/v1/skills/counter/run?async=true", server_->key, body, headers);
  }
  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(AsyncServe, AnAsyncRunIsAcceptedAtOnceAndItsRecordEndsWithTheRunResult) {
  const HttpReply accepted = enqueue(R"({"input": {"hello": "world"}})");
  ASSERT_EQ(accepted.status, 202) << accepted.body;
  const nlohmann::json queued = accepted.json();
  const std::string id = queued["id"];
  EXPECT_EQ(accepted.header("location"), "/v1/runs/" + id);
  EXPECT_EQ(queued["skill"], "counter");
  EXPECT_TRUE(queued["state"] == "queued" || queued["state"] == "running") << queued;

  const nlohmann::json ended = await_end(server_->url, server_->key, id);
  EXPECT_EQ(ended["state"], "completed") << ended;
  EXPECT_EQ(ended["attempts"], 1);
  ASSERT_TRUE(ended["result"].is_object()) << ended;
  // The result is what a synchronous run answers: the --json object.
  EXPECT_EQ(ended["result"]["outcome"], "ok");
  EXPECT_EQ(ended["result"]["value"]["input"]["hello"], "world");
  EXPECT_EQ(ended["result"]["value"]["n"], 1);
  EXPECT_TRUE(ended.contains("started_at") && ended.contains("ended_at")) << ended;
  // A synchronous run after it sees its store write: it ran, once.
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run", server_->key, "{}").json()["value"]["n"],
            2);
}

TEST_F(AsyncServe, TheSameIdempotencyKeyReturnsTheSameRunAndRunsItOnce) {
  const std::vector<std::string> key{"Idempotency-Key: order-17"};
  const HttpReply first = enqueue(R"({"input": 1})", key);
  ASSERT_EQ(first.status, 202) << first.body;
  const std::string id = first.json()["id"];
  for (int i = 0; i < 5; ++i) {
    const HttpReply again = enqueue(R"({"input": 1})", key);
    ASSERT_EQ(again.status, 202) << again.body;
    EXPECT_EQ(again.json()["id"], id);
  }
  EXPECT_EQ(await_end(server_->url, server_->key, id)["state"], "completed");
  // Once ended, the key still names it, and answers with its result.
  const HttpReply after = enqueue(R"({"input": 1})", key);
  EXPECT_EQ(after.json()["id"], id);
  EXPECT_EQ(after.json()["result"]["value"]["n"], 1);
  // The same key for another body is refused and runs nothing.
  const HttpReply other = enqueue(R"({"input": 2})", key);
  EXPECT_EQ(other.status, 422) << other.body;
  EXPECT_EQ(other.json()["error"]["code"], "idempotency_key_reused");
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run", server_->key, "{}").json()["value"]["n"],
            2);
}

TEST_F(AsyncServe, BadAsyncRequestsAreRefusedBeforeAnythingIsStored) {
  EXPECT_EQ(enqueue(R"({"input": 1, "bogus": true})").status, 400);
  EXPECT_EQ(enqueue("{}", {"Idempotency-Key: has space"}).status, 400);
  EXPECT_EQ(enqueue("{}", {"Idempotency-Key: " + std::string(256, 'k')}).status, 400);
  EXPECT_EQ(enqueue("{}", {"Idempotency-Key: a", "Idempotency-Key: b"}).status, 400);
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run?async=yes", server_->key, "{}").status, 400);
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/nope/run?async=true", server_->key, "{}").status, 404);
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run?async=true", "wrong-key", "{}").status, 401);
  // None of them ran: the first run the counter sees is 1.
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run", server_->key, "{}").json()["value"]["n"],
            1);
  for (const std::string& id : {std::string("run_00000000000000000000000000000000"), std::string("nope"),
                                std::string("run_%2e%2e"), std::string(300, 'r')}) {
    const HttpReply r = http("GET", server_->url + "/v1/runs/" + id, server_->key);
    EXPECT_EQ(r.status, 404) << id << " " << r.body;
  }
  EXPECT_EQ(http("GET", server_->url + "/v1/runs/run_00000000000000000000000000000000").status, 401);
}

TEST_F(AsyncServe, RunsQueuedBeforeAStopRunAfterTheRestart) {
  // Twenty runs, and the server stopped at once: whatever it had not run is still owed after a restart,
  // and each run happens once.
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) {
    const HttpReply r = enqueue("{}", {"Idempotency-Key: stop-" + std::to_string(i)});
    ASSERT_EQ(r.status, 202) << r.body;
    ids.push_back(r.json()["id"]);
  }
  EXPECT_EQ(server_->stop(SIGTERM), 0);
  server_ = std::make_unique<ServeProcess>(serve_args());
  std::set<long> seen;
  for (const std::string& id : ids) {
    const nlohmann::json ended = await_end(server_->url, server_->key, id);
    ASSERT_EQ(ended["state"], "completed") << ended;
    seen.insert(ended["result"]["value"]["n"].get<long>());
  }
  EXPECT_EQ(seen.size(), 20u) << "two runs saw the same count: one ran twice";
  EXPECT_EQ(*seen.rbegin(), 20);
}

TEST_F(AsyncServe, ASynchronousRunWithAKeyRunsOnceAndItsAnswerIsReplayed) {
  const auto run = [&](const std::string& body, const std::string& key) {
    return http("POST", server_->url + "/v1/skills/counter/run", server_->key, body,
                {"Idempotency-Key: " + key});
  };
  const HttpReply first = run(R"({"input": "a"})", "sync-1");
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(first.json()["value"]["n"], 1);
  EXPECT_TRUE(first.header("location").starts_with("/v1/runs/run_")) << first.header("location");
  // Sent again (a client whose connection broke): the same answer, and the skill did not run again.
  const HttpReply again = run(R"({"input": "a"})", "sync-1");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.json()["value"]["n"], 1);
  EXPECT_EQ(again.header("idempotent-replayed"), "true");
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run", server_->key, "{}").json()["value"]["n"],
            2);
  // The record is the async run's, completed with the same result.
  const nlohmann::json record = http("GET", server_->url + first.header("location"), server_->key).json();
  EXPECT_EQ(record["state"], "completed");
  EXPECT_EQ(record["result"]["value"]["n"], 1);
  // Another body under the key is refused; a streamed run takes no key.
  EXPECT_EQ(run(R"({"input": "b"})", "sync-1").status, 422);
  EXPECT_EQ(http("POST", server_->url + "/v1/skills/counter/run", server_->key, "{}",
                 {"Idempotency-Key: sync-2", "Accept: application/x-ndjson"})
                .status,
            400);
}

TEST_F(AsyncServe, AKeyWhoseRunIsStillGoingOnIsRefusedWithAConflict) {
  write_skill(tmp_.path() / "skills" / "slow", "slow",
              "export default () => new Promise((r) => setTimeout(() => r('done'), 1500))");
  std::thread first([&] {
    const HttpReply r =
        http("POST", server_->url + "/v1/skills/slow/run", server_->key, "{}", {"Idempotency-Key: slow-1"});
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["value"], "done");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const HttpReply during =
      http("POST", server_->url + "/v1/skills/slow/run", server_->key, "{}", {"Idempotency-Key: slow-1"});
  EXPECT_EQ(during.status, 409) << during.body;
  EXPECT_EQ(during.json()["error"]["code"], "idempotency_key_in_use");
  EXPECT_FALSE(during.header("retry-after").empty());
  first.join();
  const HttpReply after =
      http("POST", server_->url + "/v1/skills/slow/run", server_->key, "{}", {"Idempotency-Key: slow-1"});
  EXPECT_EQ(after.status, 200);
  EXPECT_EQ(after.json()["value"], "done");
}

TEST(AsyncEnding, CrashesRetryWhileAttemptsRemainAndOtherAnswersAreFinal) {
  using server::AsyncRuns;
  server::HttpResponse ok;
  ok.status = 200;
  ok.outcome = "ok";
  EXPECT_EQ(AsyncRuns::end_of(ok, 1, 3, false).state, state::RunState::completed);
  server::HttpResponse error = ok;
  error.outcome = "error";  // the skill threw: its answer, not a fault of the replica
  EXPECT_EQ(AsyncRuns::end_of(error, 1, 3, false).state, state::RunState::completed);
  server::HttpResponse crashed = ok;
  crashed.outcome = "crashed";
  const state::RunEnding retry = AsyncRuns::end_of(crashed, 1, 3, false);
  EXPECT_EQ(retry.state, state::RunState::queued);
  EXPECT_EQ(retry.retry_after, std::chrono::milliseconds(1000));
  EXPECT_EQ(AsyncRuns::end_of(crashed, 2, 3, false).retry_after, std::chrono::milliseconds(2000));
  EXPECT_EQ(AsyncRuns::end_of(crashed, 3, 3, false).state, state::RunState::dead);
  const server::HttpResponse refused = server::error_response(404, "skill_not_found", "no skill");
  EXPECT_EQ(AsyncRuns::end_of(refused, 1, 3, false).state, state::RunState::failed);
  server::HttpResponse cancelled = ok;
  cancelled.outcome = "cancelled";
  const state::RunEnding back = AsyncRuns::end_of(cancelled, 1, 3, true);
  EXPECT_EQ(back.state, state::RunState::queued);
  EXPECT_TRUE(back.give_back_attempt);
}

}  // namespace
}  // namespace skillbox::testing
