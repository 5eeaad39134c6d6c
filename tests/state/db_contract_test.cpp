// The contract every state::DbBackend keeps (state/db_backend.h): the lease excludes other holders
// (threads and processes) and ends at the stop token; an image is replaced whole or not at all, also
// when the writer is SIGKILLed or the disk refuses it; a damaged image is reported and left alone.
//
// A second backend registers with one INSTANTIATE_TEST_SUITE_P line at the bottom.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bus/stop_token.h"
#include "capabilities/store/store_test_util.h"
#include "pg/db_backend.h"
#include "state/child_process.h"
#include "state/data_layout.h"
#include "state/db_backend.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;
using Clock = bus::StopToken::Clock;

struct DbBackendKind {
  std::string name;
  // A backend whose storage is `scratch` (fresh for each test); the same folder reaches the same
  // storage again, also in a forked child.
  std::function<std::shared_ptr<DbBackend>(const fs::path& scratch)> make;
  bool local_files = false;  // images are files under `scratch` (DataLayout)
};

constexpr uint64_t kMax = 64u << 20;

/// A real database image whose table `t` holds `rows` rows of `pad` bytes each, with `tag` in row 1.
bus::Bytes make_image(int tag, int rows = 1, int pad = 10) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE t(tag INTEGER, pad BLOB)", nullptr, nullptr, nullptr);
  for (int i = 0; i < rows; ++i) {
    const std::string sql =
        "INSERT INTO t VALUES(" + std::to_string(tag) + ", zeroblob(" + std::to_string(pad) + "))";
    sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  }
  sqlite3_int64 size = 0;
  unsigned char* data = sqlite3_serialize(db, "main", &size, 0);
  bus::Bytes out(data, data + size);
  sqlite3_free(data);
  sqlite3_close(db);
  return out;
}

/// The tag of an image made by make_image (-1 when it is not one).
int tag_of(const bus::Bytes& image) {
  if (image.empty()) return 0;
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(image.size()));
  std::memcpy(copy, image.data(), image.size());
  int tag = -1;
  if (sqlite3_deserialize(db, "main", copy, static_cast<sqlite3_int64>(image.size()),
                          static_cast<sqlite3_int64>(image.size()),
                          SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT tag FROM t LIMIT 1", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      tag = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return tag;
}

class DbContract : public ::testing::TestWithParam<DbBackendKind> {
 protected:
  void SetUp() override { backend_ = GetParam().make(scratch_); }

  std::unique_ptr<DbLease> lease(const bus::StopToken& stop = bus::StopToken::never()) {
    auto l = backend_->acquire("bundle", stop);
    EXPECT_TRUE(l) << (l ? "" : l.error().message);
    return l ? std::move(*l) : nullptr;
  }
  bus::Bytes image() {
    auto l = lease();
    if (!l) return {};
    auto read = l->read_image(kMax);
    EXPECT_TRUE(read) << (read ? "" : read.error().message);
    return read ? std::move(*read) : bus::Bytes{};
  }

  testing::TempDir dir_;
  fs::path scratch_ = dir_.path();
  std::shared_ptr<DbBackend> backend_;
};

TEST_P(DbContract, ANewDatabaseIsEmptyAndAReplacedOneReadsBack) {
  EXPECT_TRUE(image().empty());
  {
    auto l = lease();
    ASSERT_TRUE(l);
    ASSERT_TRUE(l->replace_image(make_image(7)));
    auto again = l->read_image(kMax);
    ASSERT_TRUE(again);
    EXPECT_EQ(tag_of(*again), 7) << "the holder reads what it stored";
  }
  EXPECT_EQ(tag_of(image()), 7);
  {
    auto l = lease();
    ASSERT_TRUE(l);
    ASSERT_TRUE(l->replace_image({}));  // the empty image: no database
  }
  EXPECT_TRUE(image().empty());
}

TEST_P(DbContract, ReadRefusesAnImageAboveTheCap) {
  {
    auto l = lease();
    ASSERT_TRUE(l);
    ASSERT_TRUE(l->replace_image(make_image(1, 50, 1000)));
  }
  auto l = lease();
  ASSERT_TRUE(l);
  auto read = l->read_image(4096);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, bus::ErrorCode::PayloadTooLarge);
  EXPECT_NE(read.error().message.find("4096"), std::string::npos) << read.error().message;
}

TEST_P(DbContract, RefusesAnInvalidSkillId) {
  for (const char* id : {"", "..", "a/b"}) {
    auto l = backend_->acquire(id, bus::StopToken::never());
    ASSERT_FALSE(l) << id;
    EXPECT_EQ(l.error().code, bus::ErrorCode::IoError);
  }
}

// ---- the lease -------------------------------------------------------------------------------------------

TEST_P(DbContract, TheLeaseExcludesOtherHoldersUntilTheirStopToken) {
  auto held = lease();
  ASSERT_TRUE(held);
  const auto started = Clock::now();
  bus::StopToken stop(started + std::chrono::milliseconds(150));
  std::thread other([&] {
    auto l = backend_->acquire("bundle", stop);
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error().code, bus::ErrorCode::Timeout);
  });
  other.join();
  EXPECT_GE(Clock::now() - started, std::chrono::milliseconds(150));
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
  EXPECT_TRUE(backend_->acquire("other-skill", bus::StopToken::never())) << "leases are per skill";
  held.reset();
  EXPECT_TRUE(lease()) << "released with its holder";
}

TEST_P(DbContract, ALeaseHeldByAKilledProcessIsReleased) {
  testing::ReadyChild holder([&](const std::function<void()>& ready) {
    auto l = GetParam().make(scratch_)->acquire("bundle", bus::StopToken::never());
    if (!l) return 2;
    ready();
    for (;;) pause();
  });
  ASSERT_TRUE(holder.wait_ready()) << "the child never took the lease";
  {
    bus::StopToken stop(Clock::now() + std::chrono::milliseconds(100));
    auto l = backend_->acquire("bundle", stop);
    ASSERT_FALSE(l);
    EXPECT_EQ(l.error().code, bus::ErrorCode::Timeout);
  }
  holder.kill();
  EXPECT_EQ(holder.wait(), 1000 + SIGKILL);
  bus::StopToken stop(Clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(backend_->acquire("bundle", stop));
}

// Read, increment, replace under the lease: no increment is lost, whether the writers are threads or
// processes.
TEST_P(DbContract, ConcurrentWritersAreSerialisedByTheLease) {
  ASSERT_TRUE(lease()->replace_image(make_image(0)));
  auto increment = [](DbBackend& backend, int times) {
    for (int i = 0; i < times; ++i) {
      auto l = backend.acquire("bundle", bus::StopToken::never());
      if (!l) return false;
      auto read = (*l)->read_image(kMax);
      if (!read) return false;
      if (!(*l)->replace_image(make_image(tag_of(*read) + 1))) return false;
    }
    return true;
  };
  std::vector<testing::Child> children;
  for (int c = 0; c < 2; ++c)
    children.emplace_back([&] { return increment(*GetParam().make(scratch_), 10) ? 0 : 1; });
  std::vector<std::thread> threads;
  std::atomic<int> failed{0};
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      if (!increment(*backend_, 10)) ++failed;
    });
  for (auto& t : threads) t.join();
  for (testing::Child& child : children) EXPECT_EQ(child.wait(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(tag_of(image()), 50);
}

// ---- durability
// --------------------------------------------------------------------------------------------

TEST_P(DbContract, ASigkilledWriterLeavesTheOldOrTheNewImage) {
  const bus::Bytes acked = make_image(1, 100, 1000);
  const bus::Bytes later = make_image(2, 3000, 1000);  // a few MB: the kill lands inside a write
  testing::ReadyChild writer([&](const std::function<void()>& ready) {
    auto backend = GetParam().make(scratch_);
    {
      auto l = backend->acquire("bundle", bus::StopToken::never());
      if (!l || !(*l)->replace_image(acked)) return 2;
    }
    ready();
    for (;;) {
      auto l = backend->acquire("bundle", bus::StopToken::never());
      if (l) (void)(*l)->replace_image(later);
    }
  });
  ASSERT_TRUE(writer.wait_ready()) << "the child's first image was not acknowledged";
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  writer.kill();
  EXPECT_EQ(writer.wait(), 1000 + SIGKILL);
  const bus::Bytes got = image();
  EXPECT_TRUE(got == acked || got == later) << got.size() << " bytes";
  if (GetParam().local_files) {
    EXPECT_FALSE(fs::exists(DataLayout(scratch_).skill_dir("bundle") / DataLayout::kBundleDbTemp))
        << "the next holder removes a crashed writer's temporary";
  }
}

TEST_P(DbContract, AnImageRefusedByTheDiskLeavesTheOldOne) {
  if (!GetParam().local_files) GTEST_SKIP() << "the file-size rlimit reaches only local files";
  ASSERT_TRUE(lease()->replace_image(make_image(5)));
  const bus::Bytes big = make_image(6, 200, 1000);
  testing::Child writer([&] {
    if (!testing::limit_file_size(16384)) return 4;
    auto l = GetParam().make(scratch_)->acquire("bundle", bus::StopToken::never());
    if (!l) return 3;
    auto r = (*l)->replace_image(big);
    if (r) return 1;
    return r.error().code == bus::ErrorCode::IoError &&
                   r.error().message.find("too large") != std::string::npos
               ? 0
               : 2;
  });
  EXPECT_EQ(writer.wait(), 0) << "1: the image was written past the limit; 2: not refused as too large";
  EXPECT_EQ(tag_of(image()), 5);
  EXPECT_FALSE(fs::exists(DataLayout(scratch_).skill_dir("bundle") / DataLayout::kBundleDbTemp));
}

// ---- damaged images --------------------------------------------------------------------------------------

TEST_P(DbContract, AnImageThatIsNotADatabaseIsNeverStored) {
  ASSERT_TRUE(lease()->replace_image(make_image(3)));
  auto l = lease();
  ASSERT_TRUE(l);
  const std::string junk = "this is not a database, just some bytes";
  auto r = l->replace_image(bus::Bytes(junk.begin(), junk.end()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, bus::ErrorCode::InvalidArgument);
  l.reset();
  EXPECT_EQ(tag_of(image()), 3);
}

TEST_P(DbContract, ADamagedFileIsReportedAndLeftAlone) {
  if (!GetParam().local_files) GTEST_SKIP() << "damages the backend's file";
  const fs::path file = DataLayout(scratch_).bundle_db("bundle");
  fs::create_directories(file.parent_path());
  const std::string junk(5000, 'j');
  std::ofstream(file, std::ios::binary) << junk;
  auto l = lease();
  ASSERT_TRUE(l);
  auto read = l->read_image(kMax);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, bus::ErrorCode::IoError);
  EXPECT_NE(read.error().message.find("not a SQLite database"), std::string::npos) << read.error().message;
  l.reset();
  EXPECT_EQ(testing::read_bytes(file), junk) << "left untouched";
}

// A backend whose every lease fails, saying how to get a test database.
class NoDatabase final : public DbBackend {
 public:
  Result<std::unique_ptr<DbLease>, bus::ErrorReply> acquire(std::string_view,
                                                            const bus::StopToken&) override {
    return bus::ErrorReply{bus::ErrorCode::IoError, skillbox::testing::postgres_missing()};
  }
};

// Each scratch folder is a tenant of its own in the shared test database (ctest's fixture `postgres`).
DbBackendKind postgres_kind() {
  return DbBackendKind{"postgres",
                       [](const fs::path& scratch) -> std::shared_ptr<DbBackend> {
                         const std::string url = skillbox::testing::migrated_postgres_url();
                         if (url.empty()) return std::make_shared<NoDatabase>();
                         return pg::make_pg_db_backend(pg::Pool::create(url),
                                                       skillbox::testing::postgres_tenant_for(scratch));
                       },
                       false};
}

std::string kind_name(const ::testing::TestParamInfo<DbBackendKind>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(
    Local, DbContract,
    ::testing::Values(DbBackendKind{
        "local", [](const fs::path& scratch) { return make_local_db_backend(DataLayout(scratch)); }, true}),
    kind_name);
INSTANTIATE_TEST_SUITE_P(Postgres, DbContract, ::testing::Values(postgres_kind()), kind_name);

}  // namespace
}  // namespace skillbox::state
