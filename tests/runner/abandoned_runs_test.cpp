// InProcessRunner counts the runs it abandoned at their deadline (a native call that cannot be
// interrupted keeps their thread busy) and, at HostOptions::max_abandoned_runs, refuses to start more
// until one finishes (issue 9, item 1).
//
// The uninterruptible native call is hold() (tests/support/hold_hook.h): it blocks in C++ until the
// test releases it, neither allocating nor ticking. The engine's own calls of that kind are bounded
// by the heap limit (docs/limits.md "Not charged") and too short to rely on here.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/hold_hook.h"

namespace skillbox::testing {
namespace {

/// Waits (up to `limit`) until `runner.abandoned_runs()` is `n`; returns the last value seen.
size_t wait_for_abandoned(const InProcessRunner& runner, size_t n, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (runner.abandoned_runs() != n && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return runner.abandoned_runs();
}

TEST(AbandonedRuns, DefaultCapIsSmall) {
  EXPECT_EQ(HostOptions{}.max_abandoned_runs, 2u);
}

TEST(AbandonedRuns, CountedWhileTheNativeCallRunsAndCappedUntilItEnds) {
  HoldHook hook;
  HostOptions options;
  options.max_abandoned_runs = 1;
  InProcessRunner runner(options);

  TempSkill stuck({{"index.js", "export default () => { hold(); return 'finished'; }"}});
  stuck.manifest().limits.timeout_ms = 100;
  TempSkill normal({{"index.js", "export default (x) => x * 2"}});
  EXPECT_EQ(runner.abandoned_runs(), 0u);

  // The deadline passes inside hold(): the watchdog cannot stop it, so run() gives up on the thread.
  const RunResult abandoned = run(runner, stuck);
  ASSERT_EQ(abandoned.outcome, Outcome::timeout) << describe(abandoned);
  ASSERT_TRUE(abandoned.error);
  EXPECT_NE(abandoned.error->message.find("abandoned"), std::string::npos) << describe(abandoned);
  EXPECT_EQ(runner.abandoned_runs(), 1u);

  // At the cap, the next run is refused at once: it never runs, and the error says what to do.
  const RunResult refused = run(runner, normal, "21");
  EXPECT_EQ(refused.outcome, Outcome::internal) << describe(refused);
  ASSERT_TRUE(refused.error);
  EXPECT_EQ(refused.error->name, "TooManyAbandonedRuns");
  EXPECT_NE(refused.error->message.find("limit is 1"), std::string::npos) << refused.error->message;
  EXPECT_NE(refused.error->message.find("HostOptions::max_abandoned_runs"), std::string::npos)
      << refused.error->message;
  EXPECT_NE(refused.error->message.find("worker processes"), std::string::npos) << refused.error->message;
  EXPECT_TRUE(refused.value_json.empty());
  EXPECT_EQ(refused.usage.steps, 0u);
  EXPECT_EQ(runner.abandoned_runs(), 1u);  // still executing: the refusal did not wait for it

  // Once the native call returns, the abandoned run frees its runtime and leaves the count...
  HoldHook::release();
  EXPECT_EQ(wait_for_abandoned(runner, 0, std::chrono::seconds(20)), 0u);

  // ...and runs work again.
  const RunResult again = run(runner, normal, "21");
  EXPECT_EQ(again.outcome, Outcome::ok) << describe(again);
  EXPECT_EQ(again.value_json, "42");
}

TEST(AbandonedRuns, RunsBelowTheCapStillStart) {
  HoldHook hook;
  HostOptions options;
  options.max_abandoned_runs = 2;
  InProcessRunner runner(options);
  TempSkill stuck({{"index.js", "export default () => { hold(); return 1; }"}});
  stuck.manifest().limits.timeout_ms = 100;
  TempSkill normal({{"index.js", "export default () => 'fine'"}});

  EXPECT_EQ(run(runner, stuck).outcome, Outcome::timeout);
  EXPECT_EQ(runner.abandoned_runs(), 1u);
  const RunResult below = run(runner, normal);  // 1 of 2: still accepted
  EXPECT_EQ(below.outcome, Outcome::ok) << describe(below);
  EXPECT_EQ(below.value_json, "\"fine\"");

  EXPECT_EQ(run(runner, stuck).outcome, Outcome::timeout);
  EXPECT_EQ(runner.abandoned_runs(), 2u);
  const RunResult at_cap = run(runner, normal);
  EXPECT_EQ(at_cap.outcome, Outcome::internal) << describe(at_cap);
  ASSERT_TRUE(at_cap.error);
  EXPECT_NE(at_cap.error->message.find("limit is 2"), std::string::npos) << at_cap.error->message;

  HoldHook::release();
  EXPECT_EQ(wait_for_abandoned(runner, 0, std::chrono::seconds(20)), 0u);
  EXPECT_EQ(run(runner, normal).outcome, Outcome::ok);
}

}  // namespace
}  // namespace skillbox::testing
