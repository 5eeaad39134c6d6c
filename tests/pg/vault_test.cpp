// pg/credential_vault.h beyond the vault contract (tests/state/credential_vault_contract_test.cpp, which
// it passes): what is at rest is sealed, a row opens only with its key and only as the tenant's and the
// skill's it was sealed for, the key file is checked, and `skillbox db credentials` never shows a
// secret.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>

#include "capabilities/store/store_test_util.h"
#include "pg/connection.h"
#include "pg/credential_vault.h"
#include "pg/pool.h"
#include "support/cli_exec.h"
#include "support/postgres_test_db.h"

namespace skillbox::pg {
namespace {

namespace fs = std::filesystem;
using skillbox::testing::CliExec;
using skillbox::testing::CliOptions;

constexpr const char* kSecret = "sk-live-VAULT-SECRET-9f8e7d";
const std::array<uint8_t, 32> kKeyBytes{7, 7, 7, 7, 1};
const std::array<uint8_t, 32> kOtherKeyBytes{9, 9, 9, 9, 2};

SkillCredentials token(const std::string& secret) {
  SkillCredentials c;
  c.auth = AuthCredential{};
  c.auth->mode = "self_hosted";
  c.auth->credentials["api_token"] = secret;
  c.auth->hosts = {"https://api.notion.com/"};
  return c;
}

void write_key(const fs::path& file, const std::string& text, mode_t mode) {
  std::ofstream(file) << text;
  ::chmod(file.c_str(), mode);
}

class PostgresVault : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = skillbox::testing::migrated_postgres_url();
    ASSERT_FALSE(url_.empty()) << skillbox::testing::postgres_missing();
    tenant_ = skillbox::testing::postgres_tenant_for(tmp_.path());
    auto c = Connection::open(url_, std::chrono::seconds(5), std::chrono::milliseconds(1000));
    ASSERT_TRUE(c) << c.error().message;
    conn_.emplace(std::move(*c));
  }
  std::shared_ptr<state::CredentialVault> vault(const std::array<uint8_t, 32>& key) {
    return make_pg_credential_vault(Pool::create(url_), tenant_, std::make_shared<const VaultKey>(key));
  }
  std::string row_text() {
    auto r = conn_->exec("reading the rows",
                         "SELECT string_agg(row_to_json(c)::text, '') FROM credentials c "
                         "WHERE tenant = $1",
                         {tenant_});
    return r && !r->empty() ? r->at(0, 0).value_or("") : "";
  }

  skillbox::testing::TempDir tmp_;
  std::string url_;
  std::string tenant_;
  std::optional<Connection> conn_;
};

TEST_F(PostgresVault, WhatIsAtRestIsSealedAndOpensWithItsKeyOnly) {
  const VaultKey key(kKeyBytes);
  ASSERT_TRUE(put_credentials(*conn_, key, tenant_, "notion", token(kSecret)));
  const std::string rows = row_text();
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows.find(kSecret), std::string::npos) << "the secret is not at rest in the clear";
  EXPECT_EQ(rows.find("api_token"), std::string::npos) << "nor are the names";
  EXPECT_NE(rows.find(key.id()), std::string::npos) << "the row names its key";

  auto found = vault(kKeyBytes)->find("notion");
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->auth->credentials.at("api_token"), kSecret);
  EXPECT_EQ((*found)->auth->hosts, std::vector<std::string>{"https://api.notion.com/"});

  auto other = vault(kOtherKeyBytes)->find("notion");
  ASSERT_FALSE(other) << "another key";
  EXPECT_NE(other.error().message.find("were sealed with another vault key (key id " + key.id() + ")"),
            std::string::npos)
      << other.error().message;
  EXPECT_EQ(other.error().message.find(kSecret), std::string::npos);
}

TEST_F(PostgresVault, ARowCopiedToAnotherSkillOrChangedDoesNotOpen) {
  const VaultKey key(kKeyBytes);
  ASSERT_TRUE(put_credentials(*conn_, key, tenant_, "notion", token(kSecret)));
  // Copied to another skill id: its associated data no longer matches.
  auto copied =
      conn_->exec("copying a row",
                  "INSERT INTO credentials (tenant, skill, key_id, nonce, sealed) SELECT tenant, 'gmail', "
                  "key_id, nonce, sealed FROM credentials WHERE tenant = $1 AND skill = 'notion'",
                  {tenant_});
  ASSERT_TRUE(copied && copied->affected == 1u);
  auto moved = vault(kKeyBytes)->find("gmail");
  ASSERT_FALSE(moved);
  EXPECT_NE(moved.error().message.find("do not open with this server's vault key"), std::string::npos)
      << moved.error().message;
  // One byte of the sealed text changed.
  auto flipped = conn_->exec("changing a byte",
                             "UPDATE credentials SET sealed = set_byte(sealed, 3, get_byte(sealed, 3) # 1) "
                             "WHERE tenant = $1 AND skill = 'notion'",
                             {tenant_});
  ASSERT_TRUE(flipped && flipped->affected == 1u);
  auto changed = vault(kKeyBytes)->find("notion");
  ASSERT_FALSE(changed);
  EXPECT_EQ(changed.error().message.find(kSecret), std::string::npos);
  // No row: none; an id that is no skill id: none, never a lookup.
  auto none = vault(kKeyBytes)->find("weather");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  auto cut = vault(kKeyBytes)->find(std::string("notion\0x", 8));
  ASSERT_TRUE(cut);
  EXPECT_FALSE(cut->has_value());
}

TEST_F(PostgresVault, TheKeyFileMustBeTheOwnersAndHold64HexDigits) {
  const fs::path file = tmp_.path() / "vault.key";
  const std::string hex(64, 'a');
  write_key(file, hex + "\n", 0600);
  auto good = VaultKey::load(file);
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ((*good)->id().size(), 16u);
  EXPECT_EQ((*good)->id(),
            VaultKey(std::array<uint8_t, 32>{0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
                                             0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
                                             0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa})
                .id());
  write_key(file, hex, 0644);
  auto open = VaultKey::load(file);
  ASSERT_FALSE(open);
  EXPECT_NE(open.error().message.find(
                "can be read by other users (mode 0644); make it the owner's only: chmod 600"),
            std::string::npos)
      << open.error().message;
  for (const std::string& bad : {std::string(63, 'a'), std::string(65, 'a'), std::string(62, 'a') + "zz"}) {
    write_key(file, bad, 0600);
    auto refused = VaultKey::load(file);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("must hold 64 hex digits"), std::string::npos);
    EXPECT_EQ(refused.error().message.find("aaaa"), std::string::npos) << "never a byte of the key";
  }
  EXPECT_FALSE(VaultKey::load(tmp_.path()));
  EXPECT_FALSE(VaultKey::load(tmp_.path() / "missing"));
}

TEST_F(PostgresVault, TheCommandImportsListsAndRemovesWithoutShowingASecret) {
  const fs::path key = tmp_.path() / "vault.key";
  write_key(key, std::string(64, 'b'), 0600);
  const fs::path doc = tmp_.path() / "credentials.json";
  std::ofstream(doc) << R"({"notion": {"auth": {"mode": "self_hosted", "credentials": {"api_token": ")"
                     << kSecret << R"("}, "hosts": ["https://api.notion.com/"]}}})";
  const auto db = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "db");
    args.insert(args.begin() + 1, "credentials");
    args.insert(args.end(), {"--tenant", tenant_, "--database", url_});
    return skillbox::testing::run_cli(args);
  };
  const CliExec imported = db({"import", doc.string(), "--vault-key-file", key.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_NE(imported.out.find("stored the credentials of notion for tenant " + tenant_), std::string::npos)
      << imported.out;
  const CliExec listed = db({"list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out.substr(0, 7), "notion\t") << listed.out;
  auto opened = make_pg_credential_vault(Pool::create(url_), tenant_, *VaultKey::load(key))->find("notion");
  ASSERT_TRUE(opened && opened->has_value());
  EXPECT_EQ((*opened)->auth->credentials.at("api_token"), kSecret);
  for (const CliExec& r : {imported, listed}) {
    EXPECT_EQ(r.out.find(kSecret), std::string::npos);
    EXPECT_EQ(r.err.find(kSecret), std::string::npos);
  }
  EXPECT_EQ(db({"rm", "notion"}).exit_code, 0);
  EXPECT_EQ(db({"rm", "notion"}).exit_code, 1) << "gone";

  // A document with a mistake: exit 2, naming the key path, never the value.
  std::ofstream(doc) << R"({"notion": {"auth": {"mode": "self_hosted", "credentials": {"api_token": ")"
                     << kSecret << R"("}, "hostz": []}}})";
  const CliExec bad = db({"import", doc.string(), "--vault-key-file", key.string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("hostz"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find(kSecret), std::string::npos) << bad.err;
  const CliExec no_key = db({"import", doc.string()});
  EXPECT_EQ(no_key.exit_code, 2);
  EXPECT_NE(no_key.err.find("--vault-key-file"), std::string::npos) << no_key.err;
}

}  // namespace
}  // namespace skillbox::pg
