// The operator's origin map (HostOptions::origin_map) on every hop: a mapped origin's real address is
// never contacted, not even when the mapped target redirects back to it; and the loopback-target
// exemption (HostOptions::trust_loopback_origin_map_targets) covers exactly the mapped targets.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "skill_fixture.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

using nlohmann::json;
using testing::HttpTestServer;
using testing::TempSkill;
using testing::TestRunner;

const char* const kFetch = R"(
  export default async ({ url }) => {
    try {
      const r = await openhuman.http.get(url);
      return { status: r.status, body: r.body };
    } catch (e) {
      return { error: e.name, message: e.message };
    }
  }
)";

TEST(OriginMap, ARedirectBackToTheMappedOriginIsRefusedAndItsRealAddressNeverContacted) {
  HttpTestServer real;  // stands for the real origin the skill names
  HttpTestServer mock;  // the operator's stand-in for it
  TempSkill skill({{"index.js", kFetch}});
  skill.manifest().permissions.http.allow_private_addresses = true;
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back(real.origin() + "/"));
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back(mock.origin() + "/"));
  HostOptions host;
  host.origin_map = {{real.origin(), mock.origin()}};
  TestRunner runner(std::move(host));

  // The first hop goes to the mock; it redirects to the real origin, which must not be reached.
  const std::string url = real.url("/redirect?to=" + real.url("/plain"));
  const RunResult r = testing::run(runner, skill, json({{"url", url}}).dump());
  ASSERT_EQ(r.outcome, Outcome::ok) << testing::describe(r);
  const json v = json::parse(r.value_json);
  EXPECT_EQ(v["error"], "PermissionDenied") << v;
  EXPECT_NE(v["message"].get<std::string>().find("is an origin the operator mapped"), std::string::npos) << v;
  EXPECT_EQ(real.connections(), 0u) << "the mapped origin's real address was contacted";
  EXPECT_GE(mock.connections(), 1u);

  // A redirect within the mock is followed as usual.
  const RunResult inside =
      testing::run(runner, skill, json({{"url", real.url("/redirect?to=/plain")}}).dump());
  const json w = json::parse(inside.value_json);
  EXPECT_EQ(w["status"], 200) << w;
  EXPECT_EQ(real.connections(), 0u);
}

TEST(OriginMap, TrustedLoopbackTargetsAreExemptButNothingElseIs) {
  HttpTestServer mock;
  HttpTestServer other;  // on loopback too, allowed by the manifest, but no map target
  TempSkill skill({{"index.js", kFetch}});
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back("http://localhost:8080/"));
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back(other.origin() + "/"));
  HostOptions host;
  host.origin_map = {{"http://localhost:8080", mock.origin()}};
  host.trust_loopback_origin_map_targets = true;
  TestRunner runner(std::move(host));

  const RunResult mapped = testing::run(runner, skill, json({{"url", "http://localhost:8080/plain"}}).dump());
  EXPECT_EQ(json::parse(mapped.value_json)["status"], 200) << mapped.value_json;

  const RunResult direct = testing::run(runner, skill, json({{"url", other.url("/plain")}}).dump());
  EXPECT_EQ(json::parse(direct.value_json)["error"], "PermissionDenied") << direct.value_json;
  EXPECT_EQ(other.connections(), 0u) << "only the mapped target's endpoint is exempt";
}

// The origin map is the operator's business: the skill, and whoever reads its errors, sees the URL it
// asked for (the response's url, every error message), never the stand-in's address.
TEST(OriginMap, TheSkillSeesTheUrlItAskedForNeverTheStandIns) {
  HttpTestServer mock;
  const char* const code = R"(
    export default async ({ url }) => {
      try {
        const r = await openhuman.http.get(url);
        return { status: r.status, url: r.url };
      } catch (e) {
        return { error: e.name, message: e.message };
      }
    }
  )";
  TempSkill skill({{"index.js", code}});
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back("https://api.example.com/"));
  // A loopback port nothing listens on, for a stand-in that is down.
  std::string down;
  {
    HttpTestServer gone;
    down = gone.origin();
  }
  ASSERT_FALSE(skill.manifest().permissions.http.allow.push_back("https://down.example.com/"));
  HostOptions host;
  host.origin_map = {{"https://api.example.com", mock.origin()}, {"https://down.example.com", down}};
  host.trust_loopback_origin_map_targets = true;
  TestRunner runner(std::move(host));

  const RunResult redirected = testing::run(
      runner, skill, json({{"url", "https://api.example.com/redirect?to=/plain%3Fa%3D1"}}).dump());
  const json v = json::parse(redirected.value_json);
  EXPECT_EQ(v["status"], 200) << v;
  EXPECT_EQ(v["url"], "https://api.example.com/plain?a=1")
      << "the final URL, after a redirect within the mock";

  const RunResult failed =
      testing::run(runner, skill, json({{"url", "https://down.example.com/v1/x"}}).dump());
  const json w = json::parse(failed.value_json);
  EXPECT_EQ(w["error"], "NetworkError") << w;
  EXPECT_EQ(w["message"],
            "http: request to https://down.example.com/v1/x failed: could not connect to "
            "down.example.com:443")
      << w;
  const std::string port = down.substr(down.rfind(':'));
  EXPECT_EQ(w["message"].get<std::string>().find(port), std::string::npos) << w;
}

}  // namespace
}  // namespace skillbox
