// The server's parsers in-process: the TOML config (every problem with its key path; a tenant's env
// values, credentials, origin map and quotas), listener addresses, API key hashes, and the body of a run
// request (its narrowing too).
#include "server/config.h"

#include <gtest/gtest.h>

#include <string>

#include "server/api_key.h"
#include "server/run_request.h"

namespace skillbox::server {
namespace {

const std::string kHash = key_hash_hex(hash_api_key("a-key-for-the-tests"));

std::string tenant(const std::string& name, const std::string& extra = "") {
  return "[tenants." + name + "]\nkey_sha256 = [\"" + kHash + "\"]\nskills = \"skills-" + name +
         "\"\ndata_dir = \"data-" + name + "\"\n" + extra;
}

Result<ServerConfig> parse(const std::string& text) {
  return parse_config(text, "serve.toml", "/srv/conf");
}

std::string problems(const std::string& text) {
  Result<ServerConfig> c = parse(text);
  return c ? "" : c.error().message;
}

TEST(ServerConfigParse, ReadsListenersTenantsCeilingsAndBounds) {
  Result<ServerConfig> c = parse(
      "listen = [\"127.0.0.1:8080\", \"[::1]:0\", \"unix:/run/skillbox.sock\"]\nisolation = \"inprocess\"\n"
      "run_threads = 8\nqueue_limit = 5\nmax_body_bytes = 2048\nidle_timeout_ms = 1000\n" +
      tenant("acme",
             "max_concurrent_runs = 2\nmax_queued_runs = 0\nweight = 3\n[tenants.acme.ceilings]\nmemory_mb = "
             "64\ntimeout_ms = 900\nsteps = 7\n"));
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->listeners.size(), 3u);
  EXPECT_EQ(c->listeners[0].address, "127.0.0.1");
  EXPECT_EQ(c->listeners[0].port, 8080);
  EXPECT_EQ(c->listeners[1].address, "::1");
  EXPECT_EQ(c->listeners[2].kind, Listener::Kind::unix_socket);
  EXPECT_EQ(c->listeners[2].path, "/run/skillbox.sock");
  EXPECT_EQ(c->isolation, "inprocess");
  EXPECT_EQ(c->run_threads, 8u);
  EXPECT_EQ(c->queue_limit, 5u);
  EXPECT_EQ(c->max_body_bytes, 2048u);
  EXPECT_EQ(c->idle_timeout_ms, 1000u);
  ASSERT_EQ(c->tenants.size(), 1u);
  const TenantConfig& t = c->tenants[0];
  EXPECT_EQ(t.id, "acme");
  EXPECT_EQ(t.skills_dir, "/srv/conf/skills-acme");  // relative to the config's folder
  EXPECT_EQ(t.data_dir, "/srv/conf/data-acme");
  EXPECT_EQ(t.max_concurrent_runs, 2u);
  EXPECT_EQ(t.max_queued_runs, 0u);
  EXPECT_EQ(t.weight, 3u);
  EXPECT_TRUE(c->metrics_key_hashes.empty());  // /metrics is off unless named
  EXPECT_EQ(t.ceilings.memory_bytes, 64u << 20);
  EXPECT_EQ(t.ceilings.timeout_ms, 900u);
  EXPECT_EQ(t.ceilings.steps, 7u);
  ASSERT_EQ(t.key_hashes.size(), 1u);
  EXPECT_TRUE(key_hashes_equal(t.key_hashes[0], hash_api_key("a-key-for-the-tests")));
}

TEST(ServerConfigParse, EveryProblemNamesItsKeyPath) {
  const std::string p = problems(
      "listen = [\"localhost:8080\", 5]\nrun_thread = 2\nqueue_limit = -1\nmetrics_key_sha256 = \"abc\"\n" +
      tenant("a",
             "max_concurrent_runs = 0\nmax_queued_runs = -2\nweight = 0\nkey = 1\n[tenants.a.ceilings]\n"
             "memory_mb = \"lots\"\nstack_kb = 1\n") +
      "[tenants.b]\nkey_sha256 = [\"abc\"]\n");
  for (const char* expected :
       {"serve.toml: listen[0]: expected IP:PORT (an IP address, never a name",
        "serve.toml: listen[1]: expected a string", "serve.toml: run_thread: unknown key",
        "serve.toml: queue_limit: expected an integer from 0 to 100000, got -1",
        "serve.toml: metrics_key_sha256: expected an array of SHA-256 hashes",
        "tenants.a.max_concurrent_runs: expected an integer from 1 to 10000, got 0",
        "tenants.a.max_queued_runs: expected an integer from 0 to 100000, got -2",
        "tenants.a.weight: expected an integer from 1 to 1000, got 0", "tenants.a.key: unknown key",
        "tenants.a.ceilings.memory_mb: expected an integer from 1 to 4096, got the string \"lots\"",
        "tenants.a.ceilings.stack_kb: unknown key", "tenants.b.key_sha256[0]: expected a SHA-256 hash",
        "tenants.b: missing skills", "tenants.b: missing data_dir"}) {
    EXPECT_NE(p.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << p;
  }
}

TEST(ServerConfigParse, ReadsATenantsEnvCredentialsOriginMapAndQuotas) {
  Result<ServerConfig> c = parse("listen = [\"127.0.0.1:0\"]\n" +
                                 tenant("acme",
                                        "runs_per_minute = 60\ncpu_seconds_per_minute = 30\n"
                                        "[tenants.acme.env]\nWEATHER_API_KEY = \"k-123\"\n"
                                        "[tenants.acme.origin_map]\n"
                                        "\"https://api.notion.com\" = \"http://127.0.0.1:8080\"\n"
                                        "[tenants.acme.credentials.notion.auth]\nmode = \"self_hosted\"\n"
                                        "credentials = {api_token = \"s3cr3t\"}\n"
                                        "hosts = [\"https://api.notion.com/\"]\n"));
  ASSERT_TRUE(c) << c.error().message;
  const TenantConfig& t = c->tenants[0];
  EXPECT_EQ(t.quota.runs_per_minute, 60u);
  EXPECT_EQ(t.quota.cpu_seconds_per_minute, 30u);
  EXPECT_EQ(t.env, (std::map<std::string, std::string>{{"WEATHER_API_KEY", "k-123"}}));
  ASSERT_EQ(t.origin_map.size(), 1u);
  EXPECT_EQ(t.origin_map[0].first, "https://api.notion.com");
  EXPECT_EQ(t.origin_map[0].second, "http://127.0.0.1:8080");
  ASSERT_EQ(t.credentials.count("notion"), 1u);
  ASSERT_TRUE(t.credentials.at("notion").auth.has_value());
  EXPECT_EQ(t.credentials.at("notion").auth->credentials.at("api_token"), "s3cr3t");
  EXPECT_EQ(t.credentials.at("notion").auth->hosts, std::vector<std::string>{"https://api.notion.com/"});
}

TEST(ServerConfigParse, ATenantsSecretsAreCheckedByKeyPathAndNeverQuoted) {
  const std::string p = problems(
      "listen = [\"127.0.0.1:0\"]\n" +
      tenant("a",
             "runs_per_minute = 0\ncpu_seconds_per_minute = \"lots\"\n"
             "[tenants.a.env]\n\"9BAD\" = \"v\"\nNUMBER = 5\n"
             "[tenants.a.origin_map]\n\"https://api.notion.com/v1\" = \"http://127.0.0.1:8080\"\n"
             "[tenants.a.credentials.notion.oauth]\naccessToken = \"top-secret-value\"\nhots = []\n"));
  for (const char* expected : {"tenants.a.runs_per_minute: expected an integer from 1 to 1000000, got 0",
                               "tenants.a.cpu_seconds_per_minute: expected an integer from 1 to 1000000",
                               "tenants.a.env.9BAD: not an environment variable name",
                               "tenants.a.env.NUMBER: expected a string value",
                               "tenants.a.origin_map.\"https://api.notion.com/v1\": FROM must be an origin",
                               "tenants.a.credentials.notion.oauth.hots: unknown key",
                               "tenants.a.credentials.notion.oauth.baseUrl: missing"}) {
    EXPECT_NE(p.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << p;
  }
  EXPECT_EQ(p.find("top-secret-value"), std::string::npos) << p;
}

TEST(ServerConfigParse, ReadsTheConnectionBoundsAndTheAuditSink) {
  Result<ServerConfig> c = parse(
      "listen = [\"127.0.0.1:0\"]\nheader_timeout_ms = 700\nbody_timeout_ms = 800\n"
      "max_connections_per_address = 9\naudit = \"logs/audit.jsonl\"\n" +
      tenant("acme"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->header_timeout_ms, 700u);
  EXPECT_EQ(c->body_timeout_ms, 800u);
  EXPECT_EQ(c->max_connections_per_address, 9u);
  EXPECT_EQ(c->audit, "/srv/conf/logs/audit.jsonl");  // relative to the config's folder
  Result<ServerConfig> defaults = parse("listen = [\"127.0.0.1:0\"]\naudit = \"stdout\"\n" + tenant("acme"));
  ASSERT_TRUE(defaults) << defaults.error().message;
  EXPECT_EQ(defaults->audit, "stdout");
  EXPECT_EQ(defaults->header_timeout_ms, 10'000u);
  EXPECT_EQ(defaults->body_timeout_ms, 30'000u);
  EXPECT_EQ(defaults->max_connections_per_address, 64u);
  const std::string p = problems(
      "listen = [\"127.0.0.1:0\"]\nheader_timeout_ms = 0\n"
      "max_connections_per_address = \"many\"\naudit = \"\"\n" +
      tenant("acme"));
  for (const char* expected : {"serve.toml: header_timeout_ms: expected an integer from 1 to 3600000, got 0",
                               "serve.toml: max_connections_per_address: expected an integer from 1 to "
                               "1000000, got the string \"many\"",
                               "serve.toml: audit: expected \"stdout\" or the path of the audit file"}) {
    EXPECT_NE(p.find(expected), std::string::npos) << "missing: " << expected << "\nin:\n" << p;
  }
}

TEST(ServerConfigParse, ATomlSyntaxErrorNamesTheLine) {
  EXPECT_NE(problems("listen = [\"127.0.0.1:1\"]\n[tenants.a\n").find("serve.toml: line 2"),
            std::string::npos);
}

TEST(ServerConfigParse, TenantsMustNotShareFoldersOrKeys) {
  const std::string listen = "listen = [\"127.0.0.1:0\"]\n";
  EXPECT_NE(problems(listen + tenant("a") + "[tenants.b]\nkey_sha256 = [\"" +
                     key_hash_hex(hash_api_key("other-key")) +
                     "\"]\nskills = \"x\"\ndata_dir = \"data-a/nested\"\n")
                .find("tenants.b.data_dir: overlaps tenants.a.data_dir"),
            std::string::npos);
  EXPECT_NE(problems(listen + tenant("a") + "[tenants.b]\nkey_sha256 = [\"" +
                     key_hash_hex(hash_api_key("other-key")) +
                     "\"]\nskills = \"data-a/skills\"\ndata_dir = \"data-b\"\n")
                .find("tenants.b.skills: inside tenants.a.data_dir"),
            std::string::npos);
  EXPECT_NE(problems(listen + tenant("a") + tenant("b")).find("tenants.b.key_sha256: a key of tenants.a too"),
            std::string::npos);
  EXPECT_NE(problems(listen).find("tenants: no tenant"), std::string::npos);
  EXPECT_NE(problems(listen + "metrics_key_sha256 = [\"" + kHash + "\"]\n" + tenant("a"))
                .find("tenants.a.key_sha256: also in metrics_key_sha256"),
            std::string::npos);
  EXPECT_NE(problems(tenant("a")).find("listen: no address"), std::string::npos);
  EXPECT_NE(problems("listen = [\"127.0.0.1:0\"]\n[tenants.\"Bad/Name\"]\nkey_sha256 = [\"" + kHash +
                     "\"]\nskills = \"s\"\ndata_dir = \"d\"\n")
                .find("tenants.Bad/Name: a tenant name must be"),
            std::string::npos);
}

TEST(ServerConfigParse, ReadsTheMcpTableAndUnauthenticatedListeners) {
  Result<ServerConfig> c = parse(
      "listen = [\"127.0.0.1:8080\", {address = \"[::1]:8081\", auth = \"none\", tenant = \"conf\"}]\n"
      "[mcp]\nallowed_origins = [\"https://app.example.com\", \"http://localhost:*\"]\n"
      "max_sessions_per_tenant = 3\nsession_idle_timeout_ms = 60000\ntool_names = \"bare\"\n" +
      tenant("acme") + "[tenants.conf]\nskills = \"s\"\ndata_dir = \"d\"\n");
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->listeners.size(), 2u);
  EXPECT_FALSE(c->listeners[0].auth_none);
  EXPECT_TRUE(c->listeners[1].auth_none);
  EXPECT_EQ(c->listeners[1].tenant, "conf");
  EXPECT_EQ(c->mcp.allowed_origins,
            (std::vector<std::string>{"https://app.example.com", "http://localhost:*"}));
  EXPECT_EQ(c->mcp.max_sessions_per_tenant, 3u);
  EXPECT_EQ(c->mcp.session_idle_timeout_ms, 60000u);
  EXPECT_TRUE(c->mcp.bare_tool_names);
  // Defaults: the loopback origins, prefixed tool names.
  Result<ServerConfig> d = parse("listen = [\"127.0.0.1:8080\"]\n" + tenant("acme"));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->mcp.allowed_origins.size(), 3u);
  EXPECT_FALSE(d->mcp.bare_tool_names);

  const std::string p = problems(
      "listen = [{address = \"0.0.0.0:8081\", auth = \"none\", tenant = \"acme\"}, "
      "{address = \"127.0.0.1:1\", auth = \"none\"}, {address = \"127.0.0.1:2\", auth = \"open\"}, "
      "{adress = \"127.0.0.1:3\"}]\n[mcp]\nallowed_origins = [\"localhost\"]\nmax_sessions = 1\n"
      "tool_names = \"short\"\n" +
      tenant("acme"));
  EXPECT_NE(p.find("listen[1].tenant: auth = \"none\" needs tenant"), std::string::npos) << p;
  EXPECT_NE(p.find("listen[2].auth: expected \"key\""), std::string::npos) << p;
  EXPECT_NE(p.find("listen[3].adress: unknown key"), std::string::npos) << p;
  EXPECT_NE(p.find("mcp.allowed_origins[0]: expected an origin"), std::string::npos) << p;
  EXPECT_NE(p.find("mcp.max_sessions: unknown key"), std::string::npos) << p;
  EXPECT_NE(p.find("mcp.tool_names: expected \"prefixed\""), std::string::npos) << p;
  const std::string wide = problems(
      "listen = [{address = \"0.0.0.0:8081\", auth = \"none\", tenant = \"acme\"}]\n" + tenant("acme"));
  EXPECT_NE(wide.find("listen[0].auth: \"none\" (no authentication) is only allowed on a loopback address"),
            std::string::npos)
      << wide;
  // A tenant needs a key unless an unauthenticated listener serves it.
  EXPECT_NE(problems("listen = [\"127.0.0.1:1\"]\n[tenants.x]\nskills = \"s\"\ndata_dir = \"d\"\n")
                .find("tenants.x.key_sha256: no key"),
            std::string::npos);
}

TEST(ServerListener, TakesIpLiteralsAndAbsoluteUnixPathsOnly) {
  EXPECT_TRUE(parse_listener("127.0.0.1:0"));
  EXPECT_TRUE(parse_listener("[::1]:8080"));
  EXPECT_TRUE(parse_listener("unix:/tmp/s.sock"));
  for (const char* bad : {"localhost:80", "example.com:80", "127.0.0.1", "127.0.0.1:65536", "127.0.0.1:x",
                          "::1:80", "unix:relative.sock", ":80"}) {
    EXPECT_FALSE(parse_listener(bad)) << bad;
  }
}

TEST(ServerApiKey, GeneratedKeysAreFreshAndHashesCompareExactly) {
  const std::string a = generate_api_key();
  EXPECT_EQ(a.size(), 68u);
  EXPECT_NE(a, generate_api_key());
  const KeyHash h = hash_api_key("test");
  EXPECT_EQ(key_hash_hex(h),
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");  // sha256sum
  ASSERT_TRUE(parse_key_hash(key_hash_hex(h)));
  EXPECT_TRUE(key_hashes_equal(*parse_key_hash(key_hash_hex(h)), h));
  EXPECT_FALSE(key_hashes_equal(hash_api_key("tesT"), h));
  EXPECT_FALSE(parse_key_hash("9f86"));
  EXPECT_FALSE(parse_key_hash(std::string(64, 'g')));
  EXPECT_EQ(random_hex(16).size(), 32u);
}

TEST(ServerRunRequest, ReadsTheFieldsAndRefusesRaisedLimits) {
  Result<RunRequest> r =
      parse_run_request(R"({"export": "hog", "input": {"a": [1, "x"]}, "limits": {"timeout_ms": 10}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->export_name, "hog");
  EXPECT_EQ(r->input_json, R"({"a":[1,"x"]})");
  EXPECT_EQ(r->timeout_ms, 10u);
  Limits effective;
  effective.timeout_ms = 100;
  effective.memory_bytes = 8u << 20;
  EXPECT_TRUE(run_overrides(*r, effective));
  r->timeout_ms = 101;
  EXPECT_NE(run_overrides(*r, effective)
                .error()
                .message.find("limits.timeout_ms: 101 is above this skill's limit of 100"),
            std::string::npos);
  r->timeout_ms.reset();
  r->memory_mb = 9;
  EXPECT_FALSE(run_overrides(*r, effective));
  r->memory_mb = 8;
  EXPECT_EQ(run_overrides(*r, effective)->memory_bytes, 8u << 20);
  EXPECT_EQ(parse_run_request("{}")->input_json, "null");
  EXPECT_NE(parse_run_request(R"({"limits": {"timeout_ms": 0}})").error().message.find("limits.timeout_ms"),
            std::string::npos);
  EXPECT_NE(parse_run_request(R"({"limits": {"timeout_ms": -5}})").error().message.find("positive integer"),
            std::string::npos);
}

TEST(ServerRunRequest, ReadsANarrowingThatOnlyTakesAway) {
  Result<RunRequest> r = parse_run_request(
      R"({"narrowing": {"allow_http": ["https://api.example.com/v1/"], "fs_mode": "read", "deny_env": true}})");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->narrowing.deny_net);
  EXPECT_EQ(r->narrowing.allow_http, std::vector<std::string>{"https://api.example.com/v1/"});
  EXPECT_EQ(r->narrowing.fs_mode, FsMode::read);
  EXPECT_TRUE(r->narrowing.deny_env);
  EXPECT_TRUE(parse_run_request("{}")->narrowing.empty());
  const auto problem = [](const char* body) { return parse_run_request(body).error().message; };
  EXPECT_TRUE(problem(R"({"narrowing": {"deny_net": true, "allow_http": ["https://a.example/"]}})")
                  .starts_with("narrowing: deny_net and allow_http exclude each other"));
  EXPECT_TRUE(problem(R"({"narrowing": {"allow_http": []}})").starts_with("narrowing.allow_http: expected"));
  EXPECT_TRUE(problem(R"({"narrowing": {"allow_http": ["https://a.example/", 3]}})")
                  .starts_with("narrowing.allow_http[1]: expected a string"));
}

}  // namespace
}  // namespace skillbox::server

namespace skillbox::server {
namespace {

TEST(ServerConfigParse, ATenantsCodeTableSaysWhatCodeItMaySend) {
  Result<ServerConfig> plain = parse("listen = [\"127.0.0.1:0\"]\n" + tenant("acme"));
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_FALSE(plain->tenants[0].code.allow_upload);  // off unless the operator says so
  EXPECT_FALSE(plain->tenants[0].code.allow_inline);
  Result<ServerConfig> c = parse("listen = [\"127.0.0.1:0\"]\n" +
                                 tenant("acme",
                                        "[tenants.acme.code]\nallow_upload = true\nallow_inline = true\n"
                                        "max_files = 10\nmax_bytes = 4096\nkeep_versions = 3\n"));
  ASSERT_TRUE(c) << c.error().message;
  const CodeConfig& code = c->tenants[0].code;
  EXPECT_TRUE(code.allow_upload);
  EXPECT_TRUE(code.allow_inline);
  EXPECT_EQ(code.max_files, 10u);
  EXPECT_EQ(code.max_bytes, 4096u);
  EXPECT_EQ(code.keep_versions, 3u);
  const std::string bad = problems(
      "listen = [\"127.0.0.1:0\"]\n" +
      tenant("acme", "[tenants.acme.code]\nallow_upload = \"yes\"\nkeep_versions = 0\nmax_file = 1\n"));
  EXPECT_NE(bad.find("tenants.acme.code.allow_upload: expected true or false, got the string \"yes\""),
            std::string::npos)
      << bad;
  EXPECT_NE(bad.find("tenants.acme.code.keep_versions: expected an integer from 1 to 1000, got 0"),
            std::string::npos)
      << bad;
  EXPECT_NE(bad.find("tenants.acme.code.max_file: unknown key"), std::string::npos) << bad;
}

}  // namespace
}  // namespace skillbox::server

namespace skillbox::server {
namespace {

TEST(ServerConfigParse, ReadsTheDatabaseTableAndNeverQuotesItsPassword) {
  Result<ServerConfig> c = parse(
      "listen = [\"127.0.0.1:0\"]\n[database]\nurl = \"postgres://u:pw@127.0.0.1:5432/db\"\n"
      "max_connections = 9\nvault_key_file = \"keys/vault.key\"\n" +
      tenant("acme"));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->database.url, "postgres://u:pw@127.0.0.1:5432/db");
  EXPECT_EQ(c->database.max_connections, 9u);
  EXPECT_EQ(c->database.vault_key_file, "/srv/conf/keys/vault.key") << "relative to the config's folder";
  EXPECT_TRUE(parse("listen = [\"127.0.0.1:0\"]\n" + tenant("acme"))->database.url.empty()) << "no database";

  const std::string bad = problems(
      "listen = [\"127.0.0.1:0\"]\n[database]\nurl = \"host=db password=s3cret\"\nmax_connections = 0\n"
      "pool = 4\n" +
      tenant("acme"));
  EXPECT_NE(bad.find("serve.toml: database.url: expected a postgres:// or postgresql:// URL"),
            std::string::npos)
      << bad;
  EXPECT_NE(bad.find("database.max_connections:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("database.pool: unknown key; [database] has url, max_connections and vault_key_file"),
            std::string::npos)
      << bad;
  EXPECT_EQ(bad.find("s3cret"), std::string::npos) << "a password is never quoted: " << bad;
  EXPECT_NE(problems("listen = [\"127.0.0.1:0\"]\n[database]\nmax_connections = 2\n" + tenant("acme"))
                .find("database.url: missing"),
            std::string::npos);
  EXPECT_NE(
      problems(
          "listen = [\"127.0.0.1:0\"]\nrun_threads = 8\n[database]\nurl = \"postgres://u@127.0.0.1/db\"\n" +
          tenant("acme"))
          .find("database.max_connections: 8 is not more than run_threads (8)"),
      std::string::npos);
  EXPECT_NE(problems("listen = [\"127.0.0.1:0\"]\naudit = \"database\"\n" + tenant("acme"))
                .find("audit: \"database\" stores the audit in the database; give database.url too"),
            std::string::npos);
  EXPECT_NE(
      problems("listen = [\"127.0.0.1:0\"]\ndatabase = \"postgres://x@127.0.0.1/db\"\n" + tenant("acme"))
          .find("database: expected a table"),
      std::string::npos);
}

}  // namespace
}  // namespace skillbox::server
