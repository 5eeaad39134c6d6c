// The SQLite store across processes: acknowledged writes survive SIGKILL, parallel writers lose nothing
// and cannot jointly pass a quota. Each test forks real child processes that use their own connection.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "skillbox/store.h"
#include "state/child_process.h"

namespace skillbox {
namespace {

using testing::Child;
using testing::patient;
using testing::ReadyChild;

using testing::TempDir;

// Generous: the CI machine is small and shared; a wait this long only happens when something is wrong.
constexpr int kWaitMs = 120'000;

// Reads exactly `n` bytes, waiting at most kWaitMs. Returns bytes read (less at EOF or timeout).
size_t read_full(int fd, void* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, kWaitMs) <= 0) break;
    const ssize_t r = ::read(fd, static_cast<char*>(buf) + got, n - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

void write_u32(int fd, uint32_t v) {
  if (::write(fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) ::_exit(98);
}

// Blocks a child until the parent closes the write end of `gate`, so all children start together.
void wait_gate(int gate_read_fd) {
  char c = 0;
  (void)::read(gate_read_fd, &c, 1);
}

class SqliteStoreDurabilityTest : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return StoreDatabase::path_in(dir_.path() / "data"); }
  TempDir dir_;
};

TEST_F(SqliteStoreDurabilityTest, SetThatReturnedSurvivesSigkill) {
  const auto path = file();
  ReadyChild child([&](const std::function<void()>& ready) {
    auto db = StoreDatabase::open(path, patient());  // creates the database, too
    if (!db) return 2;
    auto s = db->skill("crash", {});
    if (!s) return 3;
    if (!s->set("greeting", R"({"text":"survives"})")) return 4;
    ready();             // set() returned: acknowledged
    for (;;) ::pause();  // wait to be killed; never close or checkpoint
  });
  ASSERT_TRUE(child.wait_ready()) << "the child never acknowledged its set";
  child.kill();
  EXPECT_EQ(child.wait(), 1000 + SIGKILL);

  auto db = StoreDatabase::open(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto s = db->skill("crash", {});
  ASSERT_TRUE(s.ok());
  auto v = s->get("greeting");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, std::optional<std::string>(R"({"text":"survives"})"));
  EXPECT_TRUE(db->check().ok());
}

TEST_F(SqliteStoreDurabilityTest, EveryAcknowledgedSetSurvivesSigkillMidStream) {
  int ack[2];
  ASSERT_EQ(::pipe(ack), 0);
  const auto path = file();
  Child child([&] {
    ::close(ack[0]);
    auto db = StoreDatabase::open(path, patient());
    if (!db) return 2;
    auto s = db->skill("stream", {});
    if (!s) return 3;
    for (uint32_t i = 0; i < 1'000'000; ++i) {
      // Overwrites of one key and new keys, so the kill can land inside either kind of transaction.
      if (!s->set("n" + std::to_string(i), std::to_string(i))) return 4;
      if (!s->set("last", std::to_string(i))) return 5;
      write_u32(ack[1], i);
    }
    return 6;
  });
  ASSERT_TRUE(child.started());
  ::close(ack[1]);
  uint32_t last = 0;
  for (int n = 0; n < 40; ++n)
    ASSERT_EQ(read_full(ack[0], &last, sizeof last), sizeof last) << "the child stopped acknowledging";
  child.kill();  // while it keeps writing
  EXPECT_EQ(child.wait(), 1000 + SIGKILL);
  // Acks already in the pipe were sent after their set returned: they count too.
  uint32_t more = 0;
  while (read_full(ack[0], &more, sizeof more) == sizeof more) last = more;
  ::close(ack[0]);

  auto db = StoreDatabase::open(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_TRUE(db->check().ok());
  auto s = db->skill("stream", {});
  ASSERT_TRUE(s.ok());
  for (uint32_t i = 0; i <= last; ++i) {
    auto v = s->get("n" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << v.error().message;
    ASSERT_EQ(*v, std::optional<std::string>(std::to_string(i))) << "acknowledged key n" << i << " lost";
  }
  auto l = s->get("last");
  ASSERT_TRUE(l.ok() && l->has_value());
  EXPECT_GE(std::stoul(**l), last);
  // Whatever the killed transaction was doing, the usage counters agree with the rows.
  auto keys = s->keys();
  auto usage = s->usage();
  ASSERT_TRUE(keys.ok() && usage.ok());
  EXPECT_EQ(usage->keys, keys->size());
}

TEST_F(SqliteStoreDurabilityTest, ParallelWritersLoseNothing) {
  constexpr int kWriters = 4;
  constexpr int kOwnKeys = 120;
  constexpr int kShared = 40;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  const auto path = file();  // does not exist yet: the writers race to create it
  std::vector<Child> children;
  children.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    children.emplace_back([&, w] {
      ::close(gate[1]);
      wait_gate(gate[0]);
      auto db = StoreDatabase::open(path, patient());
      if (!db) return 10 + static_cast<int>(db.error().code);
      auto s = db->skill("parallel", {});
      if (!s) return 3;
      for (int j = 0; j < kOwnKeys; ++j) {
        const std::string key = "w" + std::to_string(w) + "/" + std::to_string(j);
        const std::string value = R"({"writer":)" + std::to_string(w) + R"(,"n":)" + std::to_string(j) + "}";
        if (auto r = s->set(key, value); !r) return 20 + static_cast<int>(r.error().code);
        auto back = s->get(key);  // a reader in the middle of other writers sees a whole database
        if (!back || *back != std::optional<std::string>(value)) return 4;
        if (j < kShared) {
          if (auto r = s->set("shared", std::to_string(w * 1000 + j)); !r)
            return 30 + static_cast<int>(r.error().code);
        }
      }
      return 0;
    });
    ASSERT_TRUE(children.back().started());
  }
  ::close(gate[0]);
  ::close(gate[1]);  // go
  for (Child& c : children) EXPECT_EQ(c.wait(), 0);

  auto db = StoreDatabase::open(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  auto check = db->check();
  EXPECT_TRUE(check.ok()) << check.error().message;
  auto s = db->skill("parallel", {});
  ASSERT_TRUE(s.ok());
  auto keys = s->keys();
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->size(), static_cast<size_t>(kWriters * kOwnKeys + 1));
  uint64_t expected_bytes = 0;
  for (int w = 0; w < kWriters; ++w) {
    for (int j = 0; j < kOwnKeys; ++j) {
      const std::string key = "w" + std::to_string(w) + "/" + std::to_string(j);
      const std::string value = R"({"writer":)" + std::to_string(w) + R"(,"n":)" + std::to_string(j) + "}";
      auto v = s->get(key);
      ASSERT_TRUE(v.ok());
      ASSERT_EQ(*v, std::optional<std::string>(value)) << key;
      expected_bytes += key.size() + value.size() + kStoreEntryOverheadBytes;
    }
  }
  auto shared = s->get("shared");
  ASSERT_TRUE(shared.ok() && shared->has_value());
  const int last = std::stoi(**shared);
  EXPECT_EQ(last % 1000, kShared - 1) << "the final shared value is some writer's last write";
  expected_bytes += 6 + (*shared)->size() + kStoreEntryOverheadBytes;
  auto usage = s->usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->keys, keys->size());
  EXPECT_EQ(usage->bytes, expected_bytes);
}

TEST_F(SqliteStoreDurabilityTest, ParallelWritersCannotJointlyPassAQuota) {
  constexpr int kWriters = 4;
  constexpr int kTries = 30;
  StorePolicy keys_policy;
  keys_policy.max_keys = 50;
  // Every entry below costs 2 (key) + 1 (value) + overhead; 40 of them fit the byte quota exactly.
  StorePolicy bytes_policy;
  bytes_policy.quota_bytes = 40 * (2 + 1 + kStoreEntryOverheadBytes);
  {
    auto db = StoreDatabase::open(file());  // created up front this time
    ASSERT_TRUE(db.ok());
  }
  int gate[2];
  int results[2];
  ASSERT_EQ(::pipe(gate), 0);
  ASSERT_EQ(::pipe(results), 0);
  const auto path = file();
  std::vector<Child> children;
  children.reserve(kWriters);
  for (int w = 0; w < kWriters; ++w) {
    children.emplace_back([&, w] {
      ::close(gate[1]);
      ::close(results[0]);
      wait_gate(gate[0]);
      auto db = StoreDatabase::open(path, patient());
      if (!db) return 200;
      auto by_keys = db->skill("by-keys", keys_policy);
      auto by_bytes = db->skill("by-bytes", bytes_policy);
      if (!by_keys || !by_bytes) return 201;
      uint32_t stored_keys = 0;
      uint32_t stored_bytes = 0;
      for (int j = 0; j < kTries; ++j) {
        // Two-character keys, unique per writer: "a0".."d9" style (writer letter + one of 30 symbols).
        const std::string key = std::string(1, static_cast<char>('a' + w)) + static_cast<char>('0' + j);
        auto r1 = by_keys->set(key, "1");
        if (!r1 && r1.error().code != StoreErrc::quota_exceeded) return 202;
        auto r2 = by_bytes->set(key, "1");
        if (!r2 && r2.error().code != StoreErrc::quota_exceeded) return 203;
        stored_keys += r1 ? 1 : 0;
        stored_bytes += r2 ? 1 : 0;
      }
      // What each writer was told succeeded; 8 bytes is below PIPE_BUF, so reports never interleave.
      const uint32_t report[2] = {stored_keys, stored_bytes};
      if (::write(results[1], report, sizeof report) != static_cast<ssize_t>(sizeof report)) return 204;
      return 0;
    });
    ASSERT_TRUE(children.back().started());
  }
  ::close(gate[0]);
  ::close(gate[1]);
  ::close(results[1]);
  uint32_t told_keys = 0;
  uint32_t told_bytes = 0;
  uint32_t report[2];
  while (read_full(results[0], report, sizeof report) == sizeof report) {
    told_keys += report[0];
    told_bytes += report[1];
  }
  ::close(results[0]);
  for (Child& c : children) EXPECT_EQ(c.wait(), 0);
  EXPECT_EQ(told_keys, 50u);
  EXPECT_EQ(told_bytes, 40u);

  auto db = StoreDatabase::open(path);
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE(db->check().ok());
  auto by_keys = db->skill("by-keys", keys_policy);
  auto by_bytes = db->skill("by-bytes", bytes_policy);
  ASSERT_TRUE(by_keys.ok() && by_bytes.ok());
  auto k1 = by_keys->keys();
  auto k2 = by_bytes->keys();
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(k1->size(), 50u) << "120 attempts, quota 50: exactly 50 stored";
  EXPECT_EQ(k2->size(), 40u) << "120 attempts, byte quota for 40: exactly 40 stored";
  auto u2 = by_bytes->usage();
  ASSERT_TRUE(u2.ok());
  EXPECT_EQ(u2->bytes, bytes_policy.quota_bytes);
}

}  // namespace
}  // namespace skillbox
