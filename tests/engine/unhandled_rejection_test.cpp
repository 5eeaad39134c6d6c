// Unhandled promise rejections (docs/limits.md "Unhandled promise rejections"): counted in usage, the
// first ones logged as warnings, the run itself unaffected. Runs in both isolation modes.
#include <gtest/gtest.h>

#include <string>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

size_t warnings_about_rejections(const RunResult& r) {
  size_t n = 0;
  for (const LogEntry& e : r.logs)
    if (e.level == LogEntry::Level::warn && e.message.starts_with("[skillbox] unhandled promise rejection: "))
      ++n;
  return n;
}

TEST(UnhandledRejections, ARejectionNobodyHandlesIsCountedAndLoggedWithoutEndingTheRun) {
  RunResult r = run_source("export default () => { Promise.reject(new TypeError('lost')); return 'done'; }");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "\"done\"");
  EXPECT_EQ(r.usage.unhandled_rejections, 1u);
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_EQ(r.logs[0].level, LogEntry::Level::warn);
  EXPECT_EQ(r.logs[0].message, "[skillbox] unhandled promise rejection: TypeError: lost");
}

TEST(UnhandledRejections, HandledRejectionsAndTheExportsOwnAreNotCounted) {
  RunResult handled = run_source(
      "export default async () => {\n"
      "  Promise.reject(new Error('a')).catch(() => {});\n"
      "  const p = Promise.reject(new Error('b'));\n"
      "  await null;\n"  // still within the same drain of the job queue
      "  p.then(null, () => {});\n"
      "  try { await Promise.reject(new Error('c')); } catch (e) {}\n"
      "  return 1;\n"
      "}");
  ASSERT_EQ(handled.outcome, Outcome::ok) << describe(handled);
  EXPECT_EQ(handled.usage.unhandled_rejections, 0u);
  EXPECT_EQ(warnings_about_rejections(handled), 0u);

  RunResult own = run_source("export default async () => { await null; throw new RangeError('mine'); }");
  ASSERT_EQ(own.outcome, Outcome::error) << describe(own);
  EXPECT_EQ(own.error->message, "mine");
  EXPECT_EQ(own.usage.unhandled_rejections, 0u);
  EXPECT_EQ(warnings_about_rejections(own), 0u);

  RunResult direct = run_source("export default () => Promise.reject(new Error('direct'))");
  ASSERT_EQ(direct.outcome, Outcome::error) << describe(direct);
  EXPECT_EQ(direct.usage.unhandled_rejections, 0u);
}

TEST(UnhandledRejections, AHandlerAttachedOnALaterTurnDoesNotTakeTheCountBack) {
  RunResult r = run_source(
      "export default () => new Promise((resolve) => {\n"
      "  const p = Promise.reject('late');\n"
      "  setTimeout(() => { p.catch(() => {}); resolve('ok'); }, 10);\n"
      "})");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.usage.unhandled_rejections, 1u);
  ASSERT_EQ(warnings_about_rejections(r), 1u);
  EXPECT_EQ(r.logs[0].message, "[skillbox] unhandled promise rejection: Error: late");
}

TEST(UnhandledRejections, ManyAreAllCountedButOnlyTheFirstTenLogged) {
  // 3,000 in one turn: past the 1,024 the session watches, the rest are counted at once.
  RunResult r = run_source(
      "export default () => { for (let i = 0; i < 3000; i++) Promise.reject(new Error('n' + i)); return 0; "
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.usage.unhandled_rejections, 3000u);
  EXPECT_EQ(warnings_about_rejections(r), 10u);
  ASSERT_FALSE(r.logs.empty());
  EXPECT_NE(r.logs.back().message.find("later ones are only counted"), std::string::npos)
      << r.logs.back().message;
}

TEST(UnhandledRejections, AHostileReasonIsDescribedSafely) {
  // Getters that throw, a Proxy, and a reason whose toString throws: counted, logged with what could
  // be read, and the run is unaffected.
  RunResult r = run_source(
      "export default () => {\n"
      "  Promise.reject({ get name() { throw new Error('no'); }, get message() { throw 1; } });\n"
      "  Promise.reject(new Proxy({}, { get() { throw new Error('trap'); } }));\n"
      "  Promise.reject({ toString() { throw new Error('x'); } });\n"
      "  return 'still fine';\n"
      "}");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "\"still fine\"");
  EXPECT_EQ(r.usage.unhandled_rejections, 3u);
  EXPECT_EQ(warnings_about_rejections(r), 3u);
}

// Describing a reason runs its getters: skill code, so under the run's limits. A getter that never
// returns ends the run at the step limit instead of hanging the host.
TEST(UnhandledRejections, AReasonWhoseGetterLoopsRunsUnderTheStepLimit) {
  RunResult r = run_source(
      "export default () => { Promise.reject({ get message() { for (;;) {} } }); return 'unreached'; }");
  EXPECT_EQ(r.outcome, Outcome::step_limit) << describe(r);
  EXPECT_EQ(r.value_json, "");
}

}  // namespace
}  // namespace skillbox::testing
