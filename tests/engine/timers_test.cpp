#include "engine/timers.h"

#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

// The due times are far apart (10 ms against 200 ms) so that a loaded machine, which may run the 10 ms
// timer late, still finds its nested 0 ms timer due before the 200 ms one.
TEST(Timers, MacrotasksRunAfterMicrotasksInDueOrder) {
  RunResult r = run_source(
      "export default () => new Promise((resolve) => {\n"
      "  const out = [];\n"
      "  setTimeout(() => out.push('t200'), 200);\n"
      "  setTimeout(() => out.push('t0a'), 0);\n"
      "  setTimeout(() => { out.push('t10'); setTimeout(() => { out.push('t10+0'); }, 0); }, 10);\n"
      "  setTimeout(() => out.push('t0b'));\n"
      "  queueMicrotask(() => out.push('micro'));\n"
      "  Promise.resolve().then(() => out.push('promise'));\n"
      "  setTimeout(() => resolve(out), 400);\n"
      "  out.push('sync');\n"
      "})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["sync","micro","promise","t0a","t0b","t10","t10+0","t200"])");
}

TEST(Timers, ExtraArgumentsArePassedAndDelaysAreWaited) {
  RunResult r = run_source(
      "export default () => new Promise((resolve) => {\n"
      "  const start = Date.now();\n"
      "  setTimeout((a, b) => resolve([a, b, Date.now() - start >= 25]), 30, 'x', { y: 1 });\n"
      "})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["x",{"y":1},true])");
}

TEST(Timers, ClearTimeoutAndClearIntervalCancel) {
  RunResult r = run_source(
      "export default () => new Promise((resolve) => {\n"
      "  const out = [];\n"
      "  const t = setTimeout(() => out.push('cancelled timeout ran'), 5);\n"
      "  clearTimeout(t);\n"
      "  clearTimeout('not a timer'); clearTimeout({ valueOf() { throw new Error('no conversion') } });\n"
      "  let n = 0;\n"
      "  const i = setInterval(() => { out.push('tick' + ++n); if (n === 3) clearInterval(i); }, 1);\n"
      "  setTimeout(() => resolve(out), 50);\n"
      "})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["tick1","tick2","tick3"])");
  EXPECT_EQ(r.usage.timers_dropped, 0u);
}

TEST(Timers, TimerIdsArePositiveIntegersThatIncrease) {
  RunResult r = run_source(
      "export default () => { const a = setTimeout(() => {}), b = setInterval(() => {}, 1000);\n"
      "  clearInterval(b); return [a > 0, b > a, Number.isInteger(a)]; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "[true,true,true]");
}

TEST(Timers, LiveTimersAreCappedWithAnErrorThatNamesTheLimit) {
  RunResult r = run_source(
      "export default () => { let n = 0;\n"
      "  try { for (;;) { setTimeout(() => {}, 1000); n++; } } catch (e) { return [n, e.name, e.message]; } "
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"j([10000,"RangeError","setTimeout: too many live timers (limit is 10000)"])j");
  EXPECT_EQ(r.usage.timers_dropped, 10000u);
}

TEST(Timers, CallbacksMustBeFunctions) {
  RunResult r = run_source(
      "export default () => { const out = [];\n"
      "  for (const f of [\"globalThis.hacked = 1\", undefined, 42]) {\n"
      "    try { setTimeout(f, 0); } catch (e) { out.push(e.name + ': ' + e.message); } }\n"
      "  try { queueMicrotask('x') } catch (e) { out.push(e.message) }\n"
      "  return out; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json,
            R"j(["TypeError: setTimeout: the callback must be a function (strings are not evaluated)",)j"
            R"j("TypeError: setTimeout: the callback must be a function (strings are not evaluated)",)j"
            R"j("TypeError: setTimeout: the callback must be a function (strings are not evaluated)",)j"
            R"j("queueMicrotask: the callback must be a function"])j");
}

TEST(Timers, UncaughtExceptionInATimerOrMicrotaskEndsTheRun) {
  RunResult r = run_source(
      "export default () => new Promise(() => { setTimeout(() => { throw new TypeError('in timer') }, 1) })");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->name, "TypeError");
  EXPECT_EQ(r.error->message, "in timer");

  r = run_source(
      "export default () => new Promise(() => { queueMicrotask(() => { throw new Error('in microtask') }) "
      "})");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->message, "in microtask");
}

TEST(Timers, APromiseNothingCanSettleIsAnError) {
  RunResult r = run_source("export default () => new Promise(() => {})");
  ASSERT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(
      r.error->message,
      "the export returned a promise that can never settle: no jobs, timers or host requests are left that "
      "could settle it");
}

TEST(Timers, PendingTimersAreDroppedAndCountedWhenTheRunEnds) {
  RunResult r = run_source(
      "export default async () => { globalThis.fired = 0;\n"
      "  for (let i = 0; i < 3; i++) setTimeout(() => { throw new Error('must not run') }, 60000);\n"
      "  await new Promise((r) => setTimeout(r, 1));\n"
      "  return 'done'; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("done")");
  EXPECT_EQ(r.usage.timers_dropped, 3u);
}

TEST(Timers, ZeroIntervalCannotStarveTheDeadline) {
  TempSkill skill({{"index.js", "export default () => new Promise(() => { setInterval(() => {}, 0); })"}});
  skill.manifest().limits.timeout_ms = 100;
  skill.manifest().limits.steps = Limits::kMaxSteps;
  TestRunner runner;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_EQ(r.usage.timers_dropped, 1u);
}

}  // namespace
}  // namespace skillbox::testing
