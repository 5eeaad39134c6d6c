// pg/workspace_backend.h beyond the workspace contract (tests/state/workspace_contract_test.cpp, which it
// passes): rows that were changed behind the backend's back are refused with what was wrong, and the
// next write of the file repairs it.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "capabilities/store/store_test_util.h"
#include "pg/connection.h"
#include "pg/pool.h"
#include "pg/workspace_backend.h"
#include "support/postgres_test_db.h"

namespace skillbox::pg {
namespace {

using state::WorkspaceErrc;

bus::Bytes bytes_of(const std::string& s) {
  return bus::Bytes(s.begin(), s.end());
}

TEST(PostgresWorkspace, ADamagedRowIsRefusedWithWhatWasWrongAndAWriteRepairsIt) {
  const std::string url = skillbox::testing::migrated_postgres_url();
  ASSERT_FALSE(url.empty()) << skillbox::testing::postgres_missing();
  skillbox::testing::TempDir tmp;
  const std::string tenant = skillbox::testing::postgres_tenant_for(tmp.path());
  auto backend = make_pg_workspace_backend(Pool::create(url), tenant);
  auto s = backend->open("damaged", true, bus::StopToken::never());
  ASSERT_TRUE(s);
  const state::WorkspaceQuota roomy{1u << 20, 100, 1u << 20};
  ASSERT_TRUE((*s)->write_file("f", bytes_of("hello"), false, roomy));

  // Another program changes the row's size: the data no longer has the size the row claims.
  auto c = Connection::open(url, std::chrono::seconds(5), std::chrono::milliseconds(1000));
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto changed =
      c->exec("damaging a row",
              "UPDATE workspace_entries SET size = 999 WHERE tenant = $1 AND skill = 'damaged'", {tenant});
  ASSERT_TRUE(changed.ok()) << changed.error().message;
  ASSERT_EQ(changed->affected, 1u);

  bus::Bytes out;
  auto read = (*s)->read_file(
      "f", [](uint64_t) { return true; }, out);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, WorkspaceErrc::io);
  EXPECT_NE(read.error().detail.find("a file's data in the database is not what this backend wrote"),
            std::string::npos)
      << read.error().detail;
  EXPECT_TRUE(out.empty());

  // A write replaces the data and its size together.
  ASSERT_TRUE((*s)->write_file("f", bytes_of("again"), false, roomy));
  auto again = (*s)->read_file(
      "f", [](uint64_t) { return true; }, out);
  ASSERT_TRUE(again);
  EXPECT_EQ(std::string(out.begin(), out.end()), "again");
}

}  // namespace
}  // namespace skillbox::pg
