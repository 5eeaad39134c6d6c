// Red-team regressions: ways a skill tried to end with an outcome other than the limit it hit, or to
// keep running after one. Every case is followed by a normal invocation on the same runner.
#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

class LimitEvasion : public ::testing::Test {
 protected:
  RunResult run_js(const std::string& source, Limits limits = {}) {
    TempSkill skill({{"index.js", source}});
    skill.manifest().limits = limits;
    return run(runner_, skill);
  }

  void TearDown() override {
    RunResult r = run_js("export default () => ({ ok: [1, 2].map((v) => v + 1) })");
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"({"ok":[2,3]})");
  }

  TestRunner runner_;
};

// A call-depth overflow inside skill code that the host itself runs after the export returned or
// threw (a getter read while serializing the result or describing the thrown value) returns to the
// host without another engine tick. It is still the run's outcome, not an ordinary `error`.
TEST_F(LimitEvasion, StackOverflowInCodeTheHostRunsIsStillStackOverflow) {
  const char* const kDeep = "function deep() { return deep() + 1 }\n";
  const std::string cases[] = {
      "export default () => ({ get x() { return deep() } })",              // result getter
      "export default () => ({ toJSON() { return deep() } })",             // result toJSON
      "export default () => { throw { get stack() { return deep() } } }",  // thrown value's stack
      "export default () => { throw { get message() { return deep() } } }",
      "export default async () => { await 0; throw { get name() { return deep() } } }",
  };
  for (const std::string& body : cases) {
    RunResult r = run_js(kDeep + body);
    EXPECT_EQ(r.outcome, Outcome::stack_overflow) << body << "\n" << describe(r);
    ASSERT_TRUE(r.error.has_value());
    EXPECT_EQ(r.error->name, "StackOverflow") << body;
    EXPECT_EQ(r.value_json, "") << body;
  }
  // The thrown value's `code` is never read (a run's error.code comes from the host only,
  // forged_codes_test.cpp), so its getter never runs.
  RunResult r = run_js(std::string(kDeep) +
                       "export default () => { throw { message: 'm', get code() { return deep() } } }");
  EXPECT_EQ(r.outcome, Outcome::error) << describe(r);
  EXPECT_EQ(r.error->message, "m");
}

}  // namespace
}  // namespace skillbox::testing
