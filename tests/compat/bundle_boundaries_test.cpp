// A misbehaving bundle: every boundary still holds through the OpenHuman API (limits, the allowlist,
// workspace confinement, the database's authorizer and quota, hostile arguments).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using testing::Bundle;
using testing::call;
using testing::describe_run;
using testing::value_of;

class Misbehave : public ::testing::Test {
 protected:
  Misbehave()
      : bundle_("misbehave", testing::grants({server_.origin()}, {{"db", {{"quota_bytes", 1 << 20}}}},
                                             {{"timeout_ms", 1500}})),
        runner_(testing::host(bundle_.data())),
        skill_(bundle_.skill()) {}

  json tool(const std::string& name) {
    const RunResult r = call(runner_, skill_, "tool:" + name, "{}");
    const json v = value_of(r);
    if (!v.is_object()) return nullptr;
    return json::parse(v["content"][0]["text"].get<std::string>());
  }

  testing::HttpTestServer server_;
  Bundle bundle_;
  testing::TestRunner runner_;
  Skill skill_;
};

TEST_F(Misbehave, ALoopingToolEndsAtALimit) {
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = call(runner_, skill_, "tool:spin", "{}");
  EXPECT_TRUE(r.outcome == Outcome::step_limit || r.outcome == Outcome::timeout) << describe_run(r);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The process carries on.
  EXPECT_EQ(call(runner_, skill_, "tools").outcome, Outcome::ok);
}

TEST_F(Misbehave, AHostOutsideTheAllowlistIsRefused) {
  const json v = tool("denied");
  EXPECT_EQ(v["name"], "PermissionDenied") << v;
  EXPECT_EQ(v["code"], "EACCES");
  EXPECT_NE(v["message"].get<std::string>().find("permissions.http.allow"), std::string::npos) << v;
}

TEST_F(Misbehave, DataStaysInTheWorkspace) {
  const json v = tool("escape");
  ASSERT_TRUE(v.is_array());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(v[i]["name"] == "PermissionDenied" || v[i]["name"] == "InvalidArgument") << v[i];
    EXPECT_EQ(v[i].count("ok"), 0u) << v[i];
  }
  EXPECT_EQ(v[3]["name"], "NotFound") << "data.read of a missing file throws";
  EXPECT_FALSE(std::filesystem::exists("/etc/skillbox-owned"));
}

TEST_F(Misbehave, TheDatabaseRefusesAttachPragmasExtensionsAndOtherVirtualTables) {
  const json attach = tool("attach");
  EXPECT_EQ(attach["name"], "PermissionDenied") << attach;
  EXPECT_NE(attach["message"].get<std::string>().find("ATTACH and DETACH are not allowed"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists("/tmp/skillbox-attach.db"));
  const json p = tool("pragmas");
  ASSERT_TRUE(p.is_array());
  EXPECT_EQ(p[0]["name"], "PermissionDenied") << p[0];
  EXPECT_NE(p[0]["message"].get<std::string>().find("PRAGMA journal_mode with a value is not allowed"),
            std::string::npos);
  EXPECT_EQ(p[1]["name"], "PermissionDenied") << p[1];
  EXPECT_EQ(p[2].count("ok"), 1u) << "reading the schema is allowed: " << p[2];
  EXPECT_TRUE(p[3]["name"] == "PermissionDenied" || p[3]["name"] == "InvalidArgument") << p[3];
  EXPECT_NE(p[3]["message"].get<std::string>().find("load_extension"), std::string::npos) << p[3];
  EXPECT_TRUE(p[4]["name"] == "PermissionDenied" || p[4]["name"] == "InvalidArgument") << p[4];
  EXPECT_EQ(p[5]["name"], "InvalidArgument");
  EXPECT_NE(p[5]["message"].get<std::string>().find("one statement per call"), std::string::npos);
}

TEST_F(Misbehave, AHugeInsertHitsTheDatabaseQuota) {
  const json v = tool("huge");
  EXPECT_EQ(v["name"], "QuotaExceeded") << v;
  EXPECT_EQ(v["code"], "EQUOTA");
  EXPECT_NE(v["message"].get<std::string>().find("permissions.db.quota_bytes is 1048576"), std::string::npos);
  EXPECT_LT(v["inserted"].get<int>(), 5);
  EXPECT_LE(std::filesystem::file_size(bundle_.data() / "skills" / "misbehave" / "db.sqlite"),
            (1u << 20) + 8192);
}

TEST_F(Misbehave, AStatementThatNeverEndsEndsAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = call(runner_, skill_, "tool:slow_sql", "{}");
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe_run(r);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500 + 900));
}

TEST_F(Misbehave, AnOpenTransactionIsRolledBackWhenTheInvocationEnds) {
  EXPECT_EQ(tool("open_tx")["n"], 1);
  EXPECT_EQ(tool("count_tx")["n"], 0);
}

TEST_F(Misbehave, HostileArgumentsAreTypeErrorsWithoutRunningTheirCode) {
  const json v = tool("hostile");
  ASSERT_TRUE(v.is_array());
  EXPECT_EQ(v[0]["name"], "TypeError") << v[0];
  EXPECT_EQ(v[1]["name"], "TypeError") << v[1];
  EXPECT_EQ(v[2]["name"], "TypeError") << v[2];
  EXPECT_EQ(v[4]["name"], "TypeError") << v[4];
  for (int i : {0, 1, 2, 4})
    EXPECT_EQ(v[i]["message"].get<std::string>().find("toString ran"), std::string::npos);
  EXPECT_NE(v[5]["message"].get<std::string>().find("cannot call another skill"), std::string::npos);
  EXPECT_EQ(server_.requests(), 0u);
}

TEST_F(Misbehave, AThrownErrorIsTheRunsError) {
  const RunResult r = call(runner_, skill_, "tool:throws", "{}");
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->name, "RangeError");
  EXPECT_EQ(r.error->message, "bad input: 42");
}

TEST(BundleBoundaries, WithoutGrantsEveryCapabilityIsDenied) {
  Bundle b("notes", "");
  testing::TestRunner runner(testing::host(b.data()));
  const RunResult r = call(runner, b.skill(), "tool:fetch_title", R"({"url": "http://127.0.0.1:9/"})");
  EXPECT_EQ(r.outcome, Outcome::error);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->name, "PermissionDenied") << describe_run(r);
  const RunResult env = call(runner, b.skill(), "tool:remember", "{}");
  const json v = value_of(env);
  ASSERT_TRUE(v.is_object());
  const json text = json::parse(v["content"][0]["text"].get<std::string>());
  EXPECT_EQ(text["region"], nullptr) << "env names in manifest.json are not granted";
  EXPECT_NE(text["file"].get<std::string>().find("PermissionDenied"), std::string::npos) << text;
}

}  // namespace
}  // namespace skillbox
