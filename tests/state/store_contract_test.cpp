// The contract of state::StoreBackend (state/store_backend.h), checked for every backend: key and value
// rules, quotas, isolation, atomic increment and compare-and-set under threads and processes, durability
// after SIGKILL, a write that fails on a full disk, missing and damaged storage.
//
// A backend registers with one INSTANTIATE_TEST_SUITE_P line at the bottom: a StoreBackendKind says how to
// reach a fresh storage from a scratch folder (again from another thread or a forked child) and, where it
// applies, how to damage the storage and how to make the disk refuse writes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "pg/pool.h"
#include "pg/store_backend.h"
#include "skillbox/store.h"
#include "state/child_process.h"
#include "state/data_layout.h"
#include "state/store_backend.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

using testing::Child;
using testing::patient;
using testing::ReadyChild;

namespace fs = std::filesystem;

/// How to test one kind of backend.
struct StoreBackendKind {
  const char* name;
  /// A backend over the storage in `root` (an empty folder at the start of each test). Every call with
  /// the same root reaches the same storage: from another thread, or from a forked child.
  std::function<std::shared_ptr<StoreBackend>(const fs::path& root)> make;
  /// Damages the storage in `root` as a bad disk or another program would; null when not applicable.
  std::function<void(const fs::path& root)> damage;
  /// Every byte of the storage in `root`, to check that refused storage was left untouched.
  std::function<std::string(const fs::path& root)> snapshot;
  /// Called in a forked child: from now on the storage's writes that need much more space fail as on
  /// a full disk. Null when the backend's disk is not this process's to limit.
  std::function<void(const fs::path& root)> fill_disk;
};

void PrintTo(const StoreBackendKind& k, std::ostream* os) {
  *os << k.name;
}

// ---- the local backend (SQLite in a data directory) -----------------------------------------------------

StoreBackendKind local_kind() {
  StoreBackendKind k;
  k.name = "local";
  k.make = [](const fs::path& root) { return make_local_store_backend(DataLayout(root)); };
  k.damage = [](const fs::path& root) {
    fs::create_directories(root);
    skillbox::testing::write_bytes(DataLayout(root).store_database(), std::string(8192, 'Z'));
  };
  k.snapshot = [](const fs::path& root) {
    return skillbox::testing::read_bytes(DataLayout(root).store_database());
  };
  // RLIMIT_FSIZE a little above the largest file in the data directory, SIGXFSZ ignored: a write that
  // extends a file past it fails with EFBIG, as one on a full disk fails with ENOSPC. Only the soft limit,
  // so the child can lift it again.
  k.fill_disk = [](const fs::path& root) {
    uintmax_t largest = 0;
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file()) largest = std::max(largest, e.file_size());
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = static_cast<rlim_t>(largest + 64 * 1024);
    ::setrlimit(RLIMIT_FSIZE, &limit);
  };
  return k;
}

// ---- the PostgreSQL backend (the test cluster of ctest's fixture `postgres`) ---------------------------

// A backend whose every open fails, saying how to get a test database.
class NoDatabase final : public StoreBackend {
 public:
  StoreResult<std::unique_ptr<StoreSession>> open_skill(std::string_view, const StorePolicy&,
                                                        const StoreOpenOptions&) override {
    return StoreError{StoreErrc::io_error, skillbox::testing::postgres_missing()};
  }
};

// Each root (each test's scratch folder) is a tenant of its own in the shared test database. There is
// no file to damage or disk to fill: those tests skip.
StoreBackendKind postgres_kind() {
  StoreBackendKind k;
  k.name = "postgres";
  k.make = [](const fs::path& root) -> std::shared_ptr<StoreBackend> {
    const std::string url = skillbox::testing::migrated_postgres_url();
    if (url.empty()) return std::make_shared<NoDatabase>();
    return pg::make_pg_store_backend(pg::Pool::create(url), skillbox::testing::postgres_tenant_for(root));
  };
  return k;
}

// ---- helpers ------------------------------------------------------------------------------------------

class StoreContract : public ::testing::TestWithParam<StoreBackendKind> {
 protected:
  fs::path root() const { return dir_.path() / "data"; }
  std::shared_ptr<StoreBackend> backend() const { return GetParam().make(root()); }

  /// A session of `skill` on a new backend object (a new connection), failing the test when it cannot
  /// be opened.
  std::unique_ptr<StoreSession> open(const std::string& skill = "notes",
                                     const StorePolicy& policy = {}) const {
    auto s = backend()->open_skill(skill, policy, patient());
    if (!s) {
      ADD_FAILURE() << "open_skill: " << s.error().message;
      return nullptr;
    }
    return std::move(*s);
  }

  skillbox::testing::TempDir dir_;
};

template <typename T>
StoreErrc code_of(const StoreResult<T>& r) {
  EXPECT_FALSE(r.ok()) << "expected an error";
  return r.ok() ? StoreErrc::io_error : r.error().code;
}

// ---- storage ------------------------------------------------------------------------------------------

TEST_P(StoreContract, MissingStorageIsCreatedOnFirstOpen) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(*s->get("a"), std::nullopt);
  ASSERT_TRUE(s->set("a", "1"));
  EXPECT_EQ(*open()->get("a"), "1") << "a second connection sees the write";
}

TEST_P(StoreContract, DamagedStorageIsRefusedAndLeftUntouched) {
  if (!GetParam().damage) GTEST_SKIP() << "no way to damage this backend's storage";
  GetParam().damage(root());
  const std::string before = GetParam().snapshot(root());
  auto s = backend()->open_skill("notes", {}, patient());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, StoreErrc::corrupt);
  EXPECT_NE(s.error().message.find("damaged"), std::string::npos) << s.error().message;
  EXPECT_EQ(s.error().message.find(dir_.path().string()), std::string::npos) << "no host path";
  EXPECT_EQ(GetParam().snapshot(root()), before);
}

TEST_P(StoreContract, InvalidSkillIdIsRefusedBeforeAnythingIsCreated) {
  for (const char* id : {"", "../escape", "UPPER", "a/b"}) {
    auto s = backend()->open_skill(id, {}, patient());
    EXPECT_EQ(code_of(s), StoreErrc::invalid_argument) << id;
  }
}

TEST_P(StoreContract, SkillsAreIsolated) {
  ASSERT_TRUE(open("alpha")->set("secret", "1"));
  auto beta = open("beta");
  EXPECT_EQ(*beta->get("secret"), std::nullopt);
  EXPECT_TRUE(beta->keys("")->empty());
  EXPECT_FALSE(*beta->remove("secret"));
  EXPECT_EQ(*beta->increment("secret", 5), 5);
  EXPECT_EQ(*open("alpha")->get("secret"), "1");
}

// ---- key and value rules ------------------------------------------------------------------------------

TEST_P(StoreContract, KeyRules) {
  auto s = open();
  const std::string longest(StorePolicy::kMaxKeyBytes, 'k');
  ASSERT_TRUE(s->set(longest, "1"));
  EXPECT_EQ(*s->get(longest), "1");
  EXPECT_EQ(code_of(s->set("", "1")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->set(std::string("a\0b", 3), "1")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->set("\xff", "1")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->set(longest + "k", "1")), StoreErrc::quota_exceeded)
      << "a write: the key-length quota";
  EXPECT_EQ(code_of(s->get(longest + "k")), StoreErrc::invalid_argument) << "a lookup: can never exist";
  EXPECT_EQ(code_of(s->increment("", 1)), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->increment(longest + "k", 1)), StoreErrc::quota_exceeded);
  EXPECT_EQ(code_of(s->compare_and_set(std::string("\0", 1), std::nullopt, "1")),
            StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->keys(std::string("\0", 1))), StoreErrc::invalid_argument);
  ASSERT_TRUE(s->set("b/1", "1"));
  ASSERT_TRUE(s->set("é", "1"));
  EXPECT_EQ(*s->keys("b"), std::vector<std::string>{"b/1"});
  EXPECT_EQ(s->keys("")->size(), 3U);
  EXPECT_EQ(s->keys("")->back(), "é") << "sorted by UTF-8 bytes";
}

TEST_P(StoreContract, ValueRules) {
  auto s = open();
  EXPECT_EQ(code_of(s->set("k", "not json")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->set("k", "")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->set("k", std::string(600, '[') + std::string(600, ']'))), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->compare_and_set("k", std::nullopt, "{")), StoreErrc::invalid_argument);
  EXPECT_EQ(code_of(s->compare_and_set("k", "{", "1")), StoreErrc::invalid_argument);
  // JSON.stringify's escape of a lone surrogate is JSON text: stored and read back as it is.
  ASSERT_TRUE(s->set("lone", R"("\ud800")"));
  EXPECT_EQ(*s->get("lone"), R"("\ud800")");
  EXPECT_TRUE(s->keys("")->size() == 1) << "the refused writes changed nothing";
}

// ---- quotas -------------------------------------------------------------------------------------------

TEST_P(StoreContract, QuotasAreCheckedWithTheWrite) {
  StorePolicy policy;
  policy.max_keys = 2;
  policy.max_value_bytes = 100;
  policy.quota_bytes = 2 * (1 + 10 + kStoreEntryOverheadBytes);  // two entries of key 1 byte, value 10
  auto s = open("q", policy);
  const std::string ten = R"("12345678")";  // 10 bytes of JSON
  ASSERT_TRUE(s->set("a", ten));
  ASSERT_TRUE(s->set("b", ten));
  EXPECT_EQ(code_of(s->set("c", "1")), StoreErrc::quota_exceeded) << "max_keys";
  EXPECT_EQ(code_of(s->set("a", R"("123456789")")), StoreErrc::quota_exceeded) << "quota_bytes";
  EXPECT_TRUE(s->set("a", R"("1234")")) << "a smaller overwrite is always allowed";
  EXPECT_TRUE(s->set("a", ten)) << "the old value is not counted against the new total";
  EXPECT_EQ(code_of(s->set("a", "\"" + std::string(99, 'x') + "\"")), StoreErrc::quota_exceeded)
      << "max_value_bytes";
  EXPECT_EQ(code_of(s->increment("c", 1)), StoreErrc::quota_exceeded) << "an increment creating a key";
  EXPECT_EQ(code_of(s->compare_and_set("c", std::nullopt, "1")), StoreErrc::quota_exceeded);
  EXPECT_EQ(*s->get("a"), ten) << "nothing changed";
  EXPECT_EQ(s->keys("")->size(), 2U);
  // A lowered quota: growth is refused, shrinking and deleting are allowed.
  StorePolicy lowered = policy;
  lowered.quota_bytes = 10;
  auto low = open("q", lowered);
  EXPECT_EQ(code_of(low->set("a", R"("123456789")")), StoreErrc::quota_exceeded);
  EXPECT_TRUE(low->set("a", "1"));
  EXPECT_TRUE(low->compare_and_set("b", ten, std::nullopt).value());
  EXPECT_TRUE(*low->remove("a"));
}

TEST_P(StoreContract, IncrementThatGrowsAValuePastTheQuotaIsRefused) {
  StorePolicy policy;
  policy.quota_bytes = 1 + 1 + kStoreEntryOverheadBytes;  // key "n" and a one-digit number
  auto s = open("q", policy);
  EXPECT_EQ(*s->increment("n", 9), 9);
  EXPECT_EQ(code_of(s->increment("n", 1)), StoreErrc::quota_exceeded) << "10 needs a second byte";
  EXPECT_EQ(*s->get("n"), "9");
  EXPECT_EQ(*s->increment("n", -9), 0);
}

// ---- increment ----------------------------------------------------------------------------------------

TEST_P(StoreContract, IncrementAddsAsJavaScriptDoes) {
  auto s = open();
  EXPECT_EQ(*s->increment("n", 1), 1) << "a missing key starts at 0";
  EXPECT_EQ(*s->increment("n", 41), 42);
  EXPECT_EQ(*s->get("n"), "42");
  EXPECT_EQ(*s->increment("n", -50), -8);
  EXPECT_EQ(*s->get("n"), "-8");
  EXPECT_EQ(*s->increment("f", 0.1), 0.1);
  EXPECT_EQ(*s->increment("f", 0.2), 0.1 + 0.2);
  EXPECT_EQ(*s->get("f"), "0.30000000000000004") << "JSON.stringify's spelling";
  EXPECT_EQ(*s->increment("z", -0.0), 0);
  EXPECT_EQ(*s->get("z"), "0") << "-0 is stored as JSON.stringify writes it";
  // Integers are exact up to 2^53; beyond, doubles round as in JavaScript.
  ASSERT_TRUE(s->set("big", "9007199254740991"));
  EXPECT_EQ(*s->increment("big", 1), 9007199254740992.0);
  EXPECT_EQ(*s->get("big"), "9007199254740992");
  EXPECT_EQ(*s->increment("big", 1), 9007199254740992.0) << "2^53 + 1 rounds back to 2^53";
  EXPECT_EQ(*s->increment("e", 1e21), 1e21);
  EXPECT_EQ(*s->get("e"), "1e+21");
  EXPECT_EQ(*s->increment("tiny", 1.5e-7), 1.5e-7);
  EXPECT_EQ(*s->get("tiny"), "1.5e-7");
  // Stored numbers in any JSON spelling are read.
  ASSERT_TRUE(s->set("spelled", "2.5E1"));
  EXPECT_EQ(*s->increment("spelled", 1), 26);
}

TEST_P(StoreContract, IncrementRefusesWhatIsNotANumber) {
  auto s = open();
  for (const char* stored : {R"("5")", "null", "true", "[1]", R"({"n":1})", "1e999"}) {
    ASSERT_TRUE(s->set("k", stored));
    auto r = s->increment("k", 1);
    ASSERT_EQ(code_of(r), StoreErrc::invalid_argument) << stored;
    EXPECT_NE(r.error().message.find("\"k\""), std::string::npos) << "names the key: " << r.error().message;
    EXPECT_EQ(*s->get("k"), stored) << "nothing changed";
  }
  for (double bad :
       {std::nan(""), std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()})
    EXPECT_EQ(code_of(s->increment("fresh", bad)), StoreErrc::invalid_argument);
  EXPECT_EQ(*s->get("fresh"), std::nullopt);
  ASSERT_TRUE(s->set("max", "1.7976931348623157e308"));
  EXPECT_EQ(code_of(s->increment("max", 1.7976931348623157e308)), StoreErrc::invalid_argument) << "overflow";
  EXPECT_EQ(*s->get("max"), "1.7976931348623157e308");
}

// ---- compare-and-set ----------------------------------------------------------------------------------

TEST_P(StoreContract, CompareAndSetWritesOnlyOnAMatch) {
  auto s = open();
  EXPECT_TRUE(*s->compare_and_set("k", std::nullopt, R"({"v":1})")) << "missing, as expected";
  EXPECT_FALSE(*s->compare_and_set("k", std::nullopt, R"({"v":2})")) << "exists now";
  EXPECT_FALSE(*s->compare_and_set("k", R"({"v":2})", "3"));
  EXPECT_EQ(*s->get("k"), R"({"v":1})") << "a mismatch writes nothing";
  EXPECT_TRUE(*s->compare_and_set("k", R"({ "v" : 1.0 })", R"({"a":1,"b":[true,null]})"))
      << "JSON value equality: whitespace and number spelling do not count";
  EXPECT_TRUE(*s->compare_and_set("k", R"({"b":[true,null],"a":1})", R"("s")"))
      << "member order does not count";
  EXPECT_FALSE(*s->compare_and_set("k", R"("S")", "1")) << "strings compare exactly";
  EXPECT_FALSE(*s->compare_and_set("k", R"(["s"])", "1"));
  EXPECT_TRUE(*s->compare_and_set("k", R"("\u0073")", "[1,2]")) << "escapes are decoded";
  EXPECT_FALSE(*s->compare_and_set("k", "[2,1]", "0")) << "array order counts";
  EXPECT_TRUE(*s->compare_and_set("k", "[1,2]", std::nullopt)) << "nullopt as the value deletes";
  EXPECT_EQ(*s->get("k"), std::nullopt);
  EXPECT_TRUE(*s->compare_and_set("k", std::nullopt, std::nullopt)) << "missing, stays missing";
  EXPECT_FALSE(*s->compare_and_set("k", "null", "1")) << "null is a value, not absence";
  EXPECT_EQ(*s->get("k"), std::nullopt);
}

// ---- concurrency --------------------------------------------------------------------------------------

constexpr int kThreads = 8;
constexpr int kPerThread = 50;

TEST_P(StoreContract, IncrementsFromThreadsLoseNothing) {
  auto shared = backend();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        // A session per operation, as an invocation has: the worst case for lost updates.
        auto s = shared->open_skill("count", {}, patient());
        if (!s || !(*s)->increment("n", 1)) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*open("count")->get("n"), std::to_string(kThreads * kPerThread));
}

TEST_P(StoreContract, CompareAndSetRetryLoopsFromThreadsLoseNothing) {
  auto shared = backend();
  std::atomic<int> failures{0};
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      auto s = shared->open_skill("count", {}, patient());
      if (!s) {
        failures.fetch_add(1);
        return;
      }
      for (int i = 0; i < kPerThread; ++i) {
        for (;;) {
          auto current = (*s)->get("n");
          if (!current) {
            failures.fetch_add(1);
            break;
          }
          const int n = current->has_value() ? std::stoi(**current) : 0;
          auto wrote = (*s)->compare_and_set("n", *current, std::to_string(n + 1));
          if (!wrote) {
            failures.fetch_add(1);
            break;
          }
          if (*wrote) break;
          conflicts.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*open("count")->get("n"), std::to_string(kThreads * kPerThread))
      << conflicts.load() << " retries";
}

TEST_P(StoreContract, IncrementsFromProcessesLoseNothing) {
  constexpr int kProcesses = 4;
  const fs::path where = root();
  ASSERT_TRUE(open("count"));  // created before the children race (they would also manage on their own)
  std::vector<Child> children;
  for (int p = 0; p < kProcesses; ++p) {
    children.emplace_back([&] {
      auto b = GetParam().make(where);  // its own backend and connections, as another replica would have
      for (int i = 0; i < kPerThread; ++i) {
        auto s = b->open_skill("count", {}, patient());
        if (!s || !(*s)->increment("n", 1)) return 1;
        auto mine = (*s)->set("p" + std::to_string(::getpid()) + "-" + std::to_string(i), "true");
        if (!mine) return 2;
      }
      return 0;
    });
    ASSERT_TRUE(children.back().started());
  }
  for (auto& c : children) EXPECT_EQ(c.wait(), 0);
  auto s = open("count");
  EXPECT_EQ(*s->get("n"), std::to_string(kProcesses * kPerThread));
  EXPECT_EQ(s->keys("p")->size(), static_cast<size_t>(kProcesses * kPerThread))
      << "concurrent sets all landed";
}

TEST_P(StoreContract, ParallelWritersCannotJointlyPassAQuota) {
  StorePolicy policy;
  policy.max_keys = 20;
  auto shared = backend();
  std::atomic<int> written{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto s = shared->open_skill("q", policy, patient());
      if (!s) return;
      for (int i = 0; i < 10; ++i) {
        auto r = (*s)->increment("t" + std::to_string(t) + "-" + std::to_string(i), 1);
        if (r) {
          written.fetch_add(1);
        } else if (r.error().code == StoreErrc::quota_exceeded) {
          refused.fetch_add(1);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(written.load(), 20);
  EXPECT_EQ(refused.load(), kThreads * 10 - 20);
  EXPECT_EQ(open("q", policy)->keys("")->size(), 20U);
}

// ---- durability ---------------------------------------------------------------------------------------

TEST_P(StoreContract, AcknowledgedWritesSurviveSigkill) {
  const fs::path where = root();
  ReadyChild child([&](const std::function<void()>& ready) {
    auto s = GetParam().make(where)->open_skill("crash", {}, patient());
    if (!s) return 2;
    if (!(*s)->set("greeting", R"({"text":"survives"})")) return 3;
    if (!(*s)->increment("n", 7)) return 4;
    if (!(*s)->compare_and_set("cas", std::nullopt, "[1]")) return 5;
    ready();             // every call above returned: acknowledged
    for (;;) ::pause();  // killed here, without closing anything
  });
  ASSERT_TRUE(child.wait_ready()) << "the child never acknowledged its writes";
  child.kill();
  EXPECT_EQ(child.wait(), 1000 + SIGKILL);
  auto s = open("crash");
  EXPECT_EQ(*s->get("greeting"), R"({"text":"survives"})");
  EXPECT_EQ(*s->get("n"), "7");
  EXPECT_EQ(*s->get("cas"), "[1]");
}

TEST_P(StoreContract, SigkillMidWriteLeavesTheLastCommittedStateOrTheNext) {
  // The child alternates a large value between two complete versions and increments a counter,
  // reporting each acknowledged increment; it is killed while writing. The next reader sees one
  // complete version and a counter that is the last acknowledged one or the one in flight.
  int acks[2];
  ASSERT_EQ(::pipe(acks), 0);
  const fs::path where = root();
  const std::string a = "\"" + std::string(200'000, 'a') + "\"";
  const std::string b = "\"" + std::string(200'000, 'b') + "\"";
  Child child([&] {
    ::close(acks[0]);
    auto s = GetParam().make(where)->open_skill("crash", {}, patient());
    if (!s) return 2;
    for (int i = 0;; ++i) {
      if (!(*s)->set("big", i % 2 == 0 ? a : b)) return 3;
      auto n = (*s)->increment("n", 1);
      if (!n) return 4;
      const auto v = static_cast<uint32_t>(*n);
      if (::write(acks[1], &v, sizeof v) != sizeof v) return 5;
    }
  });
  ASSERT_TRUE(child.started());
  ::close(acks[1]);
  uint32_t last = 0;
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(::read(acks[0], &last, sizeof last), static_cast<ssize_t>(sizeof last));
  child.kill();
  EXPECT_EQ(child.wait(), 1000 + SIGKILL);
  uint32_t v = 0;
  while (::read(acks[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) last = v;
  ::close(acks[0]);
  auto s = open("crash");
  const auto big = *s->get("big");
  ASSERT_TRUE(big.has_value());
  EXPECT_TRUE(*big == a || *big == b) << "a torn value of " << big->size() << " bytes";
  const int n = std::stoi(**s->get("n"));
  EXPECT_TRUE(n == static_cast<int>(last) || n == static_cast<int>(last) + 1) << n << " after ack " << last;
  EXPECT_EQ(*s->increment("n", 1), n + 1) << "the store works normally afterwards";
}

TEST_P(StoreContract, AWriteThatFailsOnAFullDiskChangesNothing) {
  if (!GetParam().fill_disk) GTEST_SKIP() << "this backend's disk is not the test's to fill";
  const fs::path where = root();
  const std::string big = "\"" + std::string(900'000, 'x') + "\"";
  Child child([&] {
    auto s = GetParam().make(where)->open_skill("full", {}, patient());
    if (!s) return 2;
    if (!(*s)->set("small", "1")) return 3;
    GetParam().fill_disk(where);
    auto refused = (*s)->set("big", big);
    if (refused) return 4;  // the disk took it after all
    if (refused.error().code != StoreErrc::io_error) return 5;
    if (refused.error().message.find(where.string()) != std::string::npos) return 6;  // no host path
    auto cas = (*s)->compare_and_set("small", "1", big);
    if (cas || cas.error().code != StoreErrc::io_error) return 7;
    // Space again: the same session works.
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    if (!(*s)->increment("small", 1)) return 8;
    return 0;
  });
  ASSERT_TRUE(child.started());
  ASSERT_EQ(child.wait(), 0);
  auto s = open("full");
  EXPECT_EQ(*s->get("big"), std::nullopt);
  EXPECT_EQ(*s->get("small"), "2");
  EXPECT_EQ(*s->keys(""), (std::vector<std::string>{"small"}));
}

// Backends under test: one line each.
INSTANTIATE_TEST_SUITE_P(Local, StoreContract, ::testing::Values(local_kind()),
                         [](const ::testing::TestParamInfo<StoreBackendKind>& kind) {
                           return kind.param.name;
                         });
INSTANTIATE_TEST_SUITE_P(Postgres, StoreContract, ::testing::Values(postgres_kind()),
                         [](const ::testing::TestParamInfo<StoreBackendKind>& kind) {
                           return kind.param.name;
                         });

}  // namespace
}  // namespace skillbox::state
