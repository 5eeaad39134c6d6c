// Secrets never enter the sandbox: the bundle sees placeholders; the host puts the real value only
// into header values of requests to the hosts the credential is bound to; everything else is refused
// or keeps the placeholder. No byte of a secret reaches the run's result, logs, events, store,
// workspace, database or any other host.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "skillbox/tenant.h"
#include "state/backends.h"
#include "state/credential_vault.h"
#include "support/http_test_server.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using testing::Bundle;
using testing::call;
using testing::describe_run;
using testing::value_of;

constexpr const char* kToken = "ya29.REAL-ACCESS-TOKEN-9f8e7d";
constexpr const char* kApiToken = "secret_REAL-NOTION-TOKEN-1a2b3c";

std::string everything(const RunResult& r) {
  std::string out = r.value_json;
  if (r.error) out += r.error->message + r.error->stack;
  for (const LogEntry& l : r.logs) out += l.message;
  for (const Event& e : r.events) out += e.data_json;
  return out;
}

json text_of(const RunResult& r) {
  const json v = value_of(r);
  if (!v.is_object()) return nullptr;
  const std::string text = v["content"][0]["text"];
  json parsed = json::parse(text, nullptr, false);
  return parsed.is_discarded() ? json(text) : parsed;
}

class Mailbox : public ::testing::Test {
 protected:
  Mailbox() : bundle_("mailbox", testing::grants({proxy_.origin(), other_.origin()})) {
    OAuthCredential o;
    o.credential_id = "c1";
    o.access_token = kToken;
    o.base_url = proxy_.origin();  // bound to its own prefix: no `hosts` given
    HostOptions host = testing::host(bundle_.data());
    host.credentials["mailbox"] = SkillCredentials{.oauth = o, .auth = std::nullopt};
    runner_ = std::make_unique<testing::TestRunner>(std::move(host));
  }
  testing::HttpTestServer proxy_;
  testing::HttpTestServer other_;
  Bundle bundle_;
  std::unique_ptr<testing::TestRunner> runner_;
};

TEST_F(Mailbox, OAuthFetchCarriesTheRealTokenButTheBundleSeesOnlyAPlaceholder) {
  const RunResult r = call(*runner_, bundle_.skill(), "tool:inbox", "{}");
  const json v = text_of(r);
  ASSERT_TRUE(v.is_object()) << describe_run(r);
  EXPECT_EQ(v["status"], 200);
  // The proxy got the real bearer token, added by the host.
  const auto seen = proxy_.recorded();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/echo");
  std::string authorization;
  for (const auto& [n, val] : seen[0].headers)
    if (n == "Authorization") authorization = val;
  EXPECT_EQ(authorization, std::string("Bearer ") + kToken);
  // The bundle saw a placeholder in its credential and in the echo of its own request.
  const std::string placeholder = v["credential"]["accessToken"];
  EXPECT_EQ(placeholder.rfind("skillbox-secret:mailbox/oauth/accessToken/", 0), 0u) << placeholder;
  EXPECT_EQ(v["credential"]["credentialId"], "c1");
  EXPECT_EQ(v["server_saw"][0], "Bearer " + placeholder) << "a response echoing the secret is stripped of it";
  // start({oauth, auth}) got the same metadata, logged with placeholders only.
  EXPECT_NE(everything(r).find("start with"), std::string::npos);
  EXPECT_EQ(everything(r).find(kToken), std::string::npos) << everything(r);
  EXPECT_EQ(testing::all_file_bytes(bundle_.data()).find(kToken), std::string::npos);
}

// A vault that cannot be read ends the invocation before the bundle starts (state/credential_vault.h):
// it never runs as if it had no credentials.
class BrokenVault final : public state::CredentialVault {
 public:
  Result<std::optional<SkillCredentials>> find(std::string_view) const override {
    return Error{"the vault's database is down"};
  }
};

TEST_F(Mailbox, AVaultThatCannotBeReadEndsTheRunBeforeTheBundleStarts) {
  auto tenant = local_tenant("t", bundle_.data());
  auto state = std::make_shared<state::Backends>(*tenant->state);
  state->credentials = std::make_shared<BrokenVault>();
  tenant->state = state;
  Invocation invocation{.skill = bundle_.skill(), .export_name = "tool:inbox", .input_json = "{}"};
  invocation.tenant = tenant;
  const RunResult r = runner_->run(invocation);
  EXPECT_EQ(r.outcome, Outcome::internal) << describe_run(r);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(
      r.error->message.find("the operator's credentials could not be read: the vault's database is down"),
      std::string::npos)
      << r.error->message;
  EXPECT_TRUE(r.logs.empty()) << "the bundle never ran";
  EXPECT_TRUE(proxy_.recorded().empty());
}

TEST_F(Mailbox, PlaceholdersArePerInvocation) {
  const json a = text_of(call(*runner_, bundle_.skill(), "tool:inbox", "{}"));
  const json b = text_of(call(*runner_, bundle_.skill(), "tool:inbox", "{}"));
  EXPECT_NE(a["credential"]["accessToken"], b["credential"]["accessToken"]);
}

TEST_F(Mailbox, TheTokenCannotBeSentToAnotherHost) {
  const RunResult r =
      call(*runner_, bundle_.skill(), "tool:leak", json({{"url", other_.url("/echo")}}).dump());
  const json v = text_of(r);
  ASSERT_TRUE(v.is_string()) << describe_run(r);
  EXPECT_EQ(v.get<std::string>().rfind("PermissionDenied: ", 0), 0u) << v;
  EXPECT_NE(v.get<std::string>().find("not bound to"), std::string::npos) << v;
  EXPECT_EQ(other_.requests(), 0u);
}

// fetch (bindings/fetch_glue.h under the bundle's fetch) is the same road: the placeholder becomes the
// token only toward the bound host; toward another one the request is refused before it leaves.
constexpr const char* kFetchWithToken = R"JS(
globalThis.__skill = { default: { tools: [{ name: 'send', async execute(a) {
  const token = oauth.getCredential().accessToken;
  try {
    const r = await fetch(a.url, { headers: new Headers({ authorization: 'Bearer ' + token }) });
    return { status: r.status, ok: r.ok, echoed: (await r.json()).headers, token };
  } catch (e) { return { error: e.name, cause: e.cause && e.cause.name, token }; }
} }] } };
)JS";

TEST_F(Mailbox, FetchPutsTheTokenInOnlyTowardTheBoundHost) {
  bundle_.write("index.js", kFetchWithToken);
  const RunResult bound =
      call(*runner_, bundle_.skill(), "tool:send", json({{"url", proxy_.url("/echo")}}).dump());
  const json v = text_of(bound);
  ASSERT_TRUE(v.is_object()) << describe_run(bound);
  EXPECT_EQ(v["status"], 200);
  const auto seen = proxy_.recorded();
  ASSERT_EQ(seen.size(), 1u);
  std::string authorization;
  for (const auto& [n, val] : seen[0].headers)
    if (n == "authorization") authorization = val;
  EXPECT_EQ(authorization, std::string("Bearer ") + kToken);
  EXPECT_EQ(everything(bound).find(kToken), std::string::npos) << "the echo is redacted";

  const RunResult other =
      call(*runner_, bundle_.skill(), "tool:send", json({{"url", other_.url("/echo")}}).dump());
  const json w = text_of(other);
  ASSERT_TRUE(w.is_object()) << describe_run(other);
  EXPECT_EQ(w["error"], "TypeError");
  EXPECT_EQ(w["cause"], "PermissionDenied");
  EXPECT_EQ(other_.requests(), 0u);
}

TEST_F(Mailbox, RevokeForgetsTheCredentialAndIsAnEvent) {
  const RunResult r = call(*runner_, bundle_.skill(), "tool:revoke", "{}");
  const json v = text_of(r);
  ASSERT_TRUE(v.is_object()) << describe_run(r);
  EXPECT_EQ(v["credential"], nullptr);
  EXPECT_NE(v["after"].get<std::string>().find("no OAuth credential"), std::string::npos);
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].type, "oauth.revoke");
  EXPECT_EQ(json::parse(r.events[0].data_json), json({{"credentialId", "c1"}}));
  EXPECT_EQ(proxy_.requests(), 0u);
}

class NotionLite : public ::testing::Test {
 protected:
  NotionLite() : bundle_("notion-lite", testing::grants({api_.origin(), other_.origin()})) {
    AuthCredential a;
    a.mode = "self_hosted";
    a.credentials["api_token"] = kApiToken;
    a.hosts = {api_.origin() + "/"};
    HostOptions host = testing::host(bundle_.data());
    host.credentials["notion-lite"] = SkillCredentials{.oauth = std::nullopt, .auth = a};
    runner_ = std::make_unique<testing::TestRunner>(std::move(host));
  }
  testing::HttpTestServer api_;
  testing::HttpTestServer other_;
  Bundle bundle_;
  std::unique_ptr<testing::TestRunner> runner_;
};

TEST_F(NotionLite, TheHeaderCarriesThePlaceholderAndTheBoundHostGetsTheSecret) {
  const RunResult r = call(*runner_, bundle_.skill(), "tool:search", json({{"base", api_.origin()}}).dump());
  const json echoed = text_of(r);
  ASSERT_TRUE(echoed.is_object()) << describe_run(r);
  const auto seen = api_.recorded();
  ASSERT_EQ(seen.size(), 1u);
  std::string authorization;
  for (const auto& [n, val] : seen[0].headers)
    if (n == "Authorization") authorization = val;
  EXPECT_EQ(authorization, std::string("Bearer ") + kApiToken);
  EXPECT_EQ(r.value_json.find(kApiToken), std::string::npos);
  EXPECT_NE(r.value_json.find("skillbox-secret:notion-lite/auth/api_token/"), std::string::npos);
}

TEST_F(NotionLite, EveryWayOutIsRefusedOrShowsOnlyThePlaceholder) {
  const RunResult r = call(*runner_, bundle_.skill(), "tool:exfiltrate",
                           json({{"base", api_.origin()}, {"other", other_.origin()}}).dump());
  const json v = text_of(r);
  ASSERT_TRUE(v.is_array()) << describe_run(r);
  EXPECT_EQ(v[0], "other host header: PermissionDenied");
  EXPECT_EQ(v[1], "allowed host body: PermissionDenied");
  EXPECT_EQ(v[2], "allowed host url: PermissionDenied");
  EXPECT_EQ(v[3], "other host body: PermissionDenied");
  EXPECT_NE(v[4].get<std::string>().find("seen: skillbox-secret:"), std::string::npos);
  EXPECT_EQ(api_.requests(), 0u);
  EXPECT_EQ(other_.requests(), 0u);
  // The log line, the store, the workspace and the database hold the placeholder, never the secret.
  bool logged = false;
  for (const LogEntry& l : r.logs) logged = logged || l.message.find("the token is skillbox-secret:") == 0;
  EXPECT_TRUE(logged) << describe_run(r);
  EXPECT_EQ(everything(r).find(kApiToken), std::string::npos);
  const std::string files = testing::all_file_bytes(bundle_.data());
  EXPECT_NE(files.find("skillbox-secret:notion-lite/auth/api_token/"), std::string::npos);
  EXPECT_EQ(files.find(kApiToken), std::string::npos);
}

TEST(BundleCredentials, TheFileIsCheckedAndErrorsNeverShowASecret) {
  auto ok =
      parse_credentials(R"({"notion": {"auth": {"mode": "self_hosted", "credentials": {"api_token": "s3cr3t"},
                                   "hosts": ["https://api.notion.com/"]}},
                        "gmail": {"oauth": {"credentialId": "c1", "accessToken": "t0k", "baseUrl": "https://proxy.example/gmail"}}})");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->at("notion").auth->credentials.at("api_token"), "s3cr3t");
  EXPECT_EQ(ok->at("gmail").oauth->base_url, "https://proxy.example/gmail");
  auto bad =
      parse_credentials(R"({"notion": {"auth": {"mode": "self_hosted", "credentials": {"api_token": "s3cr3t"},
                                    "host": ["x"]}}})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("credentials file: notion.auth.host: unknown key"), std::string::npos);
  EXPECT_EQ(bad.error().message.find("s3cr3t"), std::string::npos);
  auto prefix = parse_credentials(
      R"({"x": {"oauth": {"accessToken": "t", "baseUrl": "b", "hosts": ["https://a@b/"]}}})");
  ASSERT_FALSE(prefix);
  EXPECT_NE(prefix.error().message.find("x.oauth.hosts[0]: not a URL prefix"), std::string::npos);
}

}  // namespace
}  // namespace skillbox

namespace skillbox {
namespace {

TEST(BundleOriginMap, AHardCodedOriginIsMappedToALocalServerAfterPolicyIsChecked) {
  testing::HttpTestServer api;
  Bundle b("notion-lite", testing::grants({"https://api.notion.com"}));
  AuthCredential a;
  a.mode = "self_hosted";
  a.credentials["api_token"] = kApiToken;
  a.hosts = {"https://api.notion.com/"};
  HostOptions host = testing::host(b.data());
  host.credentials["notion-lite"] = SkillCredentials{.oauth = std::nullopt, .auth = a};
  host.origin_map = {{"https://api.notion.com", api.origin()}};
  testing::TestRunner runner(std::move(host));
  const RunResult r = call(runner, b.skill(), "tool:me", "{}");
  const json v = text_of(r);
  ASSERT_TRUE(v.is_object()) << describe_run(r);
  EXPECT_EQ(v["status"], 200);
  EXPECT_EQ(v["body"]["target"], "/echo?user=me");
  ASSERT_EQ(api.recorded().size(), 1u);
  bool real = false;
  const auto seen = api.recorded();
  for (const auto& [n, val] : seen[0].headers) real = real || val == std::string("Bearer ") + kApiToken;
  EXPECT_TRUE(real) << "the credential is bound to the original origin";
  EXPECT_EQ(r.value_json.find(kApiToken), std::string::npos);

  // The mapped target itself is not reachable unless the skill's allowlist names it.
  const RunResult direct = call(runner, b.skill(), "tool:search", json({{"base", api.origin()}}).dump());
  EXPECT_EQ(direct.outcome, Outcome::error);
  ASSERT_TRUE(direct.error);
  EXPECT_EQ(direct.error->name, "PermissionDenied") << describe_run(direct);
  EXPECT_EQ(api.requests(), 1u);
}

TEST(BundleOriginMap, MappingsAreOriginsOnly) {
  EXPECT_TRUE(parse_origin_mapping("https://api.notion.com=http://127.0.0.1:8080"));
  auto bad = parse_origin_mapping("https://api.notion.com/v1=http://127.0.0.1:8080");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("FROM must be an origin scheme://host[:port] without a path"),
            std::string::npos);
  EXPECT_FALSE(parse_origin_mapping("https://api.notion.com"));
  EXPECT_FALSE(parse_origin_mapping("https://*.notion.com=http://127.0.0.1:1"));
}

}  // namespace
}  // namespace skillbox
