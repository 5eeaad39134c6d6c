// One test (or more) per engine patch in patches/ (see docs/engine-patches.md). Each fails, hangs or
// crashes without its patch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

constexpr uint64_t kHugeSteps = Limits::kMaxSteps;

RunResult run_with(Runner& runner, const std::string& source, uint64_t steps, uint64_t timeout_ms,
                   uint64_t memory_bytes = Limits{}.memory_bytes) {
  TempSkill skill({{"index.js", source}});
  skill.manifest().limits.steps = steps;
  skill.manifest().limits.timeout_ms = timeout_ms;
  skill.manifest().limits.memory_bytes = memory_bytes;
  return run(runner, skill);
}

void expect_next_run_normal(Runner& runner) {
  RunResult r = run_with(runner, "export default () => 'normal'", Limits{}.steps, Limits{}.timeout_ms);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("normal")");
}

bool abandoned(const RunResult& r) {
  return r.error && r.error->message.find("abandoned") != std::string::npos;
}

// 0001
TEST(EnginePatches, CatastrophicRegexpEndsAsStepLimit) {
  InProcessRunner runner;
  RunResult r =
      run_with(runner, "export default () => /^(a+)+$/.test('a'.repeat(40) + '!')", 1'000'000, 60'000);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  EXPECT_GE(r.usage.steps, 1'000'000u);
  EXPECT_LT(r.usage.steps, 1'000'000u + 10'000u);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, CatastrophicRegexpEndsAsTimeout) {
  InProcessRunner runner;
  RunResult r =
      run_with(runner, "export default () => /^(a+)+$/.test('a'.repeat(40) + '!')", kHugeSteps, 200);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r));
  expect_next_run_normal(runner);
}

TEST(EnginePatches, RegexpStillMatchesAndReportsNoFalseErrors) {
  RunResult r = run_source(
      "export default () => [/^(a+)+$/.test('a'.repeat(30)), 'x-aab-y'.replace(/(a+)(b)/g, '[$1|$2]'),\n"
      "  'a1b22c333'.split(/\\d+/), /(\\w+)@(\\w+)\\.com/.exec('mail bob@example.com now')[2]]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"([true,"x-[aa|b]-y",["a","b","c",""],"example"])");
}

// 0002
TEST(EnginePatches, StackOverflowCannotBeCaughtAndEndsTheRun) {
  InProcessRunner runner;
  for (const char* source : {
           "export default () => { const f = () => f(); try { f() } catch (e) { return 'caught ' + e.message "
           "} }",
           "export default () => { const f = () => f(); try { f() } finally { return 'finally' } }",
           "export default async () => { const f = async () => f(); try { await f() } catch (e) { return "
           "'caught' } }",
           "export default () => { let g = function () { return g() }; for (let i = 0; i < 10; i++) g = "
           "g.bind(null);"
           " try { g() } catch (e) { return 'caught' } }",
       }) {
    RunResult r = run_with(runner, source, Limits{}.steps, 10'000);
    ASSERT_EQ(r.outcome, Outcome::stack_overflow) << source << ": " << describe(r);
    EXPECT_TRUE(r.value_json.empty());
  }
  expect_next_run_normal(runner);
}

// 0003
TEST(EnginePatches, HugeSparseArrayJoinIsInterrupted) {
  InProcessRunner runner;
  // With a heap that never fills, only the step budget can stop the join.
  RunResult r = run_with(runner, "export default () => new Array(1e9).join()", 1'000'000, 60'000,
                         Limits::kMaxMemoryBytes);
  ASSERT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ArrayLikeLoopsOverHolesAreInterrupted) {
  InProcessRunner runner;
  for (const char* source : {
           "export default () => Array.prototype.indexOf.call({ length: 2 ** 40 }, 1)",
           "export default () => Array.prototype.lastIndexOf.call({ length: 2 ** 31 }, 1)",
           "export default () => Array.prototype.includes.call({ length: 2 ** 40 }, 1)",
           "export default () => Array.prototype.forEach.call({ length: 2 ** 40 }, () => {})",
           "export default () => new Array(2 ** 31).every(() => false)",
       }) {
    RunResult r = run_with(runner, source, 1'000'000, 60'000);
    ASSERT_EQ(r.outcome, Outcome::step_limit) << source << ": " << describe(r);
  }
  expect_next_run_normal(runner);
}

// 0004
TEST(EnginePatches, DeepJsonStringifyIsACatchableError) {
  InProcessRunner runner;
  RunResult r =
      run_with(runner,
               "export default () => { let a = []; for (let i = 0; i < 1e5; i++) a = [a];\n"
               "  try { return JSON.stringify(a).length } catch (e) { return e.name + ': ' + e.message } }",
               Limits{}.steps, 30'000);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("InternalError: stack overflow")");
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ArrayIsArrayOnAProxyChainIsAStackOverflowNotACrash) {
  InProcessRunner runner;
  RunResult r =
      run_with(runner,
               "export default () => { let p = []; for (let i = 0; i < 2e5; i++) p = new Proxy(p, {});\n"
               "  return Array.isArray(p); }",
               Limits{}.steps, 30'000, 64ull * 1024 * 1024);
  // An optimizing compiler may turn the recursion into a loop (tail call): then the answer is
  // simply true. Without optimization (debug and sanitizer builds) it recurses once per proxy and,
  // without the patch, overflows the native stack.
  if (r.outcome == Outcome::ok) {
    EXPECT_EQ(r.value_json, "true");
  } else {
    EXPECT_EQ(r.outcome, Outcome::stack_overflow) << describe(r);
  }
  expect_next_run_normal(runner);
}

// 0005
TEST(EnginePatches, InterruptStaysUncatchableWhenAllocationsFail) {
  InProcessRunner runner;
  // After the deadline every allocation fails, so the "interrupted" error cannot be allocated.
  RunResult r = run_with(runner, "export default () => { for (;;) { try { for (;;) {} } catch (e) {} } }",
                         kHugeSteps, 200);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r)) << describe(r);
  expect_next_run_normal(runner);
}

TEST(EnginePatches, ErrorsWithoutMemoryForTheirObjectDoNotCrash) {
  InProcessRunner runner;
  // A 4 GiB heap and no step budget: the watchdog's allocation refusal ends the join, and each refused
  // allocation throws an error whose object cannot be allocated either.
  RunResult r =
      run_with(runner, "export default () => new Array(1e9) + ''", kHugeSteps, 300, Limits::kMaxMemoryBytes);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_FALSE(abandoned(r)) << describe(r);
  expect_next_run_normal(runner);
}

// 0007, 0008: undefined behaviour that UBSan reports. These runs pass in every build; in the `asan`
// preset (-fsanitize=address,undefined) ctest sets UBSAN_OPTIONS=halt_on_error=1, so without the
// patches the report aborts the test process.
TEST(EnginePatches, TypeofComparisonsCompileWithoutSignedOverflow) {
  // `typeof x == 'undefined'` is optimized with a mask of four opcodes that included OP_neq (170)
  // shifted left by 24 into an int.
  RunResult r = run_source(
      "export default () => { let u; const f = () => 1; return [typeof u == 'undefined',\n"
      "  typeof u != 'undefined', typeof f === 'function', typeof f !== 'function', typeof 's' == 'string'] "
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[true,false,true,false,true]");
}

TEST(EnginePatches, ZeroLengthCopiesPassNoNullPointer) {
  // bf_set() of a BigInt zero (no limbs, NULL tab), the variable table of a function without
  // arguments or locals, ''.normalize(): each called memcpy() with NULL and a count of 0.
  RunResult r = run_source(
      "function none() { return 7 }\n"
      "export default () => [String(-0n), String(0n * 5n), String(BigInt(0) + 1n), String(0n ** 2n),\n"
      "  ''.normalize(), 'caf\\u00e9'.normalize('NFC').length, none()]");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["0","0","1","0","",4,7])");
}

}  // namespace
}  // namespace skillbox::testing
