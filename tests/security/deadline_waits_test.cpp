// Red-team regression (SECURITY-CASES "Waits are bounded by the deadline"): a workspace lock or a
// SQLite write lock held elsewhere blocked a run with a 300 ms deadline for 1.3 s (the waits were a
// fixed 5 s). Every wait and every long host operation now ends at the invocation's deadline and
// leaves a consistent state.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>

#include "base/unique_fd.h"
#include "bus/stop_token.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

uint64_t ms_since(Clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
}

class DeadlineBoundedWaits : public ::testing::Test {
 protected:
  RunResult run_js(TempSkill& skill, uint64_t timeout_ms) {
    skill.manifest().limits.timeout_ms = timeout_ms;
    HostOptions options;
    options.data_dir = data_.path();
    options.env = std::map<std::string, std::string>{};
    TestRunner runner(std::move(options));
    return run(runner, skill);
  }
  TempDir data_;
};

// Another invocation (here: the test) holds the workspace lock: a write of a run with a 300 ms
// deadline gives up at the deadline, not after 5 s, and writes nothing.
TEST_F(DeadlineBoundedWaits, AHeldWorkspaceLockEndsAtTheDeadline) {
  TempSkill skill(
      {{"index.js", "export default async () => { await openhuman.fs.writeFile('a.txt', 'x'); }"}});
  skill.manifest().permissions.fs.mode = FsMode::readwrite;
  ASSERT_EQ(run_js(skill, 10'000).outcome, Outcome::ok);  // creates the workspace and its lock file
  fs::remove(data_.path() / "skills" / skill.manifest().id / "workspace" / "a.txt");
  base::UniqueFd held(
      ::open((data_.path() / "skills" / skill.manifest().id / "workspace.lock").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(held);
  ASSERT_EQ(flock(held.get(), LOCK_EX), 0);

  const auto start = Clock::now();
  const RunResult r = run_js(skill, 300);
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_LT(ms_since(start), 1000u) << "waited for the lock past the deadline";
  EXPECT_EQ(describe(r).find("abandoned"), std::string::npos) << describe(r);
  EXPECT_FALSE(fs::exists(data_.path() / "skills" / skill.manifest().id / "workspace" / "a.txt"));
}

// Another process holds SQLite's write lock on store.sqlite: store.set of a run with a 300 ms
// deadline ends at the deadline (the busy wait was a fixed 5 s).
TEST_F(DeadlineBoundedWaits, AHeldStoreWriteLockEndsAtTheDeadline) {
  TempSkill skill({{"index.js", "export default () => { store.set('k', 1); return store.get('k'); }"}});
  ASSERT_EQ(run_js(skill, 10'000).outcome, Outcome::ok);  // creates the store
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((data_.path() / "store.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  const auto start = Clock::now();
  const RunResult r = run_js(skill, 300);
  const uint64_t waited = ms_since(start);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_LT(waited, 1000u) << "waited for the write lock past the deadline";
  EXPECT_EQ(describe(r).find("abandoned"), std::string::npos) << describe(r);
  // The store is unharmed: the next run reads and writes it.
  const RunResult after = run_js(skill, 10'000);
  EXPECT_EQ(after.outcome, Outcome::ok) << describe(after);
  EXPECT_EQ(after.value_json, "1");
}

// A large append copies the file into a temporary one: it now stops between chunks at the deadline
// instead of copying (and fsyncing) all of it first; the temporary is gone, the file is unchanged.
TEST_F(DeadlineBoundedWaits, ALargeAppendStopsBetweenChunks) {
  FsPolicy policy;
  policy.mode = FsMode::readwrite;
  policy.max_file_bytes = uint64_t{1} << 30;
  policy.quota_bytes = uint64_t{2} << 30;
  {
    capabilities::Workspace ws(data_.path(), "appender", policy);
    ASSERT_TRUE(std::holds_alternative<bus::OkReply>(ws.handle(bus::FsWriteFileRequest{"big", {}, false})));
  }
  const fs::path root = data_.path() / "skills" / "appender" / "workspace";
  constexpr uint64_t kSize = uint64_t{256} << 20;
  fs::resize_file(root / "big", kSize);  // sparse: reads fast, the copy is real writes

  bus::StopToken stop(Clock::now() + std::chrono::milliseconds(50));
  capabilities::Workspace ws(data_.path(), "appender", policy, stop);
  const auto start = Clock::now();
  const bus::Reply reply = ws.handle(bus::FsWriteFileRequest{"big", bus::Bytes(10, 'x'), true});
  const uint64_t took = ms_since(start);
  const auto* error = std::get_if<bus::ErrorReply>(&reply);
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->code, bus::ErrorCode::Timeout) << error->message;
  EXPECT_LT(took, 600u) << "copied the whole file before looking at the deadline";
  EXPECT_EQ(fs::file_size(root / "big"), kSize);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(root)) ++entries;
  EXPECT_EQ(entries, 1u) << "no temporary file is left";

  // Quota accounting stays exact: a later append of a small file works and is counted.
  capabilities::Workspace next(data_.path(), "appender", policy);
  ASSERT_TRUE(std::holds_alternative<bus::OkReply>(
      next.handle(bus::FsWriteFileRequest{"s", bus::Bytes(3, 'y'), true})));
}

}  // namespace
}  // namespace skillbox::testing
