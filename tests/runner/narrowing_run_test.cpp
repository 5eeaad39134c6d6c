// Per-run narrowing through a whole run (Invocation::narrowing; the CLI's --deny-net, --allow-http,
// --fs-mode, --deny-env), in both isolation modes: what the narrowing takes away is refused, with a
// message that says the run was narrowed, and nothing of it reaches the disk or the network.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

using json = nlohmann::json;

class NarrowedRun : public ::testing::Test {
 protected:
  RunResult run_narrowed(TempSkill& skill, const PolicyNarrowing& narrowing) {
    HostOptions options;
    options.data_dir = data_dir_;
    options.env = std::map<std::string, std::string>{{"API_KEY", "secret-value"}};
    TestRunner runner(options);
    Invocation invocation{.skill = skill.skill(), .narrowing = narrowing};
    return runner.run(invocation);
  }

  std::filesystem::path workspace(const TempSkill& skill) const {
    return data_dir_ / "skills" / skill.skill().manifest().id / "workspace";
  }

  TempDir tmp_;
  const std::filesystem::path& data_dir_ = tmp_.path();
};

TEST_F(NarrowedRun, FsModeReadRefusesWritesOfAReadWriteSkillAndWritesNothing) {
  TempSkill skill({{"index.js",
                    "export default async () => {\n"
                    "  const out = {};\n"
                    "  try { await openhuman.fs.writeFile('a.txt', 'x'); out.write = 'written'; }\n"
                    "  catch (e) { out.write = e.name + ': ' + e.message; }\n"
                    "  out.exists = await openhuman.fs.exists('a.txt');\n"
                    "  return out;\n"
                    "}"}});
  skill.manifest().permissions.fs.mode = FsMode::readwrite;
  PolicyNarrowing n;
  n.fs_mode = FsMode::read;
  const RunResult r = run_narrowed(skill, n);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  const json v = json::parse(r.value_json);
  EXPECT_EQ(v["write"],
            "PermissionDenied: permissions.fs.mode is \"read\"; writeFile needs \"write\" or \"readwrite\" "
            "(the mode "
            "was narrowed for this run: --fs-mode, or Invocation::narrowing)");
  EXPECT_EQ(v["exists"], false);
  EXPECT_FALSE(std::filesystem::exists(workspace(skill) / "a.txt"));

  // Asking for more than the manifest grants gives no more: a read-only skill stays read-only.
  TempSkill reader({{"index.js", "export default () => openhuman.fs.writeFile('b.txt', 'x')"}});
  reader.manifest().permissions.fs.mode = FsMode::read;
  n.fs_mode = FsMode::readwrite;
  const RunResult widened = run_narrowed(reader, n);
  ASSERT_EQ(widened.outcome, Outcome::error) << describe(widened);
  EXPECT_EQ(widened.error->code, "EACCES");
  EXPECT_FALSE(std::filesystem::exists(workspace(reader) / "b.txt"));
}

TEST_F(NarrowedRun, DenyEnvHidesEveryGrantedValue) {
  TempSkill skill(
      {{"index.js", "export default () => [env.get('API_KEY') === undefined, typeof env.get('API_KEY')]"}});
  skill.manifest().permissions.env = {"API_KEY"};
  const RunResult granted = run_narrowed(skill, PolicyNarrowing{});
  ASSERT_EQ(granted.outcome, Outcome::ok) << describe(granted);
  EXPECT_EQ(granted.value_json, "[false,\"string\"]");  // the test can fail: the value is there unnarrowed
  PolicyNarrowing n;
  n.deny_env = true;
  const RunResult denied = run_narrowed(skill, n);
  ASSERT_EQ(denied.outcome, Outcome::ok) << describe(denied);
  EXPECT_EQ(denied.value_json, "[true,\"undefined\"]");
}

TEST_F(NarrowedRun, AllowHttpNarrowsRequestsAndRedirectHopsAndDenyNetRefusesAll) {
  HttpTestServer server;
  const std::string base = server.origin();
  TempSkill skill(
      {{"index.js",
        "const BASE = " + json(base).dump() +
            ";\n"
            "const get = (p) => openhuman.http.get(BASE + p).then((r) => 'ok ' + r.status,\n"
            "                                                  (e) => e.name + ': ' + e.message);\n"
            "export default async () => [await get('/plain'), await get('/json'),\n"
            "  await get('/redirect?to=' + encodeURIComponent(BASE + '/json'))];\n"}});
  skill.manifest().permissions.http.allow = {base + "/"};
  skill.manifest().permissions.http.allow_private_addresses = true;  // the server is on loopback

  PolicyNarrowing n;
  n.allow_http = {base + "/plain", base + "/redirect"};
  const RunResult r = run_narrowed(skill, n);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  const json v = json::parse(r.value_json);
  EXPECT_EQ(v[0], "ok 200");
  EXPECT_EQ(v[1], "PermissionDenied: http: " + base +
                      "/json is not in permissions.http.allow as narrowed for this run by "
                      "--allow-http");
  EXPECT_NE(v[2].get<std::string>().find("redirect from " + base + "/redirect"), std::string::npos) << v[2];
  EXPECT_NE(v[2].get<std::string>().find("as narrowed for this run"), std::string::npos) << v[2];
  for (const RecordedRequest& seen : server.recorded()) EXPECT_NE(seen.target, "/json");
  EXPECT_EQ(server.requests(), 2u);  // /plain and /redirect, never /json

  // Without the narrowing the same skill reaches /json: the refusals above are the narrowing's.
  const RunResult open = run_narrowed(skill, PolicyNarrowing{});
  ASSERT_EQ(open.outcome, Outcome::ok) << describe(open);
  EXPECT_EQ(json::parse(open.value_json)[1], "ok 200");

  const uint64_t before = server.connections();
  PolicyNarrowing deny;
  deny.deny_net = true;
  const RunResult none = run_narrowed(skill, deny);
  ASSERT_EQ(none.outcome, Outcome::ok) << describe(none);
  for (const auto& answer : json::parse(none.value_json))
    EXPECT_EQ(answer.get<std::string>().rfind(
                  "PermissionDenied: http: no network access is granted for this run", 0),
              0u)
        << answer;
  EXPECT_EQ(server.connections(), before);
}

TEST_F(NarrowedRun, AnInvalidAllowHttpEntryMakesTheRunInvalidBeforeItStarts) {
  TempSkill skill({{"index.js", "export default () => { throw new Error('must not run'); }"}});
  PolicyNarrowing n;
  n.allow_http = {"file:///etc/passwd"};
  const RunResult r = run_narrowed(skill, n);
  ASSERT_EQ(r.outcome, Outcome::invalid) << describe(r);
  EXPECT_EQ(r.error->name, "InvalidInput");
  EXPECT_NE(r.error->message.find("allow-http entry \"file:///etc/passwd\""), std::string::npos)
      << r.error->message;
}

}  // namespace
}  // namespace skillbox::testing
