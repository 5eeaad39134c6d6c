// The contract every state::WorkspaceBackend keeps (state/workspace_backend.h), whatever stores it:
// path rules at its own boundary, quotas enforced under its lock, atomic writes and renames, what a
// SIGKILL half-way leaves, concurrent writers (threads and processes), a full disk, missing files.
//
// A second backend registers with one INSTANTIATE_TEST_SUITE_P line at the bottom, giving a factory
// that builds it on a scratch folder (which it may ignore) and says whether its storage is local files
// (the tests that need a file-size rlimit or the files themselves skip otherwise).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "bus/stop_token.h"
#include "capabilities/store/store_test_util.h"
#include "pg/pool.h"
#include "pg/workspace_backend.h"
#include "state/child_process.h"
#include "state/data_layout.h"
#include "state/workspace_backend.h"
#include "support/postgres_test_db.h"

namespace skillbox::state {
namespace {

namespace fs = std::filesystem;

struct WorkspaceBackendKind {
  std::string name;
  // A backend whose storage is `scratch` (fresh and empty for each test). Calling it again with the
  // same folder (also in a forked child) reaches the same storage.
  std::function<std::shared_ptr<WorkspaceBackend>(const fs::path& scratch)> make;
  bool local_files = false;  // storage is files under `scratch` (DataLayout)
};

// Tests are named by the backend's name (ctest shows it, not the struct's bytes).
void PrintTo(const WorkspaceBackendKind& kind, std::ostream* os) {
  *os << kind.name;
}

constexpr WorkspaceQuota kRoomy{1u << 30, 100000, 1u << 28};

bus::Bytes bytes_of(const std::string& s) {
  return bus::Bytes(s.begin(), s.end());
}

class WorkspaceContract : public ::testing::TestWithParam<WorkspaceBackendKind> {
 protected:
  void SetUp() override { backend_ = GetParam().make(scratch_); }

  std::unique_ptr<WorkspaceSession> open(const bus::StopToken& stop = bus::StopToken::never(),
                                         bool writable = true) {
    auto s = backend_->open("contract", writable, stop);
    EXPECT_TRUE(s) << "open failed";
    return s ? std::move(*s) : nullptr;
  }

  static std::string read(WorkspaceSession& s, std::string_view path) {
    bus::Bytes out;
    auto r = s.read_file(
        path, [](uint64_t) { return true; }, out);
    if (!r) return "<error " + std::to_string(static_cast<int>(r.error().code)) + ">";
    return std::string(out.begin(), out.end());
  }
  static WorkspaceErrc write_error(WorkspaceSession& s, std::string_view path, const std::string& text,
                                   const WorkspaceQuota& q = kRoomy, bool append = false) {
    auto r = s.write_file(path, bytes_of(text), append, q);
    EXPECT_FALSE(r) << "expected an error writing " << path;
    return r ? WorkspaceErrc::io : r.error().code;
  }
  static void write_ok(WorkspaceSession& s, std::string_view path, const std::string& text,
                       const WorkspaceQuota& q = kRoomy, bool append = false) {
    auto r = s.write_file(path, bytes_of(text), append, q);
    EXPECT_TRUE(r) << "writing " << path << ": code " << (r ? -1 : static_cast<int>(r.error().code));
  }
  // Names of the workspace root as the backend lists them.
  static std::vector<std::string> names(WorkspaceSession& s, std::string_view dir = ".") {
    std::vector<std::string> out;
    auto listed = s.list(dir);
    EXPECT_TRUE(listed);
    if (listed)
      for (const auto& e : *listed) out.push_back(e.name);
    return out;
  }

  testing::TempDir dir_;
  fs::path scratch_ = dir_.path();
  std::shared_ptr<WorkspaceBackend> backend_;
};

// ---- the operations --------------------------------------------------------------------------------------

TEST_P(WorkspaceContract, WritesReadsListsAndStats) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(names(*s), std::vector<std::string>{});
  ASSERT_TRUE(s->mkdir("d", false, kRoomy));
  write_ok(*s, "d/f.txt", "hello");
  write_ok(*s, "b.txt", "");
  write_ok(*s, "d/f.txt", " world", kRoomy, true);
  EXPECT_EQ(read(*s, "d/f.txt"), "hello world");
  EXPECT_EQ(names(*s), (std::vector<std::string>{"b.txt", "d"}));
  auto st = s->stat("d/f.txt");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->type, bus::FsEntryType::file);
  EXPECT_EQ(st->size, 11u);
  auto dir = s->stat("d");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->type, bus::FsEntryType::directory);
  EXPECT_TRUE(*s->exists("d/f.txt"));
  EXPECT_FALSE(*s->exists("d/nope"));
  EXPECT_FALSE(*s->exists("b.txt/below"));  // a component that is a file: absent, not an error

  EXPECT_EQ(s->read_file(
                 "d", [](uint64_t) { return true; }, *std::make_unique<bus::Bytes>())
                .error()
                .code,
            WorkspaceErrc::is_directory);
  EXPECT_EQ(s->list("b.txt").error().code, WorkspaceErrc::not_directory);
  EXPECT_EQ(s->stat("nope").error().code, WorkspaceErrc::not_found);
  EXPECT_EQ(write_error(*s, "missing/f.txt", "x"), WorkspaceErrc::parent_missing);
  EXPECT_EQ(write_error(*s, "d", "x"), WorkspaceErrc::is_directory);
  EXPECT_EQ(s->mkdir("d", false, kRoomy).error().code, WorkspaceErrc::exists);
  EXPECT_TRUE(s->mkdir("d", true, kRoomy));
  EXPECT_TRUE(s->mkdir("p/q/r", true, kRoomy));
  EXPECT_EQ(s->mkdir("b.txt/x", true, kRoomy).error().code, WorkspaceErrc::not_a_directory);
  EXPECT_EQ(s->mkdir("b.txt", true, kRoomy).error().code, WorkspaceErrc::not_directory);
  EXPECT_EQ(s->remove("d", false).error().code, WorkspaceErrc::not_empty);
  EXPECT_TRUE(s->remove("d", true));
  EXPECT_TRUE(s->remove("b.txt", false));
  EXPECT_EQ(s->remove("b.txt", false).error().code, WorkspaceErrc::not_found);
  EXPECT_EQ(names(*s), std::vector<std::string>{"p"});
}

TEST_P(WorkspaceContract, ReadAsksBeforeItReads) {
  auto s = open();
  ASSERT_TRUE(s);
  write_ok(*s, "f", "12345");
  uint64_t asked = 0;
  bus::Bytes out;
  auto r = s->read_file(
      "f",
      [&](uint64_t size) {
        asked = size;
        return false;
      },
      out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, WorkspaceErrc::refused);
  EXPECT_EQ(asked, 5u);
  EXPECT_TRUE(out.empty()) << "nothing read after a refusal";
}

TEST_P(WorkspaceContract, ReadOnlySessionChangesNothing) {
  auto w = open();
  ASSERT_TRUE(w);
  write_ok(*w, "f", "old");
  auto r = open(bus::StopToken::never(), false);
  ASSERT_TRUE(r);
  EXPECT_EQ(read(*r, "f"), "old");
  EXPECT_EQ(write_error(*r, "f", "new"), WorkspaceErrc::denied);
  EXPECT_EQ(r->mkdir("d", false, kRoomy).error().code, WorkspaceErrc::denied);
  EXPECT_EQ(r->remove("f", false).error().code, WorkspaceErrc::denied);
  EXPECT_EQ(r->rename("f", "g").error().code, WorkspaceErrc::denied);
  EXPECT_EQ(read(*w, "f"), "old");
}

TEST_P(WorkspaceContract, RefusesAnInvalidSkillId) {
  for (const char* id : {"", "..", "a/b", "."}) {
    auto s = backend_->open(id, true, bus::StopToken::never());
    ASSERT_FALSE(s) << id;
    EXPECT_EQ(s.error().code, WorkspaceErrc::invalid_skill_id) << id;
  }
}

// ---- path rules at the backend's boundary -----------------------------------------------------------

TEST_P(WorkspaceContract, RefusesPathsThatAreNotNormalized) {
  auto s = open();
  ASSERT_TRUE(s);
  write_ok(*s, "ok", "x");
  ASSERT_TRUE(s->mkdir("dir", false, kRoomy));
  const std::vector<std::string> bad = {"",
                                        "/etc/passwd",
                                        "/",
                                        "..",
                                        "../x",
                                        "dir/..",
                                        "a//b",
                                        "./ok",
                                        "ok/",
                                        "dir/./ok",
                                        "dir/../ok",
                                        ".skillbox-tmp-1",
                                        "dir/.skillbox-x",
                                        std::string("ok\0x", 4),
                                        std::string(256, 'n')};
  for (const std::string& p : bad) {
    SCOPED_TRACE("path \"" + p + "\"");
    EXPECT_FALSE(is_workspace_path(p));
    bus::Bytes out;
    EXPECT_EQ(s->read_file(
                   p, [](uint64_t) { return true; }, out)
                  .error()
                  .code,
              WorkspaceErrc::invalid_path);
    EXPECT_EQ(write_error(*s, p, "x"), WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->list(p).error().code, WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->stat(p).error().code, WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->exists(p).error().code, WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->mkdir(p, true, kRoomy).error().code, WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->remove(p, true).error().code, WorkspaceErrc::invalid_path);
    EXPECT_EQ(s->rename(p, "moved").error().code, WorkspaceErrc::invalid_path);
    auto to = s->rename("ok", p);
    ASSERT_FALSE(to);
    EXPECT_EQ(to.error().code, WorkspaceErrc::invalid_path);
    EXPECT_TRUE(to.error().second);
  }
  // The root is a path, but not one that can be removed, renamed or replaced.
  EXPECT_EQ(s->remove(".", true).error().code, WorkspaceErrc::invalid_path);
  EXPECT_EQ(s->rename(".", "x").error().code, WorkspaceErrc::invalid_path);
  EXPECT_EQ(s->rename("ok", ".").error().code, WorkspaceErrc::invalid_path);
  EXPECT_EQ(names(*s), (std::vector<std::string>{"dir", "ok"})) << "nothing was created or removed";
  EXPECT_EQ(read(*s, "ok"), "x");
}

TEST_P(WorkspaceContract, NeverFollowsASymlinkOutOfTheWorkspace) {
  if (!GetParam().local_files) GTEST_SKIP() << "plants a symlink in the backend's files";
  auto s = open();
  ASSERT_TRUE(s);
  const fs::path ws = DataLayout(scratch_).workspace_dir("contract");
  const fs::path outside = scratch_ / "outside";
  fs::create_directories(outside);
  std::ofstream(outside / "secret") << "secret";
  fs::create_directory_symlink(outside, ws / "link");
  bus::Bytes out;
  EXPECT_EQ(s->read_file(
                 "link/secret", [](uint64_t) { return true; }, out)
                .error()
                .code,
            WorkspaceErrc::symlink);
  EXPECT_EQ(write_error(*s, "link/secret", "pwned"), WorkspaceErrc::symlink);
  EXPECT_EQ(s->exists("link").error().code, WorkspaceErrc::symlink);
  EXPECT_EQ(s->remove("link", true).error().code, WorkspaceErrc::symlink);
  EXPECT_TRUE(s->mkdir("d", false, kRoomy));
  fs::create_directory_symlink(outside, ws / "d" / "in");
  EXPECT_TRUE(s->remove("d", true)) << "a recursive remove deletes the link, not its target";
  EXPECT_EQ(testing::read_bytes(outside / "secret"), "secret");
}

// ---- quotas
// ------------------------------------------------------------------------------------------------

TEST_P(WorkspaceContract, EnforcesQuotasAndChangesNothingWhenOneIsHit) {
  auto s = open();
  ASSERT_TRUE(s);
  const WorkspaceQuota q{10, 3, 6};
  write_ok(*s, "a", "12345", q);
  auto big = s->write_file("b", bytes_of("1234567"), false, q);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, WorkspaceErrc::file_too_large);
  EXPECT_EQ(big.error().value, 7u);
  auto appended = s->write_file("a", bytes_of("67"), true, q);
  ASSERT_FALSE(appended);
  EXPECT_EQ(appended.error().code, WorkspaceErrc::file_too_large);
  EXPECT_EQ(appended.error().value, 7u);
  auto over = s->write_file("b", bytes_of("123456"), false, q);
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().code, WorkspaceErrc::quota_bytes);
  EXPECT_EQ(over.error().value, 11u);
  write_ok(*s, "b", "12345", q);  // exactly at the quota
  ASSERT_TRUE(s->mkdir("d", false, q));
  auto fourth = s->mkdir("e", false, q);
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().code, WorkspaceErrc::quota_entries);
  EXPECT_EQ(fourth.error().value, 4u);
  EXPECT_EQ(write_error(*s, "d/c", "", q), WorkspaceErrc::quota_entries);
  EXPECT_EQ(names(*s), (std::vector<std::string>{"a", "b", "d"}));
  EXPECT_EQ(read(*s, "a"), "12345");

  // Lowered quotas never block shrinking or replacing at the same size.
  const WorkspaceQuota lowered{4, 1, 6};
  write_ok(*s, "a", "54321", lowered);
  write_ok(*s, "a", "1", lowered);
  EXPECT_TRUE(s->rename("b", "a"));
  EXPECT_TRUE(s->remove("d", false));

  // Another session counts what this one left.
  auto next = open();
  ASSERT_TRUE(next);
  auto r = next->write_file("z", bytes_of("123456"), false, q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, WorkspaceErrc::quota_bytes);
  EXPECT_EQ(r.error().value, 11u);
}

// ---- atomic writes and renames ------------------------------------------------------------------------

TEST_P(WorkspaceContract, RenamesAtomicallyWithPosixRules) {
  auto s = open();
  ASSERT_TRUE(s);
  write_ok(*s, "a", "A");
  write_ok(*s, "b", "B");
  ASSERT_TRUE(s->mkdir("d", false, kRoomy));
  ASSERT_TRUE(s->mkdir("full", false, kRoomy));
  write_ok(*s, "full/x", "x");
  EXPECT_TRUE(s->rename("a", "b"));
  EXPECT_EQ(read(*s, "b"), "A");
  EXPECT_FALSE(*s->exists("a"));
  EXPECT_TRUE(s->rename("b", "b")) << "the same file under both names";
  auto e = s->rename("b", "d");
  EXPECT_EQ(e.error().code, WorkspaceErrc::file_over_directory);
  EXPECT_TRUE(e.error().second);
  EXPECT_EQ(s->rename("d", "b").error().code, WorkspaceErrc::directory_over_file);
  EXPECT_EQ(s->rename("d", "full").error().code, WorkspaceErrc::not_empty);
  EXPECT_EQ(s->rename("d", "d/inner").error().code, WorkspaceErrc::into_itself);
  auto missing = s->rename("nope", "x");
  EXPECT_EQ(missing.error().code, WorkspaceErrc::not_found);
  EXPECT_FALSE(missing.error().second);
  EXPECT_EQ(s->rename("b", "nope/x").error().code, WorkspaceErrc::parent_missing);
  EXPECT_TRUE(s->rename("full", "d")) << "a directory replaces an empty one";
  EXPECT_EQ(read(*s, "d/x"), "x");
  EXPECT_EQ(names(*s), (std::vector<std::string>{"b", "d"}));
}

TEST_P(WorkspaceContract, ReadersSeeOneWholeContentWhileOthersWrite) {
  const std::string a(200000, 'a');
  const std::string b(300000, 'b');
  {
    auto s = open();
    ASSERT_TRUE(s);
    write_ok(*s, "shared", a);
  }
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, t] {
      auto s = backend_->open("contract", true, bus::StopToken::never());
      if (!s) return;
      for (int i = 0; i < 15; ++i) (void)(*s)->write_file("shared", bytes_of(t == 0 ? a : b), false, kRoomy);
    });
  }
  std::thread reader([&] {
    auto s = backend_->open("contract", false, bus::StopToken::never());
    if (!s) return;
    while (!done.load()) {
      const std::string got = read(**s, "shared");
      EXPECT_TRUE(got == a || got == b) << "a mixture of " << got.size() << " bytes";
      EXPECT_EQ(names(**s), std::vector<std::string>{"shared"}) << "a temporary is visible";
    }
  });
  for (auto& w : writers) w.join();
  done = true;
  reader.join();
}

// ---- concurrent writers ---------------------------------------------------------------------------------

// Eight writers race for a workspace that holds four files: the lock makes each quota check and its
// write one step, so exactly four win, whether they are threads or processes.
TEST_P(WorkspaceContract, ConcurrentWritersNeverOvershootTheQuotaThreads) {
  const WorkspaceQuota q{1u << 20, 4, 1u << 20};
  std::atomic<int> won{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto s = backend_->open("contract", true, bus::StopToken::never());
      if (!s) return;
      auto r = (*s)->write_file("f" + std::to_string(t), bytes_of(std::string(1000, 'x')), false, q);
      if (r)
        ++won;
      else if (r.error().code == WorkspaceErrc::quota_entries)
        ++refused;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 4);
  EXPECT_EQ(refused.load(), 4);
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(names(*s).size(), 4u);
}

TEST_P(WorkspaceContract, ConcurrentWritersNeverOvershootTheQuotaProcesses) {
  const WorkspaceQuota q{5000, 1000, 1u << 20};
  std::vector<testing::Child> children;
  for (int c = 0; c < 6; ++c) {
    children.emplace_back([&] {
      auto s = GetParam().make(scratch_)->open("contract", true, bus::StopToken::never());
      if (!s) return 3;
      auto r = (*s)->write_file("f" + std::to_string(c), bus::Bytes(2000, 'x'), false, q);
      return r ? 0 : r.error().code == WorkspaceErrc::quota_bytes ? 1 : 2;
    });
  }
  int won = 0;
  int refused = 0;
  for (testing::Child& child : children) {
    const int status = child.wait();
    ASSERT_TRUE(status == 0 || status == 1) << "exit status " << status;
    (status == 0 ? won : refused)++;
  }
  EXPECT_EQ(won, 2) << "2 x 2000 bytes fit in 5000";
  EXPECT_EQ(refused, 4);
}

// ---- durability after SIGKILL --------------------------------------------------------------------------

// A child acknowledges one write, then rewrites the file with larger contents until it is killed,
// somewhere in the middle of a write. The next reader sees the acknowledged content or a complete
// later one, never a mixture and never a temporary; the next writer's usage is exact.
TEST_P(WorkspaceContract, ASigkilledWriterLeavesTheOldOrTheNewContent) {
  const std::string acked(100000, 'o');
  const std::string later(4000000, 'n');
  testing::ReadyChild writer([&](const std::function<void()>& ready) {
    auto s = GetParam().make(scratch_)->open("contract", true, bus::StopToken::never());
    if (!s || !(*s)->write_file("data", bytes_of(acked), false, kRoomy)) return 2;
    ready();
    for (;;) (void)(*s)->write_file("data", bytes_of(later), false, kRoomy);
  });
  ASSERT_TRUE(writer.wait_ready()) << "the child's first write was not acknowledged";
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  writer.kill();
  ASSERT_EQ(writer.wait(), 1000 + SIGKILL);

  auto s = open();
  ASSERT_TRUE(s);
  const std::string got = read(*s, "data");
  EXPECT_TRUE(got == acked || got == later) << got.size() << " bytes";
  EXPECT_EQ(names(*s), std::vector<std::string>{"data"});
  // The usage counts only the file: a quota of exactly its size plus 10 admits 10 more bytes.
  const WorkspaceQuota q{got.size() + 10, 2, 1u << 30};
  write_ok(*s, "more", std::string(10, 'm'), q);
  if (GetParam().local_files) {
    for (const auto& e : fs::recursive_directory_iterator(DataLayout(scratch_).workspace_dir("contract")))
      EXPECT_FALSE(e.path().filename().string().starts_with(kWorkspaceReservedPrefix)) << e.path();
  }
}

TEST_P(WorkspaceContract, AnAcknowledgedWriteSurvivesSigkill) {
  testing::ReadyChild writer([&](const std::function<void()>& ready) {
    auto s = GetParam().make(scratch_)->open("contract", true, bus::StopToken::never());
    if (!s || !(*s)->mkdir("d", false, kRoomy) || !(*s)->write_file("d/f", bytes_of("new"), false, kRoomy) ||
        !(*s)->rename("d/f", "g")) {
      return 2;
    }
    ready();
    for (;;) pause();
  });
  ASSERT_TRUE(writer.wait_ready()) << "the child's writes were not acknowledged";
  writer.kill();
  EXPECT_EQ(writer.wait(), 1000 + SIGKILL);
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(read(*s, "g"), "new");
  EXPECT_EQ(names(*s), (std::vector<std::string>{"d", "g"}));
}

// ---- a full disk
// ---------------------------------------------------------------------------------------------

// RLIMIT_FSIZE makes the kernel refuse to grow a file past the limit with EFBIG (SIGXFSZ ignored), as
// a full disk would: the write fails typed, the file keeps its old content, no temporary is left.
TEST_P(WorkspaceContract, AWriteRefusedByTheDiskChangesNothing) {
  if (!GetParam().local_files) GTEST_SKIP() << "the file-size rlimit reaches only local files";
  {
    auto s = open();
    ASSERT_TRUE(s);
    write_ok(*s, "data", "old content");
  }
  testing::Child writer([&] {
    if (!testing::limit_file_size(4096)) return 4;
    auto s = GetParam().make(scratch_)->open("contract", true, bus::StopToken::never());
    if (!s) return 3;
    auto w = (*s)->write_file("data", bus::Bytes(100000, 'x'), false, kRoomy);
    auto a = (*s)->write_file("data", bus::Bytes(100000, 'x'), true, kRoomy);
    if (w || a) return 1;
    return w.error().code == WorkspaceErrc::too_big && a.error().code == WorkspaceErrc::too_big ? 0 : 2;
  });
  EXPECT_EQ(writer.wait(), 0) << "1: written past the limit; 2: not refused as too big";
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(read(*s, "data"), "old content");
  EXPECT_EQ(names(*s), std::vector<std::string>{"data"});
}

// ---- stopping
// ------------------------------------------------------------------------------------------------

TEST_P(WorkspaceContract, AStoppedSessionChangesNothing) {
  {
    auto s = open();
    ASSERT_TRUE(s);
    write_ok(*s, "data", "old");
  }
  bus::StopToken stop;
  auto s = open(stop);
  ASSERT_TRUE(s);
  stop.raise();
  auto w = s->write_file("data", bytes_of("new"), false, kRoomy);
  ASSERT_FALSE(w);
  EXPECT_TRUE(w.error().code == WorkspaceErrc::stopped || w.error().code == WorkspaceErrc::stopped_counting);
  auto fresh = open();
  ASSERT_TRUE(fresh);
  EXPECT_EQ(read(*fresh, "data"), "old");
  EXPECT_EQ(names(*fresh), std::vector<std::string>{"data"});
}

// ---- missing or damaged storage -------------------------------------------------------------------------

TEST_P(WorkspaceContract, AMissingWorkspaceIsCreatedEmpty) {
  auto s = open();
  ASSERT_TRUE(s);
  EXPECT_EQ(names(*s), std::vector<std::string>{});
  EXPECT_EQ(read(*s, "nothing"),
            "<" + std::string("error ") + std::to_string(int(WorkspaceErrc::not_found)) + ">");
}

TEST_P(WorkspaceContract, AWorkspaceReplacedByAFileOrALinkIsUnavailable) {
  if (!GetParam().local_files) GTEST_SKIP() << "damages the backend's files";
  const DataLayout layout(scratch_);
  fs::create_directories(layout.skill_dir("contract"));
  std::ofstream(layout.workspace_dir("contract")) << "not a folder";
  auto s = backend_->open("contract", true, bus::StopToken::never());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, WorkspaceErrc::unavailable);
  fs::remove(layout.workspace_dir("contract"));
  fs::create_directory_symlink(scratch_, layout.workspace_dir("contract"));
  auto linked = backend_->open("contract", true, bus::StopToken::never());
  ASSERT_FALSE(linked);
  EXPECT_EQ(linked.error().code, WorkspaceErrc::unavailable);
}

TEST_P(WorkspaceContract, ADamagedLockFileOnlyCausesARecount) {
  if (!GetParam().local_files) GTEST_SKIP() << "damages the backend's files";
  auto s = open();
  ASSERT_TRUE(s);
  const WorkspaceQuota q{10, 100, 100};
  write_ok(*s, "a", "12345", q);
  const fs::path lock = DataLayout(scratch_).skill_dir("contract") / DataLayout::kWorkspaceLock;
  std::ofstream(lock, std::ios::trunc) << "garbage that is not a token";
  std::ofstream(DataLayout(scratch_).workspace_dir("contract") / "b") << "123";  // changed behind its back
  auto r = s->write_file("c", bytes_of("123"), false, q);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, WorkspaceErrc::quota_bytes);
  EXPECT_EQ(r.error().value, 11u) << "5 + 3 counted again, + 3";
}

// A backend whose every open fails, saying how to get a test database.
class NoDatabase final : public WorkspaceBackend {
 public:
  WorkspaceResult<std::unique_ptr<WorkspaceSession>> open(std::string_view, bool,
                                                          const bus::StopToken&) override {
    WorkspaceError e(WorkspaceErrc::unavailable);
    e.detail = skillbox::testing::postgres_missing();
    return e;
  }
};

// Each scratch folder is a tenant of its own in the shared test database (ctest's fixture `postgres`).
WorkspaceBackendKind postgres_kind() {
  return WorkspaceBackendKind{"postgres",
                              [](const fs::path& scratch) -> std::shared_ptr<WorkspaceBackend> {
                                const std::string url = skillbox::testing::migrated_postgres_url();
                                if (url.empty()) return std::make_shared<NoDatabase>();
                                return pg::make_pg_workspace_backend(
                                    pg::Pool::create(url), skillbox::testing::postgres_tenant_for(scratch));
                              },
                              false};
}

std::string kind_name(const ::testing::TestParamInfo<WorkspaceBackendKind>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(
    Local, WorkspaceContract,
    ::testing::Values(WorkspaceBackendKind{
        "local", [](const fs::path& scratch) { return make_local_workspace_backend(DataLayout(scratch)); },
        true}),
    kind_name);
INSTANTIATE_TEST_SUITE_P(Postgres, WorkspaceContract, ::testing::Values(postgres_kind()), kind_name);

}  // namespace
}  // namespace skillbox::state
