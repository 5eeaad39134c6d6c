// pg/db_backend.h beyond the bundle database contract (tests/state/db_contract_test.cpp, which it
// passes): a holder whose lease was lost (its session ended: a replica cut off) can no longer write,
// and the next holder's image stands; a damaged row is refused and left as it is; an unchanged image
// is not written again.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <string>

#include "capabilities/store/store_test_util.h"
#include "pg/connection.h"
#include "pg/db_backend.h"
#include "pg/pool.h"
#include "support/postgres_test_db.h"

namespace skillbox::pg {
namespace {

constexpr uint64_t kMax = 64u << 20;

/// A real, small SQLite image whose user_version is `tag`.
bus::Bytes image_tagged(int tag) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  const std::string sql = "CREATE TABLE t(x); PRAGMA user_version = " + std::to_string(tag);
  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_int64 size = 0;
  unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
  bus::Bytes out(data, data + size);
  sqlite3_free(data);
  sqlite3_close(db);
  return out;
}

/// One statement on a connection of its own ("another program").
PgResult<Rows> sql(const std::string& url, const std::string& text, std::initializer_list<Param> params) {
  auto c = Connection::open(url, std::chrono::seconds(5), std::chrono::milliseconds(1000));
  if (!c) return c.error();
  return c->exec("a test's statement", text, params);
}

class PostgresBundleDb : public ::testing::Test {
 protected:
  void SetUp() override {
    url_ = skillbox::testing::migrated_postgres_url();
    ASSERT_FALSE(url_.empty()) << skillbox::testing::postgres_missing();
    tenant_ = skillbox::testing::postgres_tenant_for(tmp_.path());
    backend_ = make_pg_db_backend(Pool::create(url_), tenant_);
  }
  std::unique_ptr<state::DbLease> lease() {
    bus::StopToken stop(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    auto l = backend_->acquire("bundle", stop);
    EXPECT_TRUE(l) << (l ? "" : l.error().message);
    return l ? std::move(*l) : nullptr;
  }
  long fence() {
    auto r =
        sql(url_, "SELECT fence FROM bundle_databases WHERE tenant = $1 AND skill = 'bundle'", {tenant_});
    return r && !r->empty() && r->at(0, 0) ? std::stol(*r->at(0, 0)) : -1;
  }

  skillbox::testing::TempDir tmp_;
  std::string url_;
  std::string tenant_;
  std::shared_ptr<state::DbBackend> backend_;
};

TEST_F(PostgresBundleDb, AHolderWhoseSessionEndedCannotWriteAndTheNextHoldersImageStands) {
  auto stale = lease();
  ASSERT_TRUE(stale);
  const long stale_fence = fence();
  ASSERT_GT(stale_fence, 0);
  // The holder's session is ended by the server (as when a replica is cut off and PostgreSQL drops its
  // connection): its advisory lock goes with it.
  auto ended = sql(url_,
                   "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND "
                   "objid = (hashtextextended($1 || '/bundle', 1399538296) & 4294967295)::oid",
                   {tenant_});
  ASSERT_TRUE(ended) << ended.error().message;
  ASSERT_EQ(ended->rows.size(), 1u) << "exactly the holder's session";

  auto next = lease();
  ASSERT_TRUE(next) << "the lease is free once the session ended";
  EXPECT_EQ(fence(), stale_fence + 1) << "a new fencing token for the new holder";
  ASSERT_TRUE(next->replace_image(image_tagged(2)));

  auto late = stale->replace_image(image_tagged(1));
  ASSERT_FALSE(late) << "a late write of the stale holder";
  EXPECT_EQ(late.error().code, bus::ErrorCode::IoError);
  auto read = next->read_image(kMax);
  ASSERT_TRUE(read);
  EXPECT_EQ(*read, image_tagged(2));
  stale.reset();
  next.reset();
}

TEST_F(PostgresBundleDb, AWriteWithAStaleFencingTokenIsRefused) {
  auto held = lease();
  ASSERT_TRUE(held);
  ASSERT_TRUE(held->replace_image(image_tagged(1)));
  // The row's fence moves on behind the holder's back (a lease granted elsewhere after this one was
  // lost): the holder's token is stale, and what it writes is refused.
  auto moved =
      sql(url_, "UPDATE bundle_databases SET fence = fence + 1 WHERE tenant = $1 AND skill = 'bundle'",
          {tenant_});
  ASSERT_TRUE(moved && moved->affected == 1u);
  auto write = held->replace_image(image_tagged(2));
  ASSERT_FALSE(write);
  EXPECT_EQ(write.error().code, bus::ErrorCode::IoError);
  EXPECT_NE(write.error().message.find("lease on the skill's database was lost"), std::string::npos)
      << write.error().message;
  auto read = held->read_image(kMax);
  ASSERT_FALSE(read) << "nor does it read";
  held.reset();
  auto again = lease();
  ASSERT_TRUE(again);
  auto image = again->read_image(kMax);
  ASSERT_TRUE(image);
  EXPECT_EQ(*image, image_tagged(1)) << "the refused write changed nothing";
}

TEST_F(PostgresBundleDb, ADamagedRowIsRefusedAndLeftAsItIs) {
  ASSERT_TRUE(lease()->replace_image(image_tagged(1)));
  auto damaged =
      sql(url_,
          "UPDATE bundle_databases SET image = '\\x6a756e6b'::bytea, size = 4 WHERE tenant = $1 AND "
          "skill = 'bundle'",
          {tenant_});
  ASSERT_TRUE(damaged && damaged->affected == 1u);
  auto l = lease();
  ASSERT_TRUE(l);
  auto read = l->read_image(kMax);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, bus::ErrorCode::IoError);
  EXPECT_NE(read.error().message.find("is damaged"), std::string::npos) << read.error().message;
  l.reset();
  auto row =
      sql(url_, "SELECT image FROM bundle_databases WHERE tenant = $1 AND skill = 'bundle'", {tenant_});
  ASSERT_TRUE(row && !row->empty());
  EXPECT_EQ(row->at(0, 0), "\\x6a756e6b") << "left as it is";
}

TEST_F(PostgresBundleDb, AnUnchangedImageIsNotWrittenAgain) {
  ASSERT_TRUE(lease()->replace_image(image_tagged(1)));
  auto before =
      sql(url_, "SELECT updated_at FROM bundle_databases WHERE tenant = $1 AND skill = 'bundle'", {tenant_});
  ASSERT_TRUE(before && !before->empty());
  ASSERT_TRUE(lease()->replace_image(image_tagged(1)));
  auto after =
      sql(url_, "SELECT updated_at FROM bundle_databases WHERE tenant = $1 AND skill = 'bundle'", {tenant_});
  ASSERT_TRUE(after && !after->empty());
  EXPECT_EQ(before->at(0, 0), after->at(0, 0));
}

}  // namespace
}  // namespace skillbox::pg
