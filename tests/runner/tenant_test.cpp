// The tenant carried by each invocation (skillbox/tenant.h): one runner serves many tenants at once,
// each with its own state, environment values and ceilings, in both isolation modes; the default tenant
// is the runner's HostOptions, read once; an audit sink gets one record per invocation.
#include "skillbox/tenant.h"

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "state/audit_sink.h"
#include "state/backends.h"
#include "support/scoped_env.h"

namespace skillbox {
namespace {

using testing::describe;
using testing::TempDir;
using testing::TempSkill;

HostOptions host_options(const std::filesystem::path& data_dir) {
  HostOptions options;
  options.data_dir = data_dir;
  return options;
}

std::unique_ptr<TempSkill> make_skill(const std::string& body) {
  auto skill = std::make_unique<TempSkill>(std::initializer_list<std::pair<const std::string, std::string>>{
      {"index.js", "export default async function (input) {\n" + body + "\n}"}});
  skill->manifest().id = "notes";
  skill->manifest().permissions.fs.mode = FsMode::readwrite;
  skill->manifest().permissions.env = {"API_KEY"};
  return skill;
}

RunResult run_as(Runner& runner, const TempSkill& skill, std::shared_ptr<const TenantContext> tenant,
                 const std::string& input = "null") {
  Invocation invocation{.skill = skill.skill(), .input_json = input};
  invocation.tenant = std::move(tenant);
  return runner.run(invocation);
}

std::vector<std::string> lines_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(Tenants, OneRunnerKeepsTheStateOfTenantsApartWhileTheyRunAtOnce) {
  TempDir runner_data, data_a, data_b;
  testing::TestRunner runner(host_options(runner_data.path()));
  auto skill = make_skill(
      "const before = store.get('who');"
      "store.set('who', input);"
      "await openhuman.fs.writeFile('who.txt', input);"
      "return {before: before ?? null, file: await openhuman.fs.readFile('who.txt', {encoding: 'utf8'})};");
  const auto a = local_tenant("a", data_a.path());
  const auto b = local_tenant("b", data_b.path());
  std::vector<RunResult> results(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = run_as(runner, *skill, i % 2 == 0 ? a : b, i % 2 == 0 ? R"("a")" : R"("b")");
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(results[i].outcome, Outcome::ok) << describe(results[i]);
    const std::string me = i % 2 == 0 ? "a" : "b";
    // Whatever ran before it, a tenant's run saw only its own tenant's value and file.
    EXPECT_TRUE(results[i].value_json == R"({"before":null,"file":")" + me + "\"}" ||
                results[i].value_json == R"({"before":")" + me + R"(","file":")" + me + "\"}")
        << results[i].value_json;
  }
  EXPECT_EQ(testing::read_bytes(data_a.path() / "skills" / "notes" / "workspace" / "who.txt"), "a");
  EXPECT_EQ(testing::read_bytes(data_b.path() / "skills" / "notes" / "workspace" / "who.txt"), "b");
  EXPECT_FALSE(std::filesystem::exists(runner_data.path() / "skills")) << "the default tenant was not used";
  EXPECT_FALSE(std::filesystem::exists(runner_data.path() / "store.sqlite"));
}

TEST(Tenants, EnvValuesComeFromTheTenantOnlyNeverFromTheProcess) {
  skillbox::testing::ScopedEnv process_env;
  process_env.set("API_KEY", "from-the-process");
  TempDir data;
  testing::TestRunner runner(host_options(data.path()));
  auto skill = make_skill("return env.get('API_KEY') ?? 'undefined';");
  auto with_key = local_tenant("with", data.path());
  with_key->env = {{"API_KEY", "tenant-value"}, {"OTHER", "never-granted"}};
  const auto without_key = local_tenant("without", data.path());
  const RunResult r1 = run_as(runner, *skill, with_key);
  const RunResult r2 = run_as(runner, *skill, without_key);
  ASSERT_EQ(r1.outcome, Outcome::ok) << describe(r1);
  ASSERT_EQ(r2.outcome, Outcome::ok) << describe(r2);
  EXPECT_EQ(r1.value_json, R"("tenant-value")");
  EXPECT_EQ(r2.value_json, R"("undefined")");
}

TEST(Tenants, TheDefaultTenantReadsTheProcessEnvironmentOnceWhenTheRunnerIsMade) {
  skillbox::testing::ScopedEnv process_env;
  process_env.set("API_KEY", "before");
  TempDir data;
  testing::TestRunner runner(host_options(data.path()));
  process_env.set("API_KEY", "after");
  auto skill = make_skill("return env.get('API_KEY') ?? 'undefined';");
  const RunResult r = testing::run(runner, *skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("before")");
}

TEST(Tenants, CeilingsLowerTheLimitsOfEveryInvocationOfTheTenant) {
  TempDir data;
  testing::TestRunner runner(host_options(data.path()));
  auto skill = make_skill("let n = 0; for (let i = 0; i < 200000; ++i) n += i; return n;");
  auto tight = local_tenant("tight", data.path());
  tight->ceilings.steps = 5000;
  const RunResult limited = run_as(runner, *skill, tight);
  EXPECT_EQ(limited.outcome, Outcome::step_limit) << describe(limited);
  const RunResult free = run_as(runner, *skill, local_tenant("free", data.path()));
  EXPECT_EQ(free.outcome, Outcome::ok) << describe(free);
}

TEST(Tenants, ATenantWithoutStateIsRefusedBeforeAnythingRuns) {
  TempDir data;
  testing::TestRunner runner(host_options(data.path()));
  auto skill = make_skill("store.set('k', 1); return 1;");
  auto stateless = std::make_shared<TenantContext>();
  stateless->id = "nobody";
  const RunResult r = run_as(runner, *skill, stateless);
  EXPECT_EQ(r.outcome, Outcome::internal) << describe(r);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("tenant \"nobody\" has no state backends"), std::string::npos)
      << describe(r);
}

TEST(Tenants, TheAuditSinkGetsOneRecordPerInvocationWithoutItsDataOrSecrets) {
  TempDir data;
  testing::TestRunner runner(host_options(data.path()));
  auto tenant = local_tenant("acme", data.path());
  auto backends = std::make_shared<state::Backends>(*tenant->state);
  backends->audit = state::make_jsonl_audit_sink(data.path() / "audit" / "audit.jsonl", /*sync=*/true);
  tenant->state = backends;
  tenant->env = {{"API_KEY", "s3cret-value"}};
  auto ok = make_skill("return {key: env.get('API_KEY'), input};");
  auto failing = make_skill("throw new TypeError('boom');");
  auto looping = make_skill("for (;;) {}");
  failing->manifest().id = "failing";  // one folder per id (docs/manifest.md "Identity")
  looping->manifest().id = "looping";
  looping->manifest().limits.steps = 10000;
  ASSERT_EQ(run_as(runner, *ok, tenant, R"("private input")").outcome, Outcome::ok);
  ASSERT_EQ(run_as(runner, *failing, tenant).outcome, Outcome::error);
  ASSERT_EQ(run_as(runner, *looping, tenant).outcome, Outcome::step_limit);
  const auto lines = lines_of(data.path() / "audit" / "audit.jsonl");
  ASSERT_EQ(lines.size(), 3U);
  EXPECT_NE(lines[0].find(R"("tenant":"acme","skill":"notes","export":"","outcome":"ok","error":null)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("outcome":"error","error":"TypeError")"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(R"("skill":"failing")"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(R"("skill":"looping","export":"","outcome":"step_limit")"), std::string::npos)
      << lines[2];
  for (const std::string& line : lines) {
    EXPECT_EQ(line.find("s3cret-value"), std::string::npos) << "no secret in the audit log";
    EXPECT_EQ(line.find("private input"), std::string::npos) << "no input in the audit log";
    EXPECT_EQ(line.rfind(R"({"time":")", 0), 0U) << line;
  }
}

}  // namespace
}  // namespace skillbox
