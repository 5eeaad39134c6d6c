// compat/bundle_manifest.cpp and load_skill(): an OpenHuman manifest.json grants nothing, keeps what it
// says for `check`, and a bad one fails with messages naming the file and key.
#include "compat/bundle_manifest.h"

#include <gtest/gtest.h>

#include <string>

#include "compat/bundle_support.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using testing::Bundle;

std::string adapt_error(const std::string& manifest, std::optional<std::string> grants = std::nullopt) {
  std::optional<std::string_view> g;
  if (grants) g = *grants;
  Result<Manifest> m = compat::adapt_bundle_manifest(manifest, g);
  EXPECT_FALSE(m) << "accepted: " << manifest;
  return m ? "" : m.error().message;
}

TEST(BundleManifest, AManifestAloneGrantsNothingAndKeepsWhatItSays) {
  Bundle b("notes", "");
  const Skill s = b.skill();
  const Manifest& m = s.manifest();
  EXPECT_EQ(m.format, SkillFormat::openhuman);
  EXPECT_EQ(m.id, "notes");
  EXPECT_EQ(m.name, "Notes");
  EXPECT_EQ(m.version, "1.2.0");
  EXPECT_EQ(m.entry, "index.js");
  EXPECT_EQ(m.permissions.fs.mode, FsMode::none);
  EXPECT_TRUE(m.permissions.http.allow.empty());
  EXPECT_TRUE(m.permissions.env.empty()) << "the manifest's env list is a request, not a grant";
  ASSERT_TRUE(m.bundle);
  EXPECT_EQ(m.bundle->env, std::vector<std::string>{"NOTES_REGION"});
  EXPECT_EQ(m.bundle->runtime, "quickjs");
  EXPECT_FALSE(m.bundle->has_grants);
  EXPECT_EQ(m.bundle->unknown_keys, std::vector<std::string>{"x_marketplace_color"});
  // memory_limit_mb 64 may lower the limit, never raise it past the default 32 MiB.
  EXPECT_EQ(m.limits.memory_bytes, 32ull << 20);
}

TEST(BundleManifest, SkillJsonBesideItIsTheOperatorsGrant) {
  Bundle b("notes", R"({"limits": {"timeout_ms": 2000, "memory_mb": 128},
                        "permissions": {"env": ["NOTES_REGION"], "fs": {"mode": "read"}, "db": {"quota_bytes": 131072}}})");
  const Manifest m = b.skill().manifest();
  EXPECT_EQ(m.limits.timeout_ms, 2000u);
  EXPECT_EQ(m.limits.memory_bytes, 64ull << 20) << "memory_limit_mb lowers the operator's 128 MiB";
  EXPECT_EQ(m.permissions.env, std::vector<std::string>{"NOTES_REGION"});
  EXPECT_EQ(m.permissions.fs.mode, FsMode::read);
  EXPECT_EQ(m.permissions.db.quota_bytes, 131072u);
  EXPECT_TRUE(m.bundle->has_grants);
}

TEST(BundleManifest, SetupModesOfBothFormsAreRead) {
  Bundle notion("notion-lite", "");
  const Skill notion_skill = notion.skill();
  const auto& modes = notion_skill.manifest().bundle->setup_modes;
  ASSERT_EQ(modes.size(), 2u);
  EXPECT_EQ(modes[0].type, "self_hosted");
  EXPECT_EQ(modes[0].field_names, std::vector<std::string>{"api_token"});
  EXPECT_EQ(modes[1].type, "text");
  Bundle mail("mailbox", "");
  const Skill mail_skill = mail.skill();
  const auto& oauth = mail_skill.manifest().bundle->setup_modes;
  ASSERT_EQ(oauth.size(), 1u);
  EXPECT_EQ(oauth[0].type, "managed");
  EXPECT_EQ(oauth[0].provider, "google");
  EXPECT_EQ(oauth[0].api_base_url, "https://proxy.example/gmail");
  EXPECT_EQ(mail.skill().manifest().bundle->runtime, "v8");
}

TEST(BundleManifest, BadManifestsSayWhichKeyAndWhatToDo) {
  EXPECT_NE(adapt_error(R"({"name": "x"})").find("manifest.json: id: missing required key"),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": 7})").find("manifest.json: id: expected a string, got 7"),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "Bad Id"})").find("manifest.json: id: expected a skill id"),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "memory_limit_mb": "lots"})")
                .find("manifest.json: memory_limit_mb: expected an integer from 1 to 4096, got \"lots\""),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "runtime": "node"})").find("runtime: expected \"quickjs\" or \"v8\""),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "setup": {"auth": {"modes": [{"type": "magic"}]}}})")
                .find("setup.auth.modes[0].type: expected one of \"managed\", \"self_hosted\", \"text\""),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "env": ["OK", "NO=PE"]})")
                .find("env[1]: expected an environment variable name"),
            std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "id": "b"})").find("duplicate key"), std::string::npos);
  EXPECT_NE(adapt_error("{\"id\": ").find("manifest.json: invalid JSON"), std::string::npos);
  EXPECT_NE(adapt_error(R"({"id": "a", "entry": "../x.js"})").find("manifest.json: entry:"),
            std::string::npos);
  // Several problems at once, one per line.
  const std::string two = adapt_error(R"({"id": 1, "auto_start": "yes"})");
  EXPECT_NE(two.find("id: expected a string"), std::string::npos) << two;
  EXPECT_NE(two.find("manifest.json: auto_start: expected true or false"), std::string::npos) << two;
  EXPECT_NE(two.find('\n'), std::string::npos) << "one problem per line: " << two;
}

TEST(BundleManifest, TheGrantFileHoldsOnlyLimitsAndPermissions) {
  const std::string manifest = R"({"id": "a"})";
  EXPECT_NE(adapt_error(manifest, R"({"id": "other", "permissions": {}})")
                .find("skill.json: id: not allowed beside manifest.json; this skill.json holds only the "
                      "operator's grants"),
            std::string::npos);
  EXPECT_NE(adapt_error(manifest, R"({"permissions": {"fs": {"mode": "all"}}})")
                .find("skill.json: permissions.fs.mode"),
            std::string::npos);
  EXPECT_NE(adapt_error(manifest, R"({"permissions": {"db": {"quota_bytes": 10}}})")
                .find("skill.json: permissions.db.quota_bytes: expected an integer from 65536"),
            std::string::npos);
  EXPECT_NE(adapt_error(manifest, R"({"permissions": {"db": {"size": 10}}})")
                .find("permissions.db.size: unknown key"),
            std::string::npos);
}

TEST(BundleManifest, AMissingEntryFileIsNamed) {
  Bundle b("notes", "");
  std::filesystem::remove(b.dir() / "index.js");
  Result<Skill> s = load_skill(b.dir());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("manifest.json: entry: file \"index.js\" not found in the bundle folder"),
            std::string::npos)
      << s.error().message;
}

TEST(BundleManifest, AFolderWithoutManifestJsonIsASkillboxSkill) {
  Result<Skill> s = load_skill(std::filesystem::path(SKILLBOX_SOURCE_DIR) / "examples" / "skills" / "hello");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->manifest().format, SkillFormat::skillbox);
  EXPECT_FALSE(s->manifest().bundle);
}

}  // namespace
}  // namespace skillbox
