#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

struct OutcomeCase {
  const char* name;
  const char* source;
  Outcome outcome;
};

// Every outcome an in-process run can have, through the public C++ API. (`crashed` belongs to the
// worker runner; `internal` needs a host failure such as a thread that cannot be started.)
const OutcomeCase kOutcomes[] = {
    {"ok", "export default (x) => x + 1", Outcome::ok},
    {"error", "export default () => { throw new Error('boom') }", Outcome::error},
    {"invalid", "export const notTheExport = 1", Outcome::invalid},
    {"memory_limit", "export default () => { const a = []; for (;;) a.push('x'.repeat(1000) + a.length) }",
     Outcome::memory_limit},
    {"step_limit", "export default () => { for (;;) {} }", Outcome::step_limit},
    {"timeout", "export default () => new Promise((r) => setTimeout(r, 60000))", Outcome::timeout},
    {"stack_overflow", "export default () => { const f = () => f(); f(); }", Outcome::stack_overflow},
};

TEST(InProcessRunner, EveryOutcomeThroughTheCppApi) {
  InProcessRunner runner;
  for (const OutcomeCase& c : kOutcomes) {
    TempSkill skill({{"index.js", c.source}});
    // Only the timeout case may reach the deadline: the others get a deadline far beyond their limit,
    // so a loaded machine cannot turn a step or memory limit into a timeout.
    skill.manifest().limits.timeout_ms = c.outcome == Outcome::timeout ? 300 : 20'000;
    skill.manifest().limits.steps = 1'000'000;
    skill.manifest().limits.memory_bytes = uint64_t{8} * 1024 * 1024;
    RunResult r = run(runner, skill, "41");
    EXPECT_EQ(r.outcome, c.outcome) << c.name << ": " << describe(r);
    EXPECT_EQ(to_string(r.outcome), c.name);
    if (c.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json, "42");
      EXPECT_FALSE(r.error);
    } else {
      ASSERT_TRUE(r.error) << c.name;
      EXPECT_FALSE(r.error->message.empty()) << c.name;
      EXPECT_TRUE(r.value_json.empty()) << c.name;
    }
  }
}

TEST(InProcessRunner, ConcurrentRunsFromManyThreadsAreIndependent) {
  InProcessRunner runner;
  TempSkill skill(
      {{"index.js",
        "let calls = 0;\n"
        "export default async (n) => { calls++; globalThis.leak = n;\n"
        "  await new Promise((r) => setTimeout(r, n % 3));\n"
        "  return { n, calls, sum: Array.from({ length: n }, (_, i) => i).reduce((a, b) => a + b, 0) }; }"}});
  TempSkill spinner({{"index.js", "export default () => { for (;;) {} }"}});
  spinner.manifest().limits.steps = 2'000'000;
  constexpr int kThreads = 6;
  constexpr int kRunsPerThread = 15;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsPerThread; ++i) {
        const int n = t * 100 + i;
        if (i % 5 == 4) {
          // Limits hit by one invocation do not disturb the others.
          if (run(runner, spinner).outcome != Outcome::step_limit) ++failures;
          continue;
        }
        RunResult r = run(runner, skill, std::to_string(n));
        const std::string want =
            R"({"n":)" + std::to_string(n) + R"(,"calls":1,"sum":)" + std::to_string(n * (n - 1) / 2) + "}";
        if (r.outcome != Outcome::ok || r.value_json != want) {
          ++failures;
          ADD_FAILURE() << describe(r) << " want " << want;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(InProcessRunner, NothingSurvivesFromOneInvocationToTheNext) {
  InProcessRunner runner;
  TempSkill skill(
      {{"index.js",
        "export default () => { const seen = [typeof globalThis.mark, typeof Array.prototype.mark];\n"
        "  globalThis.mark = 1; Array.prototype.mark = 2; Object.prototype.polluted = 3;\n"
        "  setTimeout(() => {}, 60000); return seen; }"}});
  for (int i = 0; i < 3; ++i) {
    RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"(["undefined","undefined"])");
  }
}

// The same with the runner's source cache serving the sources (runner/source_cache.h: files younger
// than a second are always read again, so the skill ages first): only source text is cached, and each
// run still gets a fresh runtime; an edit of the same size still takes effect on the next run.
TEST(InProcessRunner, NothingSurvivesBetweenRunsServedFromTheSourceCache) {
  InProcessRunner runner;
  TempSkill skill(
      {{"index.js",
        "export default () => { const seen = [typeof globalThis.mark, typeof Array.prototype.mark];\n"
        "  globalThis.mark = 1; Array.prototype.mark = 2; Object.prototype.polluted = 3;\n"
        "  setTimeout(() => {}, 60000); return [1, seen]; }"}});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (int i = 0; i < 3; ++i) {
    RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"([1,["undefined","undefined"]])");
  }
  skill.write("index.js",
              "export default () => { const seen = [typeof globalThis.mark, typeof Array.prototype.mark];\n"
              "  globalThis.mark = 1; Array.prototype.mark = 2; Object.prototype.polluted = 3;\n"
              "  setTimeout(() => {}, 60000); return [2, seen]; }");
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"([2,["undefined","undefined"]])");
}

TEST(InProcessRunner, ManyRunnersCanLiveAndDieInOneProcess) {
  for (int i = 0; i < 5; ++i) {
    InProcessRunner runner;
    TempSkill skill({{"index.js", "export default (x) => x * 2"}});
    RunResult r = run(runner, skill, std::to_string(i));
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, std::to_string(i * 2));
  }
}

TEST(InProcessRunner, ExceedingLimitsInTheSkillAreClampedToTheHostCeilings) {
  // A Skill built in code (not from a validated manifest) cannot ask for more than the host allows:
  // a JS stack larger than the thread's would let recursion crash the process.
  InProcessRunner runner;
  TempSkill skill({{"index.js", "export default () => { const f = () => f(); f(); }"}});
  skill.manifest().limits.stack_bytes = 64ull * 1024 * 1024;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::stack_overflow) << describe(r);
  EXPECT_EQ(r.error->message,
            "the JS stack limit was reached (limit is " + std::to_string(Limits::kMaxStackBytes) + " bytes)");
}

TEST(InProcessRunner, UnreadableSkillFolderIsInvalid) {
  InProcessRunner runner;
  Manifest m;
  m.id = "ghost";
  m.entry = "index.js";
  Invocation inv{.skill = Skill("/nonexistent/skillbox/ghost", m),
                 .export_name = "",
                 .input_json = "null",
                 .overrides = {}};
  RunResult r = runner.run(inv);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_NE(r.error->message.find("cannot open skill folder"), std::string::npos);
}

}  // namespace
}  // namespace skillbox::testing
