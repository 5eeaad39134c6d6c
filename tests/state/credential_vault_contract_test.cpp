// The contract of state::CredentialVault (state/credential_vault.h) for every implementation.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pg/credential_vault.h"
#include "state/credential_vault.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

/// A vault holding `credentials` (however the backend stores them).
struct Backend {
  std::string name;
  std::function<std::shared_ptr<CredentialVault>(std::map<std::string, SkillCredentials>)> make;
};

class CredentialVaultContract : public ::testing::TestWithParam<Backend> {};

SkillCredentials secret(const std::string& token) {
  SkillCredentials c;
  c.oauth = OAuthCredential{};
  c.oauth->access_token = token;
  c.oauth->base_url = "https://api.example.com/v1";
  return c;
}

TEST_P(CredentialVaultContract, EachSkillGetsItsOwnEntryAndNoOneElses) {
  auto vault = GetParam().make({{"notion", secret("n-token")}, {"gmail", secret("g-token")}});
  auto notion = vault->find("notion");
  ASSERT_TRUE(notion);
  ASSERT_TRUE(notion->has_value());
  ASSERT_TRUE((*notion)->oauth.has_value());
  EXPECT_EQ((*notion)->oauth->access_token, "n-token");
  auto none = vault->find("weather");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  // Near misses are other ids, never a prefix match.
  for (const std::string& id :
       std::vector<std::string>{"notio", "notion ", "NOTION", std::string("notion\0x", 8), ""}) {
    auto found = vault->find(id);
    ASSERT_TRUE(found);
    EXPECT_FALSE(found->has_value()) << id;
  }
}

TEST_P(CredentialVaultContract, ManyThreadsReadAtOnce) {
  auto vault = GetParam().make({{"notion", secret("n-token")}});
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (size_t t = 0; t < ok.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        auto found = vault->find("notion");
        if (found && found->has_value() && (*found)->oauth && (*found)->oauth->access_token == "n-token")
          ++ok[t];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int n : ok) EXPECT_EQ(n, 200);
}

INSTANTIATE_TEST_SUITE_P(Memory, CredentialVaultContract,
                         ::testing::Values(Backend{"memory", make_memory_credential_vault}),
                         [](const auto& param_info) { return param_info.param.name; });

/// A vault of a tenant of its own on the test cluster, sealed with a fixed test key.
std::shared_ptr<CredentialVault> postgres_vault(std::map<std::string, SkillCredentials> credentials) {
  const std::string url = skillbox::testing::migrated_postgres_url();
  if (url.empty()) {
    ADD_FAILURE() << skillbox::testing::postgres_missing();
    return make_memory_credential_vault({});
  }
  static int made = 0;
  const std::string tenant = skillbox::testing::postgres_tenant_for("vault-" + std::to_string(++made));
  auto key = std::make_shared<const pg::VaultKey>(std::array<uint8_t, 32>{1, 2, 3});
  auto conn = pg::Connection::open(url, std::chrono::seconds(5), std::chrono::milliseconds(1000));
  EXPECT_TRUE(conn) << (conn ? "" : conn.error().message);
  for (const auto& [skill, c] : credentials) {
    if (conn) {
      auto put = pg::put_credentials(*conn, *key, tenant, skill, c);
      EXPECT_TRUE(put) << (put ? "" : put.error().message);
    }
  }
  return pg::make_pg_credential_vault(pg::Pool::create(url), tenant, key);
}

INSTANTIATE_TEST_SUITE_P(Postgres, CredentialVaultContract,
                         ::testing::Values(Backend{"postgres", postgres_vault}),
                         [](const auto& param_info) { return param_info.param.name; });

}  // namespace
}  // namespace skillbox::state
