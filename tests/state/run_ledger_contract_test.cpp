// The contract of state::RunLedger (state/run_ledger.h) for every implementation: the local SQLite
// file and PostgreSQL.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "pg/pool.h"
#include "pg/run_ledger.h"
#include "state/run_ledger.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

using std::chrono::milliseconds;

/// A ledger of its own (a fresh folder, or a fresh tenant) made by `make`.
struct Backend {
  std::string name;
  std::function<std::shared_ptr<RunLedger>(const std::filesystem::path& root)> make;
};

class RunLedgerContract : public ::testing::TestWithParam<Backend> {
 protected:
  std::shared_ptr<RunLedger> ledger() { return GetParam().make(tmp_.path()); }
  skillbox::testing::TempDir tmp_;
};

NewRun new_run(const std::string& body, const std::string& key = "", uint32_t max_attempts = 3) {
  NewRun run;
  run.skill_id = "hello";
  run.body = body;
  run.idempotency_key = key;
  run.max_attempts = max_attempts;
  return run;
}

RunRecord record(RunLedger& l, const std::string& id) {
  auto r = l.get(id);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (!r || !*r) {
    ADD_FAILURE() << "no run " << id;
    return {};
  }
  return **r;
}

std::optional<ClaimedRun> claim(RunLedger& l, milliseconds lease = milliseconds(30'000)) {
  auto c = l.claim("test-owner", lease, 1);
  EXPECT_TRUE(c) << (c ? "" : c.error().message);
  if (!c || c->empty()) return std::nullopt;
  EXPECT_EQ(c->size(), 1u);
  return c->front();
}

TEST_P(RunLedgerContract, ARunIsQueuedClaimedOnceAndEndsWithItsResult) {
  auto l = ledger();
  auto e = l->enqueue(new_run(R"({"input":1})"));
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_TRUE(e->created);
  EXPECT_TRUE(is_run_id(e->run.id)) << e->run.id;
  EXPECT_EQ(record(*l, e->run.id).state, RunState::queued);

  const auto c = claim(*l);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, e->run.id);
  EXPECT_EQ(c->body, R"({"input":1})");
  EXPECT_EQ(c->attempt, 1u);
  EXPECT_FALSE(claim(*l)) << "a run held under a lease was claimed twice";
  const RunRecord running = record(*l, c->id);
  EXPECT_EQ(running.state, RunState::running);
  EXPECT_TRUE(running.started_ms.has_value());

  auto done = l->finish(c->id, c->fence, RunEnding::end(RunState::completed, 200, R"({"outcome":"ok"})"));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_TRUE(*done);
  const RunRecord ended = record(*l, c->id);
  EXPECT_EQ(ended.state, RunState::completed);
  EXPECT_EQ(ended.status, 200);
  EXPECT_EQ(ended.result, R"({"outcome":"ok"})");
  EXPECT_TRUE(ended.ended_ms.has_value());
  EXPECT_FALSE(claim(*l));
  // Ended is final: a second finish with the same token writes nothing.
  EXPECT_FALSE(*l->finish(c->id, c->fence, RunEnding::end(RunState::failed, 400, "{}")));
  EXPECT_EQ(record(*l, c->id).state, RunState::completed);
}

TEST_P(RunLedgerContract, AnIdempotencyKeyNamesOneRequest) {
  auto l = ledger();
  auto first = l->enqueue(new_run("{}", "key-1"));
  auto again = l->enqueue(new_run("{}", "key-1"));
  ASSERT_TRUE(first && again);
  EXPECT_TRUE(first->created);
  EXPECT_FALSE(again->created);
  EXPECT_FALSE(again->conflict);
  EXPECT_EQ(again->run.id, first->run.id);
  auto other_body = l->enqueue(new_run(R"({"input":2})", "key-1"));
  ASSERT_TRUE(other_body);
  EXPECT_TRUE(other_body->conflict);
  EXPECT_EQ(other_body->run.id, first->run.id);
  // Without a key, every enqueue is a run of its own.
  auto a = l->enqueue(new_run("{}"));
  auto b = l->enqueue(new_run("{}"));
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->run.id, b->run.id);
  // Three runs in all: the key's, and the two without a key.
  int claimed = 0;
  while (claim(*l)) ++claimed;
  EXPECT_EQ(claimed, 3);
}

TEST_P(RunLedgerContract, TheSameKeyFromManyThreadsAtOnceStoresOneRun) {
  auto l = ledger();
  std::mutex mu;
  std::set<std::string> ids;
  int created = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      auto e = l->enqueue(new_run("{}", "shared-key"));
      std::lock_guard lock(mu);
      ASSERT_TRUE(e) << e.error().message;
      ids.insert(e->run.id);
      created += e->created ? 1 : 0;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(created, 1);
}

TEST_P(RunLedgerContract, ALateWriterWhoseLeaseExpiredWritesNothing) {
  auto l = ledger();
  ASSERT_TRUE(l->enqueue(new_run("{}")));
  const auto old = claim(*l, milliseconds(300));
  ASSERT_TRUE(old);
  std::this_thread::sleep_for(milliseconds(450));
  // The lease ran out: the next claim takes the run over as a new attempt, with a new token.
  const auto taken = claim(*l);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->id, old->id);
  EXPECT_EQ(taken->attempt, 2u);
  EXPECT_GT(taken->fence, old->fence);
  EXPECT_FALSE(*l->renew(old->id, old->fence, milliseconds(30'000)));
  EXPECT_FALSE(*l->finish(old->id, old->fence, RunEnding::end(RunState::completed, 200, R"({"late":true})")));
  EXPECT_EQ(record(*l, old->id).state, RunState::running);
  EXPECT_TRUE(*l->renew(taken->id, taken->fence, milliseconds(30'000)));
  EXPECT_TRUE(*l->finish(taken->id, taken->fence, RunEnding::end(RunState::completed, 200, R"({"n":2})")));
  EXPECT_EQ(record(*l, old->id).result, R"({"n":2})");
}

TEST_P(RunLedgerContract, AHolderWhoseLeaseExpiredUnreplacedStillRenewsAndFinishes) {
  auto l = ledger();
  ASSERT_TRUE(l->enqueue(new_run("{}")));
  const auto c = claim(*l, milliseconds(200));
  ASSERT_TRUE(c);
  std::this_thread::sleep_for(milliseconds(350));
  // Nobody claimed it meanwhile: its token is still the latest, and its work is not thrown away.
  EXPECT_TRUE(*l->renew(c->id, c->fence, milliseconds(30'000)));
  EXPECT_FALSE(claim(*l)) << "a renewed lease was taken over";
  EXPECT_TRUE(*l->finish(c->id, c->fence, RunEnding::end(RunState::completed, 200, "{}")));
  EXPECT_FALSE(*l->renew(c->id, c->fence, milliseconds(30'000))) << "an ended run's lease was renewed";
}

TEST_P(RunLedgerContract, ATenantsPendingRunsAreBounded) {
  auto l = ledger();
  NewRun run = new_run("{}", "", 3);
  run.max_pending = 3;
  for (int i = 0; i < 3; ++i) {
    auto e = l->enqueue(run);
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->created) << i;
  }
  auto refused = l->enqueue(run);
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->full);
  EXPECT_FALSE(refused->created);
  run.idempotency_key = "keyed";
  refused = l->enqueue(run);
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->full) << "a keyed run passed the bound";
  // One ended: room for one more.
  const auto c = claim(*l);
  ASSERT_TRUE(c);
  ASSERT_TRUE(*l->finish(c->id, c->fence, RunEnding::end(RunState::completed, 200, "{}")));
  auto admitted = l->enqueue(run);
  ASSERT_TRUE(admitted);
  EXPECT_TRUE(admitted->created);
  int claimed = 0;
  while (claim(*l)) ++claimed;
  EXPECT_EQ(claimed, 3);
}

TEST_P(RunLedgerContract, ARunWhoseClaimersKeepDyingEndsDeadAfterMaxAttempts) {
  auto l = ledger();
  auto e = l->enqueue(new_run("{}", "", 2));
  ASSERT_TRUE(e);
  for (uint32_t attempt = 1; attempt <= 2; ++attempt) {
    const auto c = claim(*l, milliseconds(150));
    ASSERT_TRUE(c) << "attempt " << attempt;
    EXPECT_EQ(c->attempt, attempt);
    std::this_thread::sleep_for(milliseconds(250));
  }
  EXPECT_FALSE(claim(*l)) << "claimed past max_attempts";
  const RunRecord dead = record(*l, e->run.id);
  EXPECT_EQ(dead.state, RunState::dead);
  EXPECT_EQ(dead.attempts, 2u);
  EXPECT_NE(dead.result.find("run_lost"), std::string::npos) << dead.result;
  EXPECT_NE(dead.result.find("claimed 2 times"), std::string::npos) << dead.result;
}

TEST_P(RunLedgerContract, ARetryWaitsItsTimeAndAGivenBackClaimIsNotAnAttempt) {
  auto l = ledger();
  ASSERT_TRUE(l->enqueue(new_run("{}")));
  auto c = claim(*l);
  ASSERT_TRUE(c);
  ASSERT_TRUE(*l->finish(c->id, c->fence, RunEnding::requeue(milliseconds(0), true)));
  c = claim(*l);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attempt, 1u) << "a claim given back counted as an attempt";
  ASSERT_TRUE(*l->finish(c->id, c->fence, RunEnding::requeue(milliseconds(600), false)));
  EXPECT_EQ(record(*l, c->id).state, RunState::queued);
  EXPECT_FALSE(claim(*l)) << "a retry was claimed before its time";
  std::this_thread::sleep_for(milliseconds(800));
  c = claim(*l);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->attempt, 2u);
}

TEST_P(RunLedgerContract, ClaimersInParallelTakeEachRunExactlyOnce) {
  auto l = ledger();
  std::set<std::string> queued;
  for (int i = 0; i < 40; ++i) {
    auto e = l->enqueue(new_run("{}", "k" + std::to_string(i)));
    ASSERT_TRUE(e);
    queued.insert(e->run.id);
  }
  std::mutex mu;
  std::multiset<std::string> taken;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (;;) {
        // Batches of up to 3, as a replica with room for three more claims them.
        auto c = l->claim("owner", milliseconds(30'000), 3);
        if (!c || c->empty()) return;
        for (const ClaimedRun& run : *c) {
          const bool ok = *l->finish(run.id, run.fence, RunEnding::end(RunState::completed, 200, "{}"));
          std::lock_guard lock(mu);
          EXPECT_TRUE(ok);
          taken.insert(run.id);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(std::set<std::string>(taken.begin(), taken.end()), queued);
  EXPECT_EQ(taken.size(), queued.size()) << "a run was claimed twice";
}

TEST_P(RunLedgerContract, ABatchClaimTakesTheOldestDueRunsUpToItsSize) {
  auto l = ledger();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto e = l->enqueue(new_run("{}", "b" + std::to_string(i)));
    ASSERT_TRUE(e);
    ids.push_back(e->run.id);
    std::this_thread::sleep_for(milliseconds(2));  // distinct created times: the order is theirs
  }
  auto first = l->claim("owner", milliseconds(30'000), 3);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*first)[i].id, ids[i]);
  auto rest = l->claim("owner", milliseconds(30'000), 10);
  ASSERT_TRUE(rest);
  ASSERT_EQ(rest->size(), 2u);
  EXPECT_TRUE(l->claim("owner", milliseconds(30'000), 10)->empty());
  EXPECT_TRUE(l->claim("owner", milliseconds(30'000), 0)->empty());
}

TEST_P(RunLedgerContract, ARunStoredClaimedIsHeldAtOnceAndItsKeyNamesIt) {
  auto l = ledger();
  NewRun run = new_run(R"({"input":7})", "sync-key");
  run.claim_for = "this-replica";
  run.claim_lease = milliseconds(300);
  auto e = l->enqueue(run);
  ASSERT_TRUE(e) << e.error().message;
  ASSERT_TRUE(e->claimed.has_value());
  EXPECT_EQ(e->claimed->attempt, 1u);
  EXPECT_EQ(e->run.state, RunState::running);
  EXPECT_FALSE(claim(*l)) << "a run stored claimed was claimed again under its lease";
  // The same key again finds it running, and claims nothing.
  auto again = l->enqueue(run);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->created);
  EXPECT_FALSE(again->claimed.has_value());
  EXPECT_EQ(again->run.id, e->run.id);
  EXPECT_EQ(again->run.state, RunState::running);
  // Its holder gone, another claim takes it over after the lease, as any claimed run.
  std::this_thread::sleep_for(milliseconds(450));
  const auto taken = claim(*l);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->id, e->run.id);
  EXPECT_EQ(taken->attempt, 2u);
  EXPECT_FALSE(*l->finish(e->claimed->id, e->claimed->fence, RunEnding::end(RunState::completed, 200, "{}")));
  EXPECT_TRUE(*l->finish(taken->id, taken->fence, RunEnding::end(RunState::completed, 200, R"({"n":1})")));
  EXPECT_EQ(record(*l, e->run.id).result, R"({"n":1})");
}

TEST_P(RunLedgerContract, UnknownIdsAreNotFound) {
  auto l = ledger();
  auto none = l->get(new_run_id());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(is_run_id("run_0123"));
  EXPECT_FALSE(is_run_id("run_0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(is_run_id("../run_0123456789abcdef0123456789abcd"));
  EXPECT_TRUE(is_run_id("run_0123456789abcdef0123456789abcdef"));
}

INSTANTIATE_TEST_SUITE_P(Local, RunLedgerContract,
                         ::testing::Values(Backend{"local",
                                                   [](const std::filesystem::path& root) {
                                                     return make_local_run_ledger(DataLayout(root / "data"));
                                                   }}),
                         [](const auto& param_info) { return param_info.param.name; });

/// A ledger of a tenant of its own on the test cluster.
std::shared_ptr<RunLedger> postgres_ledger(const std::filesystem::path& root) {
  const std::string url = skillbox::testing::migrated_postgres_url();
  if (url.empty()) {
    ADD_FAILURE() << skillbox::testing::postgres_missing();
    return make_local_run_ledger(DataLayout(root / "data"));
  }
  return pg::make_pg_run_ledger(pg::Pool::create(url), skillbox::testing::postgres_tenant_for(root));
}

INSTANTIATE_TEST_SUITE_P(Postgres, RunLedgerContract, ::testing::Values(Backend{"postgres", postgres_ledger}),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace skillbox::state
