// SECURITY-CASES "Nothing happens after a limit": once any limit of an invocation has tripped, the
// deadline included, no host request of it is served, in any capability (issue 9, item 2). Each test
// counts the effects a skill had after its deadline, from outside the sandbox, and finds none.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "base/sanitizer.h"
#include "capabilities/store/store_test_util.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/hold_hook.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;

// About 27 ms per call, and about two steps before patch 0011: the loop reaches the deadline while
// the engine is busy in a native call.
constexpr const char* kCostlySearch = "const s = 'a'.repeat(1 << 16), n = 'a'.repeat(1000) + 'b';\n";
// The deadline of the loops below: long enough for a few iterations, also in an ASan or TSan build,
// which run the search several times slower.
constexpr uint64_t kCostlyDeadlineMs = base::kSanitizerBuild ? 8000 : 1000;

class NothingAfterALimit : public ::testing::Test {
 protected:
  NothingAfterALimit() { options_.data_dir = data_.path(); }

  RunResult run_skill(const std::string& source, uint64_t timeout_ms, const std::string& id = "cleaner",
                      FsMode fs_mode = FsMode::none, const HttpPolicy& http = {}) {
    // One skill folder per id, its entry rewritten for each run: the data directory binds an id to
    // one folder (docs/manifest.md "Identity").
    std::unique_ptr<TempSkill>& slot = skills_[id];
    if (!slot) {
      slot = std::make_unique<TempSkill>(std::initializer_list<std::pair<const std::string, std::string>>{});
      slot->manifest().id = id;
    }
    TempSkill& skill = *slot;
    skill.write("index.js", source);
    skill.manifest().limits.timeout_ms = timeout_ms;
    // The deadline is the limit under test: the step budget must not run out first on a fast machine
    // (patch 0011 charges the costly search about a million steps per call).
    skill.manifest().limits.steps = Limits::kMaxSteps;
    skill.manifest().permissions.fs.mode = fs_mode;
    skill.manifest().permissions.fs.max_files = 100'000;
    skill.manifest().permissions.http = http;
    TestRunner runner(options_);
    return run(runner, skill);
  }

  /// How many keys skill `id` has in the store, read by another invocation.
  size_t key_count(const std::string& id = "cleaner") {
    const RunResult r = run_skill("export default () => store.keys().length", 60'000, id);
    EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
    return r.outcome == Outcome::ok ? std::stoul(r.value_json) : 0;
  }

  TempDir data_;
  HostOptions options_;
  std::map<std::string, std::unique_ptr<TempSkill>> skills_;
};

// The example of SECURITY-CASES: before the fix, hundreds of keys were deleted after the host had
// been told the run timed out.
TEST_F(NothingAfterALimit, StoreDeletesInACostlyLoopStopAtTheDeadline) {
  constexpr int kKeys = 400;
  const RunResult fill = run_skill("export default () => { for (let i = 0; i < " + std::to_string(kKeys) +
                                       "; i++) store.set('k' + i, i); return store.keys().length }",
                                   120'000);
  ASSERT_EQ(fill.outcome, Outcome::ok) << describe(fill);
  ASSERT_EQ(fill.value_json, std::to_string(kKeys));

  const RunResult r = run_skill(std::string("export default () => {\n") + kCostlySearch +
                                    "  const keys = store.keys(); let i = 0;\n"
                                    "  for (;;) { s.indexOf(n); store.delete(keys[i++]); }\n}",
                                kCostlyDeadlineMs);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  const size_t left_at_return = key_count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const size_t left_later = key_count();

  const size_t deleted = kKeys - left_at_return;
  EXPECT_GT(deleted, 0u) << "the loop never reached store.delete";
  EXPECT_GT(left_at_return, 0u) << "the loop ran out of keys before its deadline; use more";
  EXPECT_EQ(left_later, left_at_return) << "keys were deleted after run() returned";
  // One store.keys() and one store.delete() per key deleted; at most one more, refused, request.
  EXPECT_GE(r.usage.host_calls, deleted + 1);
  EXPECT_LE(r.usage.host_calls, deleted + 2);
  std::cout << "[ figures ] deleted before the deadline: " << deleted
            << ", after run() returned: " << (left_at_return - left_later)
            << ", host_calls: " << r.usage.host_calls << "\n";
}

struct FileCount {
  size_t files = 0;
  size_t late = 0;  // files whose mtime is after `latest_allowed`
};

FileCount count_files(const fs::path& dir, std::chrono::system_clock::time_point latest_allowed) {
  FileCount c;
  if (!fs::exists(dir)) return c;  // the workspace is created by the first write
  for (const auto& e : fs::directory_iterator(dir)) {
    struct stat st {};
    EXPECT_EQ(::stat(e.path().c_str(), &st), 0) << e.path();
    const auto mtime =
        std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    ++c.files;
    if (mtime > latest_allowed) ++c.late;
  }
  return c;
}

// A variant: workspace writes in the same loop. Every file's mtime says when it was written; none is
// later than the deadline. The deadline counts from the runtime's creation, which is when run()
// returned minus usage.wall_ms (creation to disposal), so the bound holds however late a loaded
// machine started the run; 100 ms of slack covers the disposal after the deadline (a write after the
// deadline would keep happening every ~27 ms).
TEST_F(NothingAfterALimit, WorkspaceWritesInACostlyLoopStopAtTheDeadline) {
  // 3 s, not 1: each write is atomic (fsync), and on a machine busy with disk I/O the first writes
  // alone took over a second. 8 s in a sanitizer build, whose asan preset also instruments the engine
  // for the fuzzers' coverage: its search is slower still.
  constexpr uint64_t kTimeoutMs = base::kSanitizerBuild ? 8000 : 3000;
  const RunResult r = run_skill(std::string("export default () => {\n") + kCostlySearch +
                                    "  let i = 0;\n"
                                    "  for (;;) { s.indexOf(n); openhuman.fs.writeFile('f' + i++, 'x'); }\n}",
                                kTimeoutMs, "writer", FsMode::readwrite);
  const auto returned = std::chrono::system_clock::now();
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  const fs::path workspace = data_.path() / "skills" / "writer" / "workspace";
  const auto latest_allowed =
      returned - std::chrono::milliseconds(r.usage.wall_ms) + std::chrono::milliseconds(kTimeoutMs + 100);
  const FileCount at_return = count_files(workspace, latest_allowed);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const FileCount later = count_files(workspace, latest_allowed);
  const size_t written = at_return.files;
  const size_t late = at_return.late;
  const size_t written_later = later.files;
  EXPECT_GT(written, 0u) << "the loop never reached fs.writeFile";
  EXPECT_EQ(late, 0u) << "files were written after the deadline";
  EXPECT_EQ(written_later, written) << "files were written after run() returned";
  EXPECT_GE(r.usage.host_calls, written);
  EXPECT_LE(r.usage.host_calls, written + 1);
  std::cout << "[ figures ] files written before the deadline: " << written << ", after: " << late << "\n";
}

// A variant the engine cannot help with: the JS thread is stuck in a native call that cannot be
// interrupted (hold()) while an http request is in flight. The transfer is cancelled at the deadline
// (the server sees the client close) although the engine has not stopped, and no request reaches
// the server afterwards.
TEST_F(NothingAfterALimit, AnHttpTransferInFlightIsCancelledAtTheDeadlineWhileTheEngineIsStuck) {
  SKIP_IN_PROCESS_MODE(
      "hold() is an in-process testing hook; in process mode a stuck worker is killed at "
      "the deadline (WorkerWall.NativeLoopEndsAsTimeoutAtTheDeadlineAndTheCpuStops)");
  HoldHook hook;
  HttpTestServer server;
  HttpPolicy http;
  http.allow = {server.origin() + "/"};
  http.allow_private_addresses = true;  // the test server is on loopback
  const std::string source =
      "export default async () => {\n"
      "  const pending = openhuman.http.get(" +
      nlohmann::json(server.url("/hang")).dump() +
      ");\n"
      "  await new Promise((r) => setTimeout(r, 20));  // the request is on the wire\n"
      "  hold();\n"
      "  await openhuman.http.get(" +
      nlohmann::json(server.url("/plain")).dump() +
      ");\n"
      "  return pending;\n}";
  const RunResult r = run_skill(source, 300, "fetcher", FsMode::none, http);
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  ASSERT_TRUE(HoldHook::wait_holding(1, std::chrono::seconds(5)));  // run() abandoned it: still in hold()
  EXPECT_TRUE(server.wait_until([&] { return server.client_closes() >= 1; }, std::chrono::seconds(10)))
      << "the /hang transfer was not cancelled while the engine was stuck";
  EXPECT_EQ(server.requests(), 1u);
  HoldHook::release();  // hold() returns long after the deadline: the next request is refused
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(server.requests(), 1u) << "a request reached the server after the deadline";
}

}  // namespace
}  // namespace skillbox::testing
