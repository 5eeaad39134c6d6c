// Skills a tenant sends: uploads (PUT /v1/skills/{id}, JSON or tar), inline runs (POST /v1/run), the
// OpenHuman bundle routes, and the read-only views of a skill's store and workspace, against the real
// `skillbox serve` with two tenants. Whatever tenant A sends (another tenant's id, "..", %2F, a tar with
// "../" or a symlink), B's skills and data are never reached, and a refused upload stores nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "compat/bundle_support.h"
#include "serve_support.h"
#include "server/api_key.h"
#include "server/skill_digest.h"
#include "tar_support.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kKeyA = "uploads-a-key-0123456789abcdef";
constexpr const char* kKeyB = "uploads-b-key-0123456789abcdef";
constexpr const char* kCounter =
    "export default () => { const n = (store.get('runs') ?? 0) + 1; store.set('runs', n); return n; }";
const std::vector<std::string> kJson = {"Content-Type: application/json"};
const std::vector<std::string> kTar = {"Content-Type: application/x-tar"};

std::string manifest(const std::string& id, const std::string& extra = "") {
  return R"({"id": ")" + id + R"(", "entry": "index.js")" + (extra.empty() ? "" : ", " + extra) + "}";
}

/// The body of a JSON upload of `files`.
std::string upload_body(const server::SkillFiles& files) {
  json f = json::object();
  for (const auto& [path, content] : files) f[path] = content;
  return json{{"files", f}}.dump();
}

class Uploads : public ::testing::Test {
 protected:
  void SetUp() override {
    write_skill(root() / "a-skills" / "aonly", "aonly", "export default () => 'a folder'");
    write_skill(root() / "a-skills" / "writer", "writer",
                "export default async () => { await openhuman.fs.writeFile('notes.txt', 'hello notes');"
                " await openhuman.fs.mkdir('sub'); await openhuman.fs.writeFile('sub/a.txt', 'A');"
                " store.set('k1', {v: 1}); store.set('k2', 'two'); store.set('k/3', [3]); return 'wrote'; }",
                R"("permissions": {"fs": {"mode": "readwrite"}})");
    const Bundle notes("notes", grants({}));
    fs::copy(notes.dir(), root() / "a-skills" / "notes", fs::copy_options::recursive);
    write_skill(root() / "b-skills" / "bonly", "bonly", "export default () => 'secret of b'");
    write_skill(root() / "b-skills" / "counter", "counter", kCounter);
    const auto hash = [](const char* key) { return server::key_hash_hex(server::hash_api_key(key)); };
    write_file(
        root() / "serve.toml",
        "listen = [\"127.0.0.1:0\"]\naudit = \"audit.log\"\n"
        "[tenants.a]\nkey_sha256 = [\"" +
            hash(kKeyA) +
            "\"]\nskills = \"a-skills\"\ndata_dir = \"a-data\"\n"
            "[tenants.a.code]\nallow_upload = true\nallow_inline = true\nmax_files = 20\nkeep_versions = 2\n"
            "[tenants.b]\nkey_sha256 = [\"" +
            hash(kKeyB) + "\"]\nskills = \"b-skills\"\ndata_dir = \"b-data\"\n");
    server_ = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--config", (root() / "serve.toml").string()});
  }

  fs::path root() const { return tmp_.path(); }
  std::string url(const std::string& path) const { return server_->url + path; }
  HttpReply put(const std::string& id, const server::SkillFiles& files, const char* key = kKeyA) const {
    return http("PUT", url("/v1/skills/" + id), key, upload_body(files), kJson);
  }
  HttpReply run(const std::string& id, const char* key = kKeyA) const {
    return http("POST", url("/v1/skills/" + id + "/run"), key, "{}");
  }
  /// Every file below `dir`, as relative paths.
  static std::set<std::string> tree(const fs::path& dir) {
    std::set<std::string> out;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      out.insert(it->path().lexically_relative(dir).string());
    return out;
  }

  TempDir tmp_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Uploads, AnUploadedSkillRunsAndItsNewVersionKeepsItsStore) {
  const server::SkillFiles v1{{"skill.json", manifest("tally", R"("version": "1.0.0")")},
                              {"index.js", kCounter}};
  const HttpReply first = put("tally", v1);
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.json()["digest"], server::skill_digest(v1));
  EXPECT_EQ(first.json()["version"], "1.0.0");
  EXPECT_EQ(first.json()["created"], true);
  EXPECT_EQ(run("tally").json()["value"], 1);
  const json detail = http("GET", url("/v1/skills/tally"), kKeyA).json();
  EXPECT_EQ(detail["digest"], server::skill_digest(v1));
  EXPECT_EQ(detail["source"], "upload");

  const HttpReply again = put("tally", v1);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.json()["created"], false);

  const server::SkillFiles v2{
      {"skill.json", manifest("tally", R"("version": "2.0.0")")},
      {"index.js",
       "export default () => { const n = (store.get('runs') ?? 0) + 1; store.set('runs', n); "
       "return n * 100; }"}};
  const HttpReply second = put("tally", v2);
  ASSERT_EQ(second.status, 201) << second.body;
  EXPECT_NE(second.json()["digest"], first.json()["digest"]);
  EXPECT_EQ(run("tally").json()["value"], 200);  // the new code, the same store

  bool listed = false;
  const json list = http("GET", url("/v1/skills"), kKeyA).json();
  for (const auto& s : list["skills"]) {
    if (s["id"] == "tally") listed = s["digest"] == server::skill_digest(v2) && s["source"] == "upload";
    if (s["id"] == "aonly") {
      EXPECT_EQ(s["source"], "folder");
      EXPECT_EQ(s["digest"], server::folder_digest(root() / "a-skills" / "aonly").value());
    }
  }
  EXPECT_TRUE(listed) << list.dump();
  // The audit names the digest of the version each run used.
  std::ifstream audit(root() / "audit.log");
  std::string line, last_run;
  while (std::getline(audit, line))
    if (line.find("\"/v1/skills/{id}/run\"") != std::string::npos) last_run = line;
  EXPECT_EQ(json::parse(last_run)["digest"], server::skill_digest(v2));
}

TEST_F(Uploads, ATarGivesTheSameDigestAsTheSameFilesInJson) {
  const server::SkillFiles files{{"skill.json", manifest("tarred")},
                                 {"index.js", "import {x} from './lib/x.js'; export default () => x;"},
                                 {"lib/x.js", "export const x = 'from tar';"}};
  const std::string tar = make_tar({{.path = "./", .type = AE_IFDIR},
                                    {.path = "./skill.json", .content = files.at("skill.json")},
                                    {.path = "./index.js", .content = files.at("index.js")},
                                    {.path = "./lib/", .type = AE_IFDIR},
                                    {.path = "./lib/x.js", .content = files.at("lib/x.js")}});
  const HttpReply r = http("PUT", url("/v1/skills/tarred"), kKeyA, tar, kTar);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.json()["digest"], server::skill_digest(files));
  EXPECT_EQ(run("tarred").json()["value"], "from tar");
  EXPECT_EQ(put("tarred", files).status, 200);  // the same digest: already current
}

TEST_F(Uploads, BadUploadsAreRefusedAndStoreNothing) {
  const server::SkillFiles good{{"skill.json", manifest("x1")}, {"index.js", "export default () => 1"}};
  const auto code = [](const HttpReply& r) { return r.json()["error"]["code"].get<std::string>(); };
  HttpReply r = put("x1", good, kKeyB);  // B may not upload
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(code(r), "upload_not_allowed");
  r = http("PUT", url("/v1/skills/x1"), kKeyA, upload_body(good), {"Content-Type: text/plain"});
  EXPECT_EQ(r.status, 415);
  r = put("x1", {{"skill.json", R"({"id": "x1", "entry": "index.js", "limits": {"memory_mb": "lots"}})"},
                 {"index.js", "1"}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(code(r), "invalid_skill");
  EXPECT_EQ(r.body.find(root().string()), std::string::npos);  // no host path in the message
  r = put("x1", {{"skill.json", manifest("aonly")}, {"index.js", "1"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(code(r), "id_mismatch");
  EXPECT_EQ(put("aonly", {{"skill.json", manifest("aonly")}, {"index.js", "1"}}).status, 409);
  r = put("x1",
          {{"skill.json", manifest("x1", R"("permissions": {"http": {"allow": ["http://169.254.169.254/"],
                                                  "allow_private_addresses": true}})")},
           {"index.js", "1"}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(code(r), "permission_not_allowed");
  EXPECT_EQ(
      http("PUT", url("/v1/skills/x1"), kKeyA, "{\"files\": {\"../../b-data/x\": \"1\"}}", kJson).status,
      400);
  for (const std::string& id :
       std::vector<std::string>{"%2e%2e", "..", "a%2Fb", "A", "x%00", std::string(65, 'a')}) {
    EXPECT_EQ(put(id, good).status, 400) << id;
  }
  r = http("PUT", url("/v1/skills/x1"), kKeyA,
           make_tar({{.path = "skill.json", .content = manifest("x1")},
                     {.path = "index.js", .type = AE_IFLNK, .link = "../../../b-skills/bonly/index.js"}}),
           kTar);
  EXPECT_EQ(r.status, 400);
  r = http("PUT", url("/v1/skills/x1"), kKeyA,
           make_tar({{.path = "skill.json", .content = manifest("x1")},
                     {.path = "../../b-skills/bonly/index.js", .content = "export default () => 'pwned'"}}),
           kTar);
  EXPECT_EQ(r.status, 400);
  server::SkillFiles many;
  for (int i = 0; i < 21; ++i) many["f" + std::to_string(i) + ".js"] = "1";
  EXPECT_EQ(put("x1", many).status, 413);
  EXPECT_EQ(http("GET", url("/v1/skills/x1"), kKeyA).status, 404);  // nothing was stored
  EXPECT_EQ(run("bonly", kKeyB).json()["value"], "secret of b");
  EXPECT_EQ(tree(root() / "b-skills"),
            (std::set<std::string>{"bonly", "bonly/index.js", "bonly/skill.json", "counter",
                                   "counter/index.js", "counter/skill.json"}));
  // No staging folder is left behind, and no version was made.
  for (const std::string& p : tree(root() / "a-data")) EXPECT_EQ(p.find("staging"), std::string::npos) << p;
  EXPECT_FALSE(fs::exists(root() / "a-data" / "uploads" / "x1" / "current"));
}

TEST_F(Uploads, AnUploadClaimingAnotherTenantsIdStaysInItsOwnTenant) {
  ASSERT_EQ(run("counter", kKeyB).json()["value"], 1);
  ASSERT_EQ(
      put("bonly", {{"skill.json", manifest("bonly")}, {"index.js", "export default () => 'a copy'"}}).status,
      201);
  ASSERT_EQ(put("counter", {{"skill.json", manifest("counter")}, {"index.js", kCounter}}).status, 201);
  EXPECT_EQ(run("bonly").json()["value"], "a copy");
  EXPECT_EQ(run("bonly", kKeyB).json()["value"], "secret of b");
  EXPECT_EQ(run("counter").json()["value"], 1);         // A's own store
  EXPECT_EQ(run("counter", kKeyB).json()["value"], 2);  // B's, untouched by A
  EXPECT_FALSE(fs::exists(root() / "b-data" / "uploads"));
  // B's key in the query string names no tenant.
  EXPECT_EQ(http("GET", url("/v1/skills/bonly/store?key=") + kKeyB).status, 401);
}

TEST_F(Uploads, VersionsBeyondKeepVersionsAreRemoved) {
  for (int v = 1; v <= 4; ++v) {
    const std::string js = "export default () => " + std::to_string(v);
    ASSERT_EQ(put("many", {{"skill.json", manifest("many")}, {"index.js", js}}).status, 201);
  }
  size_t kept = 0;
  for (const auto& e : fs::directory_iterator(root() / "a-data" / "uploads" / "many" / "versions")) {
    (void)e;
    ++kept;
  }
  EXPECT_EQ(kept, 2u);  // keep_versions = 2
  EXPECT_EQ(run("many").json()["value"], 4);
}

TEST_F(Uploads, ARunKeepsTheVersionItStartedWith) {
  const auto version = [](const std::string& v, int ms) {
    return server::SkillFiles{
        {"skill.json", manifest("slow")},
        {"index.js", "export default () => new Promise((done) => setTimeout(() => done('" + v + "'), " +
                         std::to_string(ms) + "))"}};
  };
  ASSERT_EQ(put("slow", version("v1", 1500)).status, 201);
  std::string first;
  std::thread runner([&] { first = run("slow").json()["value"]; });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the v1 run is under way
  ASSERT_EQ(put("slow", version("v2", 0)).status, 201);
  ASSERT_EQ(put("slow", version("v3", 0)).status, 201);  // keep_versions = 2: v1 is beyond it, but in use
  const fs::path v1 =
      root() / "a-data" / "uploads" / "slow" / "versions" / server::skill_digest(version("v1", 1500));
  EXPECT_TRUE(fs::exists(v1));
  EXPECT_EQ(run("slow").json()["value"], "v3");
  runner.join();
  EXPECT_EQ(first, "v1");
  ASSERT_EQ(put("slow", version("v4", 0)).status, 201);  // nothing holds v1 now: it goes
  EXPECT_FALSE(fs::exists(v1));
}

TEST_F(Uploads, DeleteRemovesTheSkillAndKeepsItsDataForTheNextUpload) {
  const server::SkillFiles v1{{"skill.json", manifest("gone")}, {"index.js", kCounter}};
  ASSERT_EQ(put("gone", v1).status, 201);
  ASSERT_EQ(run("gone").json()["value"], 1);
  // Another tenant cannot delete it (its own uploads have no such id), nor may a tenant without uploads.
  EXPECT_EQ(http("DELETE", url("/v1/skills/gone"), kKeyB).status, 403);
  const HttpReply deleted = http("DELETE", url("/v1/skills/gone"), kKeyA);
  EXPECT_EQ(deleted.status, 204) << deleted.body;
  EXPECT_TRUE(deleted.body.empty());
  EXPECT_EQ(http("GET", url("/v1/skills/gone"), kKeyA).status, 404);
  EXPECT_EQ(run("gone").status, 404);
  EXPECT_EQ(http("GET", url("/v1/skills"), kKeyA).body.find("\"gone\""), std::string::npos);
  EXPECT_TRUE(tree(root() / "a-data" / "uploads" / "gone" / "versions").empty());
  // Deleting again, or an id never uploaded: 404; a folder of the operator's: 409; a bad id: 400.
  EXPECT_EQ(http("DELETE", url("/v1/skills/gone"), kKeyA).json()["error"]["code"], "skill_not_found");
  const HttpReply folder = http("DELETE", url("/v1/skills/aonly"), kKeyA);
  EXPECT_EQ(folder.status, 409) << folder.body;
  EXPECT_EQ(run("aonly").json()["value"], "a folder");
  EXPECT_EQ(http("DELETE", url("/v1/skills/..%2fb-data"), kKeyA).status, 400);
  // The id's store stayed: the next upload of it counts on.
  ASSERT_EQ(put("gone", v1).status, 201);
  EXPECT_EQ(run("gone").json()["value"], 2);
}

TEST_F(Uploads, DeleteLeavesTheVersionARunHolds) {
  const server::SkillFiles slow{
      {"skill.json", manifest("held")},
      {"index.js", "export default () => new Promise((done) => setTimeout(() => done('finished'), 1500))"}};
  ASSERT_EQ(put("held", slow).status, 201);
  std::string value;
  std::thread runner([&] { value = run("held").json()["value"]; });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the run is under way
  ASSERT_EQ(http("DELETE", url("/v1/skills/held"), kKeyA).status, 204);
  const fs::path version = root() / "a-data" / "uploads" / "held" / "versions" / server::skill_digest(slow);
  EXPECT_TRUE(fs::exists(version));
  runner.join();
  EXPECT_EQ(value, "finished");
}

TEST_F(Uploads, AnInlineSkillRunsWithAFreshStoreEachTime) {
  const json body{{"manifest", {{"id", "scratch"}, {"entry", "index.js"}}},
                  {"files", {{"index.js", kCounter}}},
                  {"input", nullptr}};
  for (int i = 0; i < 2; ++i) {
    const HttpReply r = http("POST", url("/v1/run"), kKeyA, body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.json()["outcome"], "ok");
    EXPECT_EQ(r.json()["value"], 1);
  }
  const json echo{{"manifest", {{"id", "echo"}, {"entry", "main.js"}, {"limits", {{"timeout_ms", 1000}}}}},
                  {"files", {{"main.js", "export const twice = (i) => i.n * 2;"}}},
                  {"export", "twice"},
                  {"input", {{"n", 21}}}};
  EXPECT_EQ(http("POST", url("/v1/run"), kKeyA, echo.dump()).json()["value"], 42);
  HttpReply r = http("POST", url("/v1/run"), kKeyB, body.dump());
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.json()["error"]["code"], "inline_not_allowed");
  r = http("POST", url("/v1/run"), kKeyA, R"({"files": {"/etc/passwd": "x"}})");
  EXPECT_EQ(r.status, 400);
  r = http("POST", url("/v1/run"), kKeyA, R"({"files": {"index.js": "1"}, "manifest": {"id": "x"}})");
  EXPECT_EQ(r.status, 422);  // no entry: the manifest is checked as skillbox run checks it
  r = http(
      "POST", url("/v1/run"), kKeyA,
      R"({"manifest": {"id": "x", "entry": "i.js", "permissions": {"http": {"allow": ["http://127.0.0.1/"],
               "allow_private_addresses": true}}}, "files": {"i.js": "export default () => 1"}})");
  EXPECT_EQ(r.status, 422) << r.body;
  r = http("POST", url("/v1/run"), kKeyA, R"({"files": {}, "cmd": "x"})");
  EXPECT_EQ(r.status, 400);
}

TEST_F(Uploads, ABundlesToolsAndHooksAreServed) {
  const HttpReply tools = http("GET", url("/v1/skills/notes/tools"), kKeyA);
  ASSERT_EQ(tools.status, 200) << tools.body;
  bool bump = false;
  const json listed = tools.json();  // kept: a range-for over tools.json()["tools"] would dangle
  for (const auto& t : listed["tools"]) bump = bump || t["name"] == "bump";
  EXPECT_TRUE(bump) << tools.body;
  const HttpReply call = http("POST", url("/v1/skills/notes/tools/bump/call"), kKeyA, R"({"arguments": {}})");
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_EQ(call.json()["outcome"], "ok");
  EXPECT_EQ(call.json()["value"]["content"][0]["text"], "1");
  const HttpReply hook = http("POST", url("/v1/skills/notes/hooks/onListOptions"), kKeyA, "{}");
  ASSERT_EQ(hook.status, 200) << hook.body;
  EXPECT_EQ(hook.json()["value"][0]["name"], "verbose");
  HttpReply r = http("GET", url("/v1/skills/aonly/tools"), kKeyA);
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.json()["error"]["code"], "not_a_bundle");
  EXPECT_EQ(http("POST", url("/v1/skills/aonly/hooks/onSync"), kKeyA, "{}").status, 422);
  EXPECT_EQ(http("POST", url("/v1/skills/notes/tools/%2e%2e/call"), kKeyA, "{}").status, 400);
  EXPECT_EQ(http("POST", url("/v1/skills/notes/tools/bump/call"), kKeyA, R"({"arguments": 1})").status, 400);
  EXPECT_EQ(http("GET", url("/v1/skills/notes/tools"), kKeyB).status, 404);
}

TEST_F(Uploads, AStoreAndAWorkspaceAreReadOnlyByTheirTenant) {
  ASSERT_EQ(run("writer").json()["value"], "wrote");
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store"), kKeyA).json(),
            json::parse(R"({"keys": ["k/3", "k1", "k2"], "next": null})"));
  const json page = http("GET", url("/v1/skills/writer/store?limit=2"), kKeyA).json();
  EXPECT_EQ(page["keys"], json::parse(R"(["k/3", "k1"])"));
  EXPECT_EQ(page["next"], "k1");
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store?after=k1"), kKeyA).json()["keys"],
            json::parse(R"(["k2"])"));
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store?prefix=k%2F"), kKeyA).json()["keys"],
            json::parse(R"(["k/3"])"));
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/k1"), kKeyA).json(),
            json::parse(R"({"key": "k1", "value": {"v": 1}})"));
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/k%2F3"), kKeyA).json()["value"], json::parse("[3]"));
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/nope"), kKeyA).status, 404);
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/a%00b"), kKeyA).status, 400);
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/%zz"), kKeyA).status, 400);
  EXPECT_EQ(http("GET", url("/v1/skills/aonly/store"), kKeyA).json()["keys"], json::array());

  const HttpReply listing = http("GET", url("/v1/skills/writer/workspace"), kKeyA);
  EXPECT_EQ(listing.json(), json::parse(R"({"path": ".", "entries": [{"name": "notes.txt", "type": "file"},
                                                                  {"name": "sub", "type": "directory"}]})"));
  const HttpReply file = http("GET", url("/v1/skills/writer/workspace/notes.txt"), kKeyA);
  EXPECT_EQ(file.status, 200);
  EXPECT_EQ(file.body, "hello notes");
  EXPECT_EQ(file.header("content-type"), "application/octet-stream");
  EXPECT_EQ(http("GET", url("/v1/skills/writer/workspace/sub%2Fa.txt"), kKeyA).body, "A");
  EXPECT_EQ(http("GET", url("/v1/skills/writer/workspace/sub"), kKeyA).json()["entries"][0]["name"], "a.txt");
  for (const char* bad :
       {"%2e%2e/%2e%2e/b-data", "..%2F..%2Fb-data", "sub/../../x", "%2Fetc%2Fpasswd", "a%00b", "%ff"}) {
    EXPECT_EQ(http("GET", url(std::string("/v1/skills/writer/workspace/") + bad), kKeyA).status, 400) << bad;
  }
  EXPECT_EQ(http("GET", url("/v1/skills/writer/workspace/missing.txt"), kKeyA).status, 404);
  // A symlink planted in the workspace (by the operator, or a bug) is never followed.
  fs::create_symlink(root() / "b-skills" / "bonly" / "index.js",
                     root() / "a-data" / "skills" / "writer" / "workspace" / "leak.js");
  const HttpReply leak = http("GET", url("/v1/skills/writer/workspace/leak.js"), kKeyA);
  EXPECT_EQ(leak.status, 403);
  EXPECT_EQ(leak.body.find("secret"), std::string::npos);
  // Another tenant's key sees nothing of it: B has no skill "writer".
  EXPECT_EQ(http("GET", url("/v1/skills/writer/store/k1"), kKeyB).status, 404);
  EXPECT_EQ(http("GET", url("/v1/skills/writer/workspace/notes.txt"), kKeyB).status, 404);
  EXPECT_EQ(http("GET", url("/v1/skills/writer/workspace/notes.txt")).status, 401);
  EXPECT_EQ(http("DELETE", url("/v1/skills/writer/store/k1"), kKeyA).status, 405);
}

}  // namespace
}  // namespace skillbox::testing
