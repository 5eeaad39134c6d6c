// A bundle's failing tool call: outcome `error` with the error filled in, and beside it the value
// OpenHuman's ToolResult had, {content: [{type: "text", text: message}], is_error: true}; a sequence
// keeps the results of the calls before it (docs/openhuman.md "The lifecycle").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using testing::Bundle;
using testing::call;
using testing::describe_run;

json error_result(const std::string& text) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"is_error", true}};
}
json ok_result(const std::string& text) {
  return {{"content", json::array({{{"type", "text"}, {"text", text}}})}, {"is_error", false}};
}

// A bundle whose stop() logs (so a test sees that it ran after a failure) and whose failing parts
// are chosen by the calls' arguments.
constexpr const char* kFailing = R"JS(
var __skill_bundle = (() => {
  const skill = {
    tools: [
      { name: 'ok', execute(a) { return { n: a.n }; } },
      { name: 'fail', execute(a) { throw new TypeError('fail #' + a.n); } },
      { name: 'reject', async execute() { await null; throw 'plain string'; } },
      { name: 'spin', execute() { for (;;) {} } },
      { name: 'arm', execute() { state.set('init-throws', true); return 'armed'; } },
    ],
    init() { if (state.get('init-throws')) throw new Error('init failed'); },
    onSync() { throw new RangeError('sync failed'); },
    onPing() { return 'pong'; },
    stop() { console.info('stop ran'); if (globalThis.stopThrows) throw new Error('stop failed'); },
    onSetOption(o) { globalThis.stopThrows = o.value; return true; },
  };
  return { default: skill };
})();
globalThis.__skill = { default: __skill_bundle.default };
)JS";

class FailingBundle : public ::testing::Test {
 protected:
  FailingBundle() : bundle_("notes", ""), runner_(testing::host(bundle_.data())) {
    bundle_.write("index.js", kFailing);
    skill_ = bundle_.skill();
  }
  RunResult run(const std::string& export_name, const json& input) {
    return call(runner_, *skill_, export_name, input.dump());
  }
  Bundle bundle_;
  testing::TestRunner runner_;
  std::optional<Skill> skill_;
};

TEST_F(FailingBundle, AThrowingToolGivesIsErrorTrueWithTheMessageAndOutcomeError) {
  const RunResult r = run("tool:fail", {{"n", 7}});
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error) << describe_run(r);
  EXPECT_EQ(r.error->name, "TypeError");
  EXPECT_EQ(r.error->message, "fail #7");
  ASSERT_FALSE(r.value_json.empty()) << describe_run(r);
  EXPECT_EQ(json::parse(r.value_json), error_result("fail #7"));
  ASSERT_FALSE(r.logs.empty());
  EXPECT_EQ(r.logs.back().message, "stop ran") << "stop() still runs after a failing call";

  const RunResult rejected = run("tool:reject", json::object());
  EXPECT_EQ(rejected.outcome, Outcome::error);
  ASSERT_TRUE(rejected.error);
  EXPECT_EQ(rejected.error->message, "plain string");
  EXPECT_EQ(json::parse(rejected.value_json), error_result("plain string")) << "a rejected promise too";
}

TEST_F(FailingBundle, ASequenceReturnsTheResultsSoFarAndTheFailingCallsToolResult) {
  const json seq = json::array({{{"tool", "ok"}, {"args", {{"n", 1}}}},
                                {{"hook", "onPing"}},
                                {{"tool", "fail"}, {"args", {{"n", 2}}}},
                                {{"tool", "ok"}, {"args", {{"n", 3}}}}});
  const RunResult r = run("", seq);
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "fail #2");
  EXPECT_EQ(json::parse(r.value_json),
            json::array({ok_result(R"({"n":1})"), "pong", error_result("fail #2")}))
      << "the call after the failing one never ran";
}

TEST_F(FailingBundle, AFailingHookKeepsTheResultsSoFarAndAddsNoToolResult) {
  const RunResult seq = run("", json::array({{{"tool", "ok"}, {"args", {{"n", 1}}}}, {{"hook", "onSync"}}}));
  EXPECT_EQ(seq.outcome, Outcome::error);
  ASSERT_TRUE(seq.error);
  EXPECT_EQ(seq.error->name, "RangeError");
  EXPECT_EQ(json::parse(seq.value_json), json::array({ok_result(R"({"n":1})")}));
  // A hook called alone has no ToolResult: the error only, as before.
  const RunResult single = run("hook:onSync", nullptr);
  EXPECT_EQ(single.outcome, Outcome::error);
  EXPECT_TRUE(single.value_json.empty()) << single.value_json;
}

TEST_F(FailingBundle, TheCallsErrorWinsOverAnErrorOfStop) {
  const RunResult r =
      run("", json::array({{{"hook", "onSetOption"}, {"args", {{"name", "x"}, {"value", true}}}},
                           {{"tool", "fail"}, {"args", {{"n", 4}}}}}));
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "fail #4");
  EXPECT_EQ(json::parse(r.value_json), json::array({true, error_result("fail #4")}));
  // Without a failing call, an error of stop() is the run's error, with no value.
  const RunResult stop_only =
      run("", json::array({{{"hook", "onSetOption"}, {"args", {{"name", "x"}, {"value", true}}}}}));
  EXPECT_EQ(stop_only.outcome, Outcome::error);
  ASSERT_TRUE(stop_only.error);
  EXPECT_EQ(stop_only.error->message, "stop failed");
  EXPECT_TRUE(stop_only.value_json.empty()) << stop_only.value_json;
}

TEST_F(FailingBundle, AFailureOutsideTheCallsOrALimitCarriesNoValue) {
  ASSERT_EQ(run("tool:arm", json::object()).outcome, Outcome::ok);  // init() throws from now on
  const RunResult init = run("tool:ok", {{"n", 1}});
  EXPECT_EQ(init.outcome, Outcome::error);
  ASSERT_TRUE(init.error);
  EXPECT_EQ(init.error->message, "init failed");
  EXPECT_TRUE(init.value_json.empty()) << init.value_json;
}

TEST(BundleErrors, ALimitInAToolDecidesTheOutcomeAndDropsTheValue) {
  Bundle b("notes", R"({"limits": {"steps": 200000}})");
  b.write("index.js", kFailing);
  testing::TestRunner runner(testing::host(b.data()));
  const RunResult r = call(runner, b.skill(), "",
                           json::array({{{"tool", "ok"}, {"args", {{"n", 1}}}}, {{"tool", "spin"}}}).dump());
  EXPECT_EQ(r.outcome, Outcome::step_limit) << describe_run(r);
  EXPECT_TRUE(r.value_json.empty()) << r.value_json;
}

TEST(BundleErrors, AV1SkillThatThrowsStillHasNoValue) {
  testing::TempSkill skill({{"index.js", "export default () => { throw new Error('v1'); }"}});
  testing::TestRunner runner;
  const RunResult r = testing::run(runner, skill);
  EXPECT_EQ(r.outcome, Outcome::error);
  EXPECT_TRUE(r.value_json.empty()) << r.value_json;
}

// The identity rule (docs/manifest.md "Identity") holds for bundles: the id of manifest.json belongs
// to the first folder that used it, and a second folder with the same id is refused before it runs.
TEST(BundleIdentity, ASecondFolderWithTheSameIdIsRefusedBeforeItRuns) {
  Bundle first("notes", "");
  Bundle second("notes", "");
  testing::TestRunner runner(testing::host(first.data()));
  const RunResult owner = call(runner, first.skill(), "tool:bump", "{}");
  ASSERT_EQ(owner.outcome, Outcome::ok) << describe_run(owner);
  const RunResult r = call(runner, second.skill(), "tool:bump", "{}");
  EXPECT_EQ(r.outcome, Outcome::invalid) << describe_run(r);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("skillbox skills rebind"), std::string::npos) << r.error->message;
  EXPECT_TRUE(r.logs.empty()) << "no bundle code ran (its stop() logs)";
}

// misbehave logs its whole skill object at load, as some bundles do: one bounded line, and the call
// goes on to its own outcome.
TEST(BundleLogs, ALogOfTheWholeSkillObjectAtLoadIsOneBoundedLine) {
  Bundle b("misbehave", "");
  testing::TestRunner runner(testing::host(b.data()));
  const RunResult r = call(runner, b.skill(), "tool:throws", "{}");
  EXPECT_EQ(r.outcome, Outcome::error) << describe_run(r);
  ASSERT_EQ(r.logs.size(), 1u) << describe_run(r);
  EXPECT_EQ(r.logs[0].message.rfind("skill {\"tools\":[{\"name\":\"spin\"", 0), 0u) << r.logs[0].message;
  EXPECT_NE(r.logs[0].message.find("[Function: execute]"), std::string::npos) << r.logs[0].message;
}

}  // namespace
}  // namespace skillbox
