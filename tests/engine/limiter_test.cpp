// Limits and the outcomes they produce, observed through the C++ API (engine/limiter.*, engine/heap.*).
#include "engine/limiter.h"

#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

constexpr uint64_t kHugeSteps = Limits::kMaxSteps;

// Runs `source` with the given limits on `runner`.
RunResult run_limited(Runner& runner, const std::string& source, Limits limits) {
  TempSkill skill({{"index.js", source}});
  skill.manifest().limits = limits;
  return run(runner, skill);
}

// Every case ends by checking that the same runner still runs a skill normally.
void expect_next_run_normal(Runner& runner) {
  TempSkill skill(
      {{"index.js", "export default (x) => ({ echo: x, sum: [1, 2, 3].reduce((a, b) => a + b) })"}});
  RunResult r = run(runner, skill, R"("next")");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"echo":"next","sum":6})");
}

TEST(Limits, StepBudgetIsExact) {
  TestRunner runner;
  const std::string source =
      "export default () => { let s = 0; for (let i = 0; i < 12345; i++) s += i; return s; }";
  Limits limits;
  RunResult probe = run_limited(runner, source, limits);
  ASSERT_EQ(probe.outcome, Outcome::ok) << describe(probe);
  const uint64_t used = probe.usage.steps;
  ASSERT_GT(used, 12345u);

  limits.steps = used;
  RunResult exact = run_limited(runner, source, limits);
  EXPECT_EQ(exact.outcome, Outcome::ok) << describe(exact);
  EXPECT_EQ(exact.usage.steps, used);

  limits.steps = used - 1;
  RunResult over = run_limited(runner, source, limits);
  ASSERT_EQ(over.outcome, Outcome::step_limit) << describe(over);
  EXPECT_EQ(over.error->name, "StepLimitExceeded");
  EXPECT_EQ(over.error->message, "the step budget ran out (limit is " + std::to_string(used - 1) + " steps)");
  EXPECT_TRUE(over.value_json.empty());
  expect_next_run_normal(runner);
}

TEST(Limits, StepsCoverEveryPromiseJob) {
  TestRunner runner;
  Limits limits;
  limits.steps = 50'000;
  // Each job is one call (one step); 100,000 chained jobs exceed the budget without any loop.
  RunResult r =
      run_limited(runner,
                  "export default async () => { let n = 0; const step = () => { if (++n < 100000) return "
                  "Promise.resolve().then(step); }; await step(); return n; }",
                  limits);
  EXPECT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  expect_next_run_normal(runner);
}

TEST(Limits, CatchAndFinallyDoNotSurviveALimit) {
  TestRunner runner;
  Limits limits;
  limits.steps = 100'000;
  for (const char* source : {
           "export default () => { try { for (;;) {} } catch (e) { return 'caught'; } }",
           "export default () => { try { for (;;) {} } finally { return 'finally'; } }",
           "export default () => { for (;;) { try { for (;;) {} } catch (e) {} } }",
           "export default async () => { const f = async () => { for (;;) {} }; await f().catch(() => 0); "
           "return 'after'; }",
       }) {
    RunResult r = run_limited(runner, source, limits);
    EXPECT_EQ(r.outcome, Outcome::step_limit) << source << ": " << describe(r);
    EXPECT_TRUE(r.value_json.empty()) << source;
  }
  expect_next_run_normal(runner);
}

TEST(Limits, CaughtOutOfMemoryIsStillMemoryLimit) {
  TestRunner runner;
  Limits limits;
  limits.memory_bytes = uint64_t{4} * 1024 * 1024;
  RunResult r = run_limited(runner,
                            "export default () => { try { const a = []; for (;;) a.push(new "
                            "Array(10000).fill(1)); } catch (e) { return 'survived: ' + e; } }",
                            limits);
  ASSERT_EQ(r.outcome, Outcome::memory_limit) << describe(r);
  EXPECT_EQ(r.error->name, "MemoryLimitExceeded");
  EXPECT_EQ(r.error->message, "the heap limit was reached (limit is 4194304 bytes)");
  EXPECT_LE(r.usage.heap_peak_bytes, limits.memory_bytes);
  EXPECT_GT(r.usage.heap_peak_bytes, limits.memory_bytes / 2);
  expect_next_run_normal(runner);
}

TEST(Limits, ThrownValuesThatLookLikeLimitsAreOrdinaryErrors) {
  TestRunner runner;
  struct Case {
    const char* source;
    const char* name;
    const char* message;
  } cases[] = {
      {"export default () => { throw null }", "Error", "null"},
      {"export default () => { throw new InternalError('out of memory') }", "InternalError", "out of memory"},
      {"export default () => { throw new InternalError('stack overflow') }", "InternalError",
       "stack overflow"},
      {"export default () => { throw new InternalError('interrupted') }", "InternalError", "interrupted"},
      {"export default async () => { await null; throw null }", "Error", "null"},
  };
  for (const Case& c : cases) {
    RunResult r = run_limited(runner, c.source, Limits{});
    ASSERT_EQ(r.outcome, Outcome::error) << c.source << ": " << describe(r);
    EXPECT_EQ(r.error->name, c.name);
    EXPECT_EQ(r.error->message, c.message);
  }
  expect_next_run_normal(runner);
}

TEST(Limits, DeepRecursionIsStackOverflowForEveryStackSize) {
  TestRunner runner;
  for (uint64_t stack : {Limits::kMinStackBytes, uint64_t{512} * 1024, Limits::kMaxStackBytes}) {
    Limits limits;
    limits.stack_bytes = stack;
    RunResult r = run_limited(runner,
                              "export default () => { const f = (n) => f(n + 1) + 1; try { return f(0); } "
                              "catch (e) { return 'caught'; } }",
                              limits);
    ASSERT_EQ(r.outcome, Outcome::stack_overflow) << stack << ": " << describe(r);
    EXPECT_EQ(r.error->name, "StackOverflow");
    EXPECT_EQ(r.error->message,
              "the JS stack limit was reached (limit is " + std::to_string(stack) + " bytes)");
  }
  expect_next_run_normal(runner);
}

TEST(Limits, InfiniteLoopWithAHugeBudgetEndsAtTheDeadline) {
  TestRunner runner;
  Limits limits;
  limits.steps = kHugeSteps;
  limits.timeout_ms = 200;
  RunResult r = run_limited(runner, "export default () => { for (;;) {} }", limits);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_EQ(r.error->name, "TimeoutExceeded");
  EXPECT_EQ(r.error->message, "the wall-clock deadline passed (limit is 200 ms)");
  expect_next_run_normal(runner);
}

TEST(Limits, WaitingForATimerPastTheDeadlineIsATimeout) {
  TestRunner runner;
  Limits limits;
  limits.timeout_ms = 100;
  RunResult r = run_limited(
      runner, "export default () => new Promise((resolve) => setTimeout(resolve, 60000))", limits);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_EQ(r.usage.timers_dropped, 1u);
  expect_next_run_normal(runner);
}

TEST(Limits, HostOverridesLowerButNeverRaiseTheManifestLimits) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default () => { let i = 0; while (i < 1e6) i++; return i; }"}});
  Invocation inv{.skill = skill.skill(), .export_name = "", .input_json = "null", .overrides = {}};
  inv.overrides.steps = 1000;
  RunResult r = runner.run(inv);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  EXPECT_EQ(r.error->message, "the step budget ran out (limit is 1000 steps)");

  skill.manifest().limits.steps = 1000;
  inv = Invocation{.skill = skill.skill(), .export_name = "", .input_json = "null", .overrides = {}};
  inv.overrides.steps = kHugeSteps;
  r = runner.run(inv);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  EXPECT_EQ(r.error->message, "the step budget ran out (limit is 1000 steps)");
  expect_next_run_normal(runner);
}

TEST(Limits, UsageReportsWhatTheRunUsed) {
  TestRunner runner;
  RunResult r =
      run_limited(runner,
                  "export default () => { const a = []; for (let i = 0; i < 100000; i++) a.push({ i }); "
                  "setTimeout(() => {}, 60000); setInterval(() => {}, 60000); return a.length; }",
                  Limits{});
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "100000");
  EXPECT_GT(r.usage.steps, 100000u);
  EXPECT_GT(r.usage.heap_peak_bytes, 100000u * 16);  // at least the objects' slots
  EXPECT_EQ(r.usage.timers_dropped, 2u);
  EXPECT_EQ(r.usage.host_calls, 0u);
}

}  // namespace
}  // namespace skillbox::testing
