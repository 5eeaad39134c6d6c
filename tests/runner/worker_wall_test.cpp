// The second wall really holds: a worker built with test-only globals (worker/exe/wall_test_hooks.h)
// makes each forbidden system call after sandboxing, crashes, spins in native code and writes
// garbage frames. Each ends as the issue says, and the supervisor carries on.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/sanitizer.h"
#include "skill_fixture.h"
#include "worker_test_support.h"

namespace skillbox::testing {
namespace {

using Clock = std::chrono::steady_clock;

HostOptions wall_options(size_t pool = 1) {
  HostOptions o;
  o.worker_path = SKILLBOX_WALL_TEST_WORKER_PATH;
  o.worker_pool_size = pool;
  return o;
}

RunResult run_js(WorkerRunner& runner, const std::string& body, uint64_t timeout_ms = 10'000) {
  TempSkill skill({{"index.js", "export default () => " + body}});
  skill.manifest().limits.timeout_ms = timeout_ms;
  return run(runner, skill);
}

// Each forbidden call: refused (EACCES/ENOSYS) or the worker dies of SIGSYS. Never a success.
struct WallCase {
  const char* call;
  bool killed;  // seccomp kills the process
  int refusal;  // else: the errno it answers
};

const WallCase kWall[] = {
    {"open", false, EACCES},     {"openat", false, EACCES},   {"stat", false, EACCES},
    {"socket", true, 0},         {"connect", true, 0},        {"execve", true, 0},
    {"fork", true, 0},           {"clone", true, 0},          {"ptrace", true, 0},
    {"io_uring_setup", true, 0}, {"memfd_create", true, 0},   {"mmap_exec", true, 0},
    {"mprotect_exec", true, 0},  {"mmap_zero", false, EPERM},
};

TEST(WorkerWall, EveryForbiddenCallIsRefusedOrKillsTheWorker) {
  WorkerRunner runner(wall_options());
  for (const WallCase& c : kWall) {
    RunResult r = run_js(runner, std::string("__wall('") + c.call + "')");
    if (c.killed) {
      EXPECT_EQ(r.outcome, Outcome::crashed) << c.call << ": " << describe(r);
      ASSERT_TRUE(r.crash) << c.call;
      EXPECT_EQ(r.crash->signal, "SIGSYS") << c.call;
      ASSERT_TRUE(r.error) << c.call;
      EXPECT_NE(r.error->message.find("seccomp"), std::string::npos) << r.error->message;
    } else {
      EXPECT_EQ(r.outcome, Outcome::ok) << c.call << ": " << describe(r);
      EXPECT_EQ(r.value_json, std::to_string(-c.refusal)) << c.call;
    }
  }
  // The supervisor is fine afterwards.
  RunResult r = run_js(runner, "'still here'");
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
}

TEST(WorkerWall, LiveWorkerIsFilteredAndHoldsOnlyItsSocket) {
  WorkerRunner runner(wall_options(1));
  // The first run starts the zygote and fills the pool.
  ASSERT_EQ(run_js(runner, "1").outcome, Outcome::ok);
  std::vector<int> pids;
  const auto until = Clock::now() + std::chrono::seconds(10);
  while ((pids = runner.pooled_worker_pids()).empty() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(pids.size(), 1u);
  const pid_t pid = pids[0];
  // A pooled worker is sandboxed before it reads anything; give it a moment to finish the setup.
  std::string seccomp;
  while ((seccomp = status_field(pid, "Seccomp")) != "2" && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(seccomp, "2");
  EXPECT_EQ(status_field(pid, "NoNewPrivs"), "1");
  // Sanitizer builds also keep stderr, for the sanitizers' reports (docs/isolation.md).
  const std::vector<int> kept = base::kSanitizerBuild ? std::vector<int>{2, 3} : std::vector<int>{3};
  EXPECT_EQ(open_fds_of(pid), kept);
  // No capability survives, whoever the caller is; a root caller's worker is not root either.
  EXPECT_EQ(status_field(pid, "CapEff"), "0000000000000000");
  EXPECT_EQ(status_field(pid, "CapPrm"), "0000000000000000");
  EXPECT_EQ(status_field(pid, "CapAmb"), "0000000000000000");
  if (geteuid() == 0) {
    EXPECT_EQ(status_field(pid, "CapBnd"), "0000000000000000");
    EXPECT_EQ(status_field(pid, "Uid"), "65534");
    EXPECT_EQ(status_field(pid, "Gid"), "65534");
  }
  // rlimits as planned: no file growth, no core, at most the socket and one more descriptor.
  std::ifstream limits("/proc/" + std::to_string(pid) + "/limits");
  std::string text;
  for (std::string line; std::getline(limits, line);) text += line + "\n";
  EXPECT_NE(text.find("Max file size             0"), std::string::npos) << text;
  EXPECT_NE(text.find("Max core file size        0"), std::string::npos) << text;
  EXPECT_NE(text.find("Max open files            5"), std::string::npos) << text;
}

TEST(WorkerWall, NativeLoopEndsAsTimeoutAtTheDeadlineAndTheCpuStops) {
  WorkerRunner runner(wall_options(0));
  rusage before{};
  const auto start = Clock::now();
  RunResult r = run_js(runner, "__spin()", 300);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_GE(r.usage.wall_ms, 300u);
  EXPECT_LT(took, 1500) << "the worker was not killed at the deadline";
  ASSERT_TRUE(r.crash);
  EXPECT_EQ(r.crash->signal, "SIGKILL");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("killed"), std::string::npos) << r.error->message;
  // Killed means no process keeps spinning: the zygote has no children left.
  (void)before;
  EXPECT_EQ(zombie_children(), 0);
}

TEST(WorkerWall, TypedArraySortOfAHugeArrayEndsAtTheDeadline) {
  WorkerRunner runner(wall_options(0));
  TempSkill skill({{"index.js",
                    "export default () => { const a = new Float64Array(3e6);\n"
                    "  for (let i = 0; i < a.length; i++) a[i] = (i * 7919) % 1000003;\n"
                    "  for (;;) { a.sort(); a.reverse(); } }"}});
  skill.manifest().limits.timeout_ms = 400;
  skill.manifest().limits.memory_bytes = 64ull * 1024 * 1024;
  skill.manifest().limits.steps = Limits::kMaxSteps;
  const auto start = Clock::now();
  RunResult r = run(runner, skill);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  EXPECT_EQ(r.outcome, Outcome::timeout) << describe(r);
  EXPECT_LT(took, 2000);
}

TEST(WorkerWall, CrashIsReportedAndTheSupervisorCarriesOn) {
  WorkerRunner runner(wall_options());
  TempSkill skill({{"index.js", "export default () => { log('before'); store.keys(''); __crash(); }"}});
  HostOptions o = wall_options();
  o.data_dir = skill.dir().parent_path() / "data";
  WorkerRunner with_data(o);
  RunResult r = run(with_data, skill);
  EXPECT_EQ(r.outcome, Outcome::crashed) << describe(r);
  ASSERT_TRUE(r.crash);
  if constexpr (base::kAddressSanitizer) {
    // ASan's fault handler takes the SIGSEGV, reports (to a closed stderr) and exits with status 1.
    EXPECT_EQ(r.crash->exit_code, 1) << describe(r);
  } else if constexpr (base::kThreadSanitizer) {
    // TSan's fault handler takes the SIGSEGV too, and ends the process with a trap.
    EXPECT_EQ(r.crash->signal, "SIGILL") << describe(r);
  } else {
    EXPECT_EQ(r.crash->signal, "SIGSEGV");
  }
  EXPECT_EQ(r.crash->last_request, "StoreKeysRequest");
  EXPECT_GT(r.crash->heap_peak_bytes, 0u);
  ASSERT_EQ(r.logs.size(), 1u);  // logged before the crash: the supervisor has it
  EXPECT_EQ(r.logs[0].message, "before");
  EXPECT_EQ(run_js(with_data, "'after'").outcome, Outcome::ok);
  EXPECT_EQ(run_js(runner, "'other runner'").outcome, Outcome::ok);
}

TEST(WorkerWall, GarbageFramesEndTheWorkerAsCrashed) {
  WorkerRunner runner(wall_options());
  const struct {
    const char* kind;
    const char* says;
  } kCases[] = {
      {"truncated", "middle of a frame"},
      {"oversized", "larger than the limit"},
      {"wrong_tag", "unknown tag"},
      {"wrong_id", "ids must increase"},
      {"reply", "kind 1 is not one a worker may send"},
      {"invocation", "kind 2 is not one a worker may send"},
      {"noise", "worker frame"},
      {"crashed_result", "outcome crashed"},
  };
  for (const auto& c : kCases) {
    const auto start = Clock::now();
    RunResult r = run_js(runner, std::string("__garbage('") + c.kind + "')");
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    EXPECT_EQ(r.outcome, Outcome::crashed) << c.kind << ": " << describe(r);
    ASSERT_TRUE(r.error) << c.kind;
    EXPECT_NE(r.error->message.find(c.says), std::string::npos) << c.kind << ": " << r.error->message;
    EXPECT_LT(took, 5000) << c.kind << " was not noticed before the deadline";
  }
  EXPECT_EQ(run_js(runner, "'fine'").outcome, Outcome::ok);
  EXPECT_EQ(zombie_children(), 0);
}

// --- a taken-over worker asking for the skill's files ----------------------------------------------

// The worker walks the module graph and asks its supervisor for files (bus::SourcesRequest). A worker
// that was taken over may ask for anything: every name it could use to leave the skill folder, read
// something that is no module, or ask again is a protocol violation that ends it, and the caps hold
// over all its requests together.
RunResult run_sources(WorkerRunner& runner, TempSkill& skill, const std::string& names) {
  std::string literal;
  for (char c : names) {
    if (c == '\n')
      literal += "\\n";
    else if (c == '\0')
      literal += "\\0";
    else if (c == '\'')
      literal += "\\'";
    else
      literal += c;
  }
  skill.write("index.js", "export default () => __sources('" + literal + "')");
  skill.manifest().limits.timeout_ms = 10'000;
  return run(runner, skill);
}

TEST(WorkerWall, AHostileSourcesRequestEndsTheWorker) {
  WorkerRunner runner(wall_options());
  TempSkill skill({{"index.js", ""}, {"lib.js", "export const x = 1;"}, {"notes.txt", "secret"}});
  const struct {
    std::string names;
    const char* says;
  } kCases[] = {
      {"/etc/passwd.js", "not a relative name in normal form"},
      {"../outside.js", "not a relative name in normal form"},
      {"lib/../lib.js", "not a relative name in normal form"},
      {"./lib.js", "not a relative name in normal form"},
      {std::string("lib.js\0.txt", 11), "NUL byte"},
      {"notes.txt", "not a module source name"},
      {"index.js", "again"},
      {"lib.js\nlib.js", "again"},
      {std::string(5000, 'a') + ".js", "a name of 5003 bytes"},
  };
  for (const auto& c : kCases) {
    RunResult r = run_sources(runner, skill, c.names);
    EXPECT_EQ(r.outcome, Outcome::crashed) << c.says << ": " << describe(r);
    ASSERT_TRUE(r.error) << c.says;
    EXPECT_NE(r.error->message.find("broke the frame protocol"), std::string::npos) << r.error->message;
    EXPECT_NE(r.error->message.find(c.says), std::string::npos) << r.error->message;
  }
  // More names in one request than a graph may hold does not even decode.
  std::string many;
  for (int i = 0; i < 4097; ++i) many += (i == 0 ? "" : "\n") + std::string("m") + std::to_string(i) + ".js";
  RunResult r = run_sources(runner, skill, many);
  EXPECT_EQ(r.outcome, Outcome::crashed) << describe(r);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("more than the limit of 4096"), std::string::npos) << r.error->message;
  // An honest request is answered with the in-process reader's reads and refusals.
  r = run_sources(runner, skill, "lib.js\nmissing.js");
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"("files:lib.js, refused:missing.js,")");
  EXPECT_EQ(run_js(runner, "'fine'").outcome, Outcome::ok);
  EXPECT_EQ(zombie_children(), 0);
}

// The file cap counts every request of the invocation: asking in small batches reaches it as one big
// graph would, and the supervisor refuses that request and every later one with the cap's message.
TEST(WorkerWall, RepeatedSourcesRequestsAreHeldToTheCaps) {
  WorkerRunner runner(wall_options());
  TempSkill skill({{"index.js", ""}});
  std::string body =
      "{ const out = []; for (let b = 0; b < 6; ++b) { const names = [];"
      " for (let i = 0; i < 1000; ++i) names.push('m' + b + '_' + i + '.js');"
      " out.push(__sources(names.join('\\n')).slice(0, 60)); } return out; }";
  skill.write("index.js", "export default () => " + body);
  skill.manifest().limits.timeout_ms = 10'000;
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  const auto answers = nlohmann::json::parse(r.value_json);
  ASSERT_EQ(answers.size(), 6u);
  for (int b = 0; b < 4; ++b)
    EXPECT_EQ(answers[b].get<std::string>().rfind("files: refused:", 0), 0u) << answers;
  for (int b = 4; b < 6; ++b)
    EXPECT_EQ(answers[b].get<std::string>().rfind("error:the skill's entry imports more than 4096 files", 0),
              0u)
        << answers;
}

// --- one pool for every limit ----------------------------------------------------------------

// The pooled workers the runner holds once the pool has refilled (at most 10 s).
std::vector<int> full_pool(WorkerRunner& runner, size_t size) {
  std::vector<int> pids;
  const auto until = Clock::now() + std::chrono::seconds(10);
  while ((pids = runner.pooled_worker_pids()).size() < size && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return pids;
}

RunResult run_with_memory(WorkerRunner& runner, const std::string& body, uint64_t memory_mb) {
  TempSkill skill({{"index.js", "export default () => " + body}});
  skill.manifest().limits.memory_bytes = memory_mb * 1024 * 1024;
  skill.manifest().limits.timeout_ms = 10'000;
  return run(runner, skill);
}

bool contains(const std::vector<int>& pids, long pid) {
  return std::find(pids.begin(), pids.end(), static_cast<int>(pid)) != pids.end();
}

// An invocation with a small memory limit after one with a big one runs on a worker from the pool (no
// refill for new limits), and that worker holds the small limit: its RLIMIT_AS refuses a 1 GiB mapping
// the big invocation's worker could make, the engine ends a hungry skill as memory_limit, and the
// worker cannot raise its limit back to the ceiling it was forked with.
TEST(WorkerWall, PooledWorkerTakesTheLimitsOfItsInvocation) {
  WorkerRunner runner(wall_options(1));
  const char* probe = "[__wall('getpid'), __wall('rlimit_as'), __wall('mmap_1g'), __wall('raise_rlimit')]";
  ASSERT_EQ(run_with_memory(runner, "1", 2048).outcome, Outcome::ok);  // starts the zygote, fills the pool

  std::vector<int> pool = full_pool(runner, 1);
  ASSERT_EQ(pool.size(), 1u);
  RunResult big = run_with_memory(runner, probe, 2048);
  ASSERT_EQ(big.outcome, Outcome::ok) << describe(big);
  const nlohmann::json big_probe = nlohmann::json::parse(big.value_json);
  EXPECT_TRUE(contains(pool, big_probe[0].get<long>())) << big.value_json;
  EXPECT_GE(big_probe[1].get<long>(), 2048) << "RLIMIT_AS below the invocation's memory";
  EXPECT_EQ(big_probe[2].get<long>(), 0) << "a 1 GiB mapping within a 2 GiB limit";
  EXPECT_EQ(big_probe[3].get<long>(), -EPERM);

  pool = full_pool(runner, 1);
  ASSERT_EQ(pool.size(), 1u);
  RunResult small = run_with_memory(runner, probe, 16);
  ASSERT_EQ(small.outcome, Outcome::ok) << describe(small);
  const nlohmann::json small_probe = nlohmann::json::parse(small.value_json);
  EXPECT_TRUE(contains(pool, small_probe[0].get<long>())) << "not the pooled worker: " << small.value_json;
  EXPECT_LT(small_probe[1].get<long>(), big_probe[1].get<long>() - 1024)
      << "RLIMIT_AS not lowered from the big invocation's: " << big.value_json << " then "
      << small.value_json;
  if constexpr (!base::kSanitizerBuild) {
    // Under ASan or TSan the baseline VmSize holds the sanitizer's shadow (~20 TiB, ~124 TiB), so there
    // only the difference above is the limit's.
    EXPECT_LT(small_probe[1].get<long>(), 1024) << "RLIMIT_AS of a 16 MiB invocation: " << small.value_json;
    EXPECT_EQ(small_probe[2].get<long>(), -ENOMEM) << "RLIMIT_AS let a 1 GiB mapping through";
  }
  EXPECT_EQ(small_probe[3].get<long>(), -EPERM) << "the worker raised its hard limit";

  pool = full_pool(runner, 1);
  ASSERT_EQ(pool.size(), 1u);
  RunResult hungry =
      run_with_memory(runner, "{ const a = []; for (;;) a.push('x'.repeat(1 << 20) + a.length); }", 16);
  EXPECT_EQ(hungry.outcome, Outcome::memory_limit) << describe(hungry);
  EXPECT_EQ(full_pool(runner, 1).size(), 1u) << "the pool refills after every run";
}

}  // namespace
}  // namespace skillbox::testing
