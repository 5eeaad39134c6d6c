// 10,000 mixed invocations in one WorkerRunner (ok, error, every limit, crash) leave the supervisor's
// descriptors, threads and RSS flat and no zombie behind. Its own ctest (worker.soak): it takes tens
// of seconds on two cores.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "skill_fixture.h"
#include "worker_test_support.h"

namespace skillbox::testing {
namespace {

TEST(WorkerSoak, TenThousandMixedInvocationsLeaveTheSupervisorFlat) {
  HostOptions o;
  o.worker_path = SKILLBOX_WALL_TEST_WORKER_PATH;  // has __crash()
  o.worker_pool_size = 2;
  WorkerRunner runner(o);
  TempSkill skill({{"index.js",
                    "export default (k) => {\n"
                    "  if (k === 'ok') return 1;\n"
                    "  if (k === 'error') throw new Error('no');\n"
                    "  if (k === 'memory') { const a = []; for (;;) a.push('x'.repeat(1000) + a.length); }\n"
                    "  if (k === 'steps') { for (;;) {} }\n"
                    "  if (k === 'stack') { const f = () => f(); f(); }\n"
                    "  if (k === 'timeout') return new Promise(() => setTimeout(() => {}, 60000));\n"
                    "  if (k === 'crash') __crash();\n"
                    "}"}});
  skill.manifest().limits.memory_bytes = 4ull * 1024 * 1024;
  skill.manifest().limits.steps = 200'000;
  skill.manifest().limits.timeout_ms = 5000;

  const auto mode = [](int i) -> std::pair<const char*, Outcome> {
    if (i % 100 == 9) return {"timeout", Outcome::timeout};
    if (i % 100 == 19) return {"crash", Outcome::crashed};
    switch (i % 10) {
      case 6:
        return {"error", Outcome::error};
      case 7:
        return {"memory", Outcome::memory_limit};
      case 8:
        return {"steps", Outcome::step_limit};
      case 9:
        return {"stack", Outcome::stack_overflow};
      default:
        return {"ok", Outcome::ok};
    }
  };
  const auto one = [&](int i) {
    const auto [key, expected] = mode(i);
    Invocation inv{.skill = skill.skill(), .input_json = std::string("\"") + key + "\""};
    if (expected == Outcome::timeout) inv.overrides.timeout_ms = 30;
    RunResult r = runner.run(inv);
    EXPECT_EQ(r.outcome, expected) << i << " " << key << ": " << describe(r);
  };
  const auto settle = [&] {
    // Let the pool refill and the zygote report every exit, so the counts compare like with like.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (runner.pooled_worker_pids().size() < 2 && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  };

  for (int i = 0; i < 200; ++i) one(i);
  settle();
  const int fds = fd_count();
  const int threads = thread_count();
  const uint64_t rss = rss_bytes();
  std::map<Outcome, int> seen;
  for (int i = 200; i < 10'000; ++i) {
    one(i);
    if (::testing::Test::HasFailure()) break;
  }
  settle();
  EXPECT_EQ(fd_count(), fds);
  EXPECT_EQ(thread_count(), threads);
  EXPECT_LT(rss_bytes(), rss + 16ull * 1024 * 1024) << "RSS grew from " << rss << " to " << rss_bytes();
  EXPECT_EQ(zombie_children(), 0);
}

}  // namespace
}  // namespace skillbox::testing
