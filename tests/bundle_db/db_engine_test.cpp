// The bundle database engine (bundle_db/db_engine.h) on its own: an in-memory image whose
// changes come back only when there are some, the functions and schema objects it refuses, and the
// memory and temporary storage a statement may use — counted in the invocation's budget, never on disk.
#include "bundle_db/db_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace skillbox::bundle_db {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

bus::DbRequest sql(std::string text, bus::DbOp op = bus::DbOp::get) {
  return bus::DbRequest{op, std::move(text), "[]"};
}

/// The error of a reply (name of its code), or "" when it succeeded.
std::string error_of(const bus::Reply& r) {
  if (const auto* e = std::get_if<bus::ErrorReply>(&r))
    return std::string(bus::error_name(e->code)) + ": " + e->message;
  return "";
}

json value_of(const bus::Reply& r) {
  const auto* v = std::get_if<bus::OptionalStringReply>(&r);
  if (v == nullptr || !v->value) {
    ADD_FAILURE() << error_of(r);
    return nullptr;
  }
  return json::parse(*v->value);
}

constexpr uint64_t kMiB = 1024 * 1024;

TEST(DbEngine, ChangesComeBackOnlyWhenThereAreSome) {
  bus::Bytes image;
  {
    DbEngine db({}, DbSettings{kMiB, 32 * kMiB}, bus::StopToken::never());
    EXPECT_EQ(error_of(db.handle(sql("CREATE TABLE t (v TEXT)", bus::DbOp::exec))), "");
    EXPECT_EQ(error_of(db.handle(sql("INSERT INTO t VALUES ('kept')", bus::DbOp::exec))), "");
    std::optional<bus::Bytes> out = db.finish();
    ASSERT_TRUE(out);
    ASSERT_GE(out->size(), 16u);
    EXPECT_EQ(std::string(out->begin(), out->begin() + 15), "SQLite format 3") << "a db.sqlite file's bytes";
    image = *out;
  }
  {
    DbEngine db(image, DbSettings{kMiB, 32 * kMiB}, bus::StopToken::never());
    EXPECT_EQ(value_of(db.handle(sql("SELECT v FROM t")))["v"], "kept");
    EXPECT_FALSE(db.finish()) << "reading changes nothing";
  }
  {
    DbEngine db(image, DbSettings{kMiB, 32 * kMiB}, bus::StopToken::never());
    EXPECT_EQ(error_of(db.handle(sql("BEGIN", bus::DbOp::exec))), "");
    EXPECT_EQ(error_of(db.handle(sql("DELETE FROM t", bus::DbOp::exec))), "");
    EXPECT_FALSE(db.finish()) << "a transaction still open at the end is rolled back";
  }
}

TEST(DbEngine, Fts3TokenizerIsRefusedInBothForms) {
  DbEngine db({}, DbSettings{kMiB, 32 * kMiB}, bus::StopToken::never());
  // One argument returned a pointer into libsqlite3 (an ASLR leak); two install a tokenizer from a
  // pointer the caller gives.
  const std::string one = error_of(db.handle(sql("SELECT hex(fts3_tokenizer('simple')) AS h")));
  EXPECT_EQ(one.rfind("PermissionDenied", 0), 0u) << one;
  EXPECT_NE(one.find("fts3_tokenizer() is not allowed"), std::string::npos) << one;
  const std::string two =
      error_of(db.handle(sql("SELECT fts3_tokenizer('simple', x'0000000000000000') AS h")));
  EXPECT_EQ(two.rfind("PermissionDenied", 0), 0u) << two;
  for (const char* f : {"SELECT rtreenode(2, x'00') AS r", "SELECT load_extension('/tmp/x.so') AS r"}) {
    const std::string e = error_of(db.handle(sql(f)));
    EXPECT_EQ(e.rfind("PermissionDenied", 0), 0u) << f << ": " << e;
  }
}

TEST(DbEngine, TempSchemaObjectsAreRefused) {
  DbEngine db({}, DbSettings{kMiB, 32 * kMiB}, bus::StopToken::never());
  for (const char* s : {"CREATE TEMP TABLE t (x)", "CREATE TABLE temp.t (x)",
                        "CREATE TEMP VIEW v AS SELECT 1", "CREATE TEMPORARY TABLE t2 AS SELECT 1 AS x"}) {
    const std::string e = error_of(db.handle(sql(s, bus::DbOp::exec)));
    EXPECT_EQ(e.rfind("PermissionDenied", 0), 0u) << s << ": " << e;
  }
  EXPECT_EQ(error_of(db.handle(sql("CREATE TABLE t (x)", bus::DbOp::exec))), "");
}

TEST(DbEngine, TemporaryStorageStaysInMemoryWithinTheBudget) {
  bus::MemoryBudget budget(16 * kMiB);
  bus::StopToken stop(Clock::now() + std::chrono::seconds(20));
  DbEngine db({}, DbSettings{kMiB, 16 * kMiB}, stop, &budget);
  // A sort larger than SQLite's cache spills to "temporary files": in memory, and it works.
  const json sorted = value_of(db.handle(
      sql("SELECT count(*) AS n FROM (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r LIMIT "
          "60000) SELECT randomblob(64) AS b FROM r ORDER BY b)")));
  EXPECT_EQ(sorted["n"], 60000);
  // A UNION recursion that never ends grows its ephemeral table until the memory limit, not the disk.
  const auto start = Clock::now();
  const std::string grown = error_of(db.handle(
      sql("WITH RECURSIVE r(x) AS (SELECT 1 UNION SELECT x + 1 FROM r) SELECT count(*) AS n FROM r")));
  EXPECT_EQ(grown.rfind("PayloadTooLarge", 0), 0u) << grown;
  EXPECT_NE(grown.find("limits.memory_mb"), std::string::npos) << grown;
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_LE(budget.host_peak_bytes(), 16 * kMiB);
  // And the connection is still usable afterwards.
  EXPECT_EQ(value_of(db.handle(sql("SELECT 1 AS one")))["one"], 1);
}

TEST(DbEngine, LargeResultsAreCountedAndCapped) {
  bus::MemoryBudget budget(64 * kMiB);
  DbEngine db({}, DbSettings{kMiB, 64 * kMiB}, bus::StopToken::never(), &budget);
  // A value may be at most an eighth of the memory limit (SQLITE_LIMIT_LENGTH).
  const std::string too_big = error_of(db.handle(sql("SELECT zeroblob(9000000) AS b")));
  EXPECT_EQ(too_big.rfind("PayloadTooLarge", 0), 0u) << too_big;
  // 6 MB of random bytes is about 21 MB as JSON text: past the 16 MiB result cap.
  const std::string result = error_of(db.handle(sql("SELECT randomblob(6000000) AS b")));
  EXPECT_EQ(result.rfind("PayloadTooLarge", 0), 0u) << result;
  EXPECT_LT(budget.host_peak_bytes(), 40 * kMiB);
  // A large plain value that fits is not refused on an estimate: 3 MB of text is 3 MB of JSON.
  const json text = value_of(db.handle(sql("SELECT printf('%.*c', 3000000, 'x') AS s")));
  EXPECT_EQ(text["s"].get<std::string>().size(), 3000000u);
  // A blob that fits comes back as byte values, counted while the reply exists.
  const bus::Reply small = db.handle(sql("SELECT x'00ff10' AS b"));
  EXPECT_EQ(value_of(small)["b"], json::array({0, 255, 16}));
  EXPECT_GT(budget.host_bytes(), 0u);
}

TEST(DbEngine, AFullDatabaseIsQuotaExceeded) {
  DbEngine db({}, DbSettings{64 * 1024, 32 * kMiB}, bus::StopToken::never());
  EXPECT_EQ(error_of(db.handle(sql("CREATE TABLE t (b BLOB)", bus::DbOp::exec))), "");
  std::string e;
  for (int i = 0; i < 40 && e.empty(); ++i)
    e = error_of(db.handle(sql("INSERT INTO t VALUES (zeroblob(8000))", bus::DbOp::exec)));
  EXPECT_EQ(e.rfind("QuotaExceeded", 0), 0u) << e;
  const std::optional<bus::Bytes> image = db.finish();
  ASSERT_TRUE(image);
  EXPECT_LE(image->size(), 64u * 1024);
}

TEST(DbEngine, AStatementStopsAtTheDeadline) {
  bus::StopToken stop(Clock::now() + std::chrono::milliseconds(200));
  DbEngine db({}, DbSettings{kMiB, 64 * kMiB}, stop);
  const auto start = Clock::now();
  const std::string e = error_of(db.handle(sql(
      "SELECT length(replace(printf('%.*c', 4000000, 'a'), printf('%.*c', 500000, 'a')||'b', 'x')) AS n")));
  EXPECT_EQ(e.rfind("Timeout", 0), 0u) << e;
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(250));
}

}  // namespace
}  // namespace skillbox::bundle_db
