// `store` and `env` from real skills through the in-process runner: values persist across invocations in
// DATA/store.sqlite, skills are isolated, quotas and refusals surface as host errors, hostile arguments end
// as errors or limits, and the next invocation is always normal.
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <string>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "skillbox/store.h"
#include "support/scoped_env.h"

namespace skillbox {
namespace {

using testing::describe;
using testing::TempSkill;

class StoreFromSkills : public ::testing::Test {
 protected:
  StoreFromSkills() { options_.data_dir = data_.path(); }

  /// Runs `body` as the default export of skill `id` (an async function body with `input`).
  RunResult run(const std::string& body, const std::string& id = "notes", StorePolicy policy = {},
                const std::string& input = "null") {
    // One skill folder per id, rewritten for each run: the data directory binds an id to one folder
    // (docs/manifest.md "Identity").
    std::unique_ptr<TempSkill>& slot = skills_[id];
    if (!slot) {
      slot = std::make_unique<TempSkill>(std::initializer_list<std::pair<const std::string, std::string>>{});
      slot->manifest().id = id;
    }
    TempSkill& skill = *slot;
    skill.write("index.js", "export default async function (input) {\n" + body + "\n}");
    skill.manifest().permissions.store = policy;
    skill.manifest().permissions.env = env_names_;
    skillbox::testing::TestRunner runner(options_);
    return testing::run(runner, skill, input);
  }

  /// Runs `body` and expects outcome ok; returns the value JSON.
  std::string ok(const std::string& body, const std::string& id = "notes", StorePolicy policy = {}) {
    const RunResult r = run(body, id, policy);
    EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
    return r.value_json;
  }

  /// The next invocation after anything hostile: a plain round trip still works.
  void expect_next_run_normal(const std::string& id = "notes") {
    EXPECT_EQ(ok("store.set('after', {fine: true}); return store.get('after')", id), R"({"fine":true})");
  }

  testing::TempDir data_;
  HostOptions options_;
  std::vector<std::string> env_names_;
  std::map<std::string, std::unique_ptr<TempSkill>> skills_;
};

TEST_F(StoreFromSkills, ValuesPersistAcrossInvocations) {
  EXPECT_EQ(
      ok("store.set('count', 1); store.set('profile', {name: 'Ada', tags: ['x']}); return store.keys()"),
      R"(["count","profile"])");
  EXPECT_EQ(ok("const n = store.get('count'); store.set('count', n + 1); return [n, store.get('profile')]"),
            R"([1,{"name":"Ada","tags":["x"]}])");
  EXPECT_EQ(ok("return [store.get('count'), openhuman.store.get('count'), store.delete('count'),"
               " store.delete('count'), store.get('count') === undefined]"),
            "[2,2,true,false,true]");
  EXPECT_TRUE(std::filesystem::exists(StoreDatabase::path_in(data_.path())));
}

TEST_F(StoreFromSkills, SkillsCannotReachEachOthersEntries) {
  ok("store.set('secret', 'alpha-only'); store.set('shared-name', 1)", "alpha");
  EXPECT_EQ(ok("return [store.get('secret') === undefined, store.keys(), store.delete('secret')]", "beta"),
            "[true,[],false]");
  EXPECT_EQ(ok("store.set('shared-name', 2); return store.get('shared-name')", "beta"), "2");
  EXPECT_EQ(ok("return [store.get('secret'), store.get('shared-name')]", "alpha"), R"(["alpha-only",1])");
}

TEST_F(StoreFromSkills, QuotaExceededChangesNothing) {
  StorePolicy policy;
  policy.max_keys = 2;
  const RunResult r =
      run("store.set('a', 1); store.set('b', 2);"
          "try { store.set('c', 3); return 'stored' } catch (e) {"
          " return [e.name, e.code, e instanceof Error, /permissions\\.store\\.max_keys/.test(e.message), "
          "store.keys()] }",
          "quota", policy);
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["QuotaExceeded","EQUOTA",true,true,["a","b"]])");
  // Uncaught, it ends the run as an error with the host error's name and code.
  const RunResult uncaught = run("store.set('c', 3)", "quota", policy);
  EXPECT_EQ(uncaught.outcome, Outcome::error);
  ASSERT_TRUE(uncaught.error.has_value());
  EXPECT_EQ(uncaught.error->name, "QuotaExceeded");
  EXPECT_EQ(uncaught.error->code, "EQUOTA");
  EXPECT_EQ(ok("store.set('a', 'overwrite is fine'); return store.keys()", "quota", policy), R"(["a","b"])");
}

TEST_F(StoreFromSkills, BadKeysAreInvalidArguments) {
  EXPECT_EQ(ok("return ['', 'a\\0b', 'notes.txt\\0/../../../etc/passwd'].map(k => {"
               " try { store.set(k, 1); return 'stored' } catch (e) { return e.name + ':' + e.code } })"),
            R"(["InvalidArgument:EINVAL","InvalidArgument:EINVAL","InvalidArgument:EINVAL"])");
  EXPECT_EQ(ok("try { store.set('k'.repeat(513), 1) } catch (e) { return [e.name, store.keys().length] }"),
            R"(["QuotaExceeded",0])");
  EXPECT_EQ(ok("store.set('é'.repeat(256), 1); return store.keys()[0].length"), "256")
      << "512 bytes of UTF-8 fit";
  expect_next_run_normal();
}

TEST_F(StoreFromSkills, HostileValuesEndAsErrorsOrLimits) {
  // A Proxy whose ownKeys trap never returns: JSON.stringify runs it as skill code, under the step limit.
  const RunResult looping = run("store.set('k', new Proxy({}, {ownKeys() { for (;;) {} }}))");
  EXPECT_TRUE(looping.outcome == Outcome::step_limit || looping.outcome == Outcome::timeout)
      << describe(looping);
  expect_next_run_normal();
  // A getter that throws: TypeError with the skill's error as cause; nothing stored.
  EXPECT_EQ(ok("try { store.set('k', {get x() { throw new Error('mine') }}) } catch (e) {"
               " return [e.name, e.cause.message, store.get('k') === undefined] }"),
            R"(["TypeError","mine",true])");
  // Deep nesting that JSON.stringify can still write is stored and read back.
  EXPECT_EQ(ok("let v = 0; for (let i = 0; i < 200; i++) v = [v]; store.set('deep', v);"
               " let d = store.get('deep'), n = 0; while (Array.isArray(d)) { d = d[0]; n++ } return n"),
            "200");
  expect_next_run_normal();
}

TEST_F(StoreFromSkills, DamagedDatabaseIsAnIoErrorAndStaysUntouched) {
  const auto file = StoreDatabase::path_in(data_.path());
  const std::string garbage(8192, '\x5a');
  testing::write_bytes(file, garbage);
  const std::string result = ok("try { store.get('k') } catch (e) { return [e.name, e.code, e.message] }");
  EXPECT_EQ(result.rfind(R"(["IoError","EIO","the store database is damaged)", 0), 0u) << result;
  EXPECT_EQ(result.find(data_.path().string()), std::string::npos) << "no host path in the message";
  EXPECT_EQ(result.find("store.sqlite"), std::string::npos) << result;
  EXPECT_EQ(testing::read_bytes(file), garbage);
}

TEST_F(StoreFromSkills, EnvGivesOnlyGrantedValues) {
  options_.env =
      std::map<std::string, std::string>{{"WEATHER_API_KEY", "k-123"}, {"OTHER_SECRET", "hunter2"}};
  env_names_ = {"WEATHER_API_KEY", "UNSET_BUT_GRANTED"};
  const RunResult r = run(
      "return [env.get('WEATHER_API_KEY'), env.get('OTHER_SECRET') === undefined,"
      " env.get('UNSET_BUT_GRANTED') === undefined, openhuman.env.get('WEATHER_API_KEY'),"
      " (() => { try { env.get('WEATHER_API_KEY\\0x'); return 'read' } catch (e) { return e.name } })()]");
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"(["k-123",true,true,"k-123","InvalidArgument"])");
  // One debug line for the refused name, naming the manifest key; no value anywhere in the logs.
  std::string logs;
  int debug_lines = 0;
  for (const LogEntry& l : r.logs) {
    logs += l.message + "\n";
    if (l.level == LogEntry::Level::debug) ++debug_lines;
  }
  EXPECT_EQ(debug_lines, 1) << logs;
  EXPECT_NE(logs.find("OTHER_SECRET"), std::string::npos) << logs;
  EXPECT_NE(logs.find("permissions.env"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("hunter2"), std::string::npos);
  EXPECT_EQ(logs.find("k-123"), std::string::npos);
}

TEST_F(StoreFromSkills, EnvWithoutHostValuesReadsTheProcessEnvironment) {
  testing::ScopedEnv process_env;
  process_env.set("SKILLBOX_STORE_TEST_GRANTED", "from-process");
  process_env.set("SKILLBOX_STORE_TEST_OTHER", "not-granted");
  env_names_ = {"SKILLBOX_STORE_TEST_GRANTED"};
  EXPECT_EQ(
      ok("return [env.get('SKILLBOX_STORE_TEST_GRANTED'), env.get('SKILLBOX_STORE_TEST_OTHER') === undefined,"
         " env.get('PATH') === undefined]"),
      R"(["from-process",true,true])");
}

}  // namespace
}  // namespace skillbox
