// Red-team regression: a classic script's exports are the functions it defines. A caller that lets
// someone else pick the export name (a tool call chosen by a model, say) must not be able to reach a
// built-in global such as `eval` and have the input run as code with the skill's permissions.
#include <gtest/gtest.h>

#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

TEST(ScriptExports, BuiltInGlobalsAreNotExports) {
  TestRunner runner;
  TempSkill skill({{"index.js",
                    "function helper(x) { return 'helper:' + x }\nvar mine = function (x) { "
                    "return 'mine:' + x };\nfunction log(x) { return 'own log:' + x }\n"}});
  for (const char* name :
       {"eval", "Function", "constructor", "toString", "setTimeout", "btoa", "parseInt", "hasOwnProperty"}) {
    RunResult r = run(runner, skill, R"("globalThis.pwned = 1; 6 * 7")", name);
    EXPECT_EQ(r.outcome, Outcome::invalid) << name << ": " << describe(r);
    ASSERT_TRUE(r.error.has_value()) << name;
    EXPECT_NE(r.error->message.find("built-in globals are not"), std::string::npos) << r.error->message;
  }
  // The script's own functions, including one that replaces a built-in, still are.
  RunResult r = run(runner, skill, R"("x")", "helper");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("helper:x")");
  r = run(runner, skill, R"("x")", "mine");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("mine:x")");
  r = run(runner, skill, R"("x")", "log");
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("own log:x")");
}

TEST(ScriptExports, ADefaultOrRunBuiltInIsNotCalledEither) {
  // Without an export name the runner looks for `default` then `run`; neither is a built-in today,
  // but a script that defines neither is invalid rather than calling anything inherited.
  TestRunner runner;
  TempSkill skill({{"index.js", "var x = 1;\n"}});
  RunResult r = run(runner, skill);
  EXPECT_EQ(r.outcome, Outcome::invalid) << describe(r);
}

}  // namespace
}  // namespace skillbox::testing
