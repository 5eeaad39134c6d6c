// WorkerRunner: the same outcomes as in-process, through a sandboxed worker process per invocation;
// plus what only a process wall can do (kill at the deadline, report crashes).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "skill_fixture.h"
#include "support/scoped_env.h"
#include "worker_test_support.h"

namespace skillbox::testing {
namespace {

HostOptions worker_options(size_t pool = 2) {
  HostOptions o;
  o.worker_path = SKILLBOX_WORKER_PATH;
  o.worker_pool_size = pool;
  return o;
}

struct OutcomeCase {
  const char* name;
  const char* source;
  Outcome outcome;
};

const OutcomeCase kOutcomes[] = {
    {"ok", "export default (x) => x + 1", Outcome::ok},
    {"error", "export default () => { throw new Error('boom') }", Outcome::error},
    {"invalid", "export const notTheExport = 1", Outcome::invalid},
    {"memory_limit", "export default () => { const a = []; for (;;) a.push('x'.repeat(1000) + a.length) }",
     Outcome::memory_limit},
    {"step_limit", "export default () => { for (;;) {} }", Outcome::step_limit},
    {"timeout", "export default () => new Promise((r) => setTimeout(r, 60000))", Outcome::timeout},
    {"stack_overflow", "export default () => { const f = () => f(); f(); }", Outcome::stack_overflow},
};

TEST(WorkerRunner, EveryOutcomeThroughTheCppApi) {
  WorkerRunner runner(worker_options());
  for (const OutcomeCase& c : kOutcomes) {
    TempSkill skill({{"index.js", c.source}});
    skill.manifest().limits.timeout_ms = c.outcome == Outcome::timeout ? 300 : 20'000;
    skill.manifest().limits.steps = 1'000'000;
    skill.manifest().limits.memory_bytes = uint64_t{8} * 1024 * 1024;
    RunResult r = run(runner, skill, "41");
    EXPECT_EQ(r.outcome, c.outcome) << c.name << ": " << describe(r);
    if (c.outcome == Outcome::ok) {
      EXPECT_EQ(r.value_json, "42");
      EXPECT_FALSE(r.error);
    } else {
      ASSERT_TRUE(r.error) << c.name;
      EXPECT_FALSE(r.error->message.empty()) << c.name;
    }
    if (c.outcome == Outcome::timeout && r.crash) {
      // The worker ends a run at its deadline by itself; when it is too slow to report (a loaded
      // machine), the supervisor kills it 20 ms later, with the same outcome and a post-mortem.
      EXPECT_EQ(r.crash->signal, "SIGKILL") << c.name << ": " << describe(r);
    } else {
      EXPECT_FALSE(r.crash) << c.name;
    }
  }
}

TEST(WorkerRunner, LogsAndHostCallsAreServedBySupervisor) {
  TempSkill skill({{"index.js",
                    "export default async () => { console.log('one'); log('two', 2);\n"
                    "  store.set('k', {a: 1}); return store.get('k'); }"}});
  HostOptions o = worker_options();
  o.data_dir = skill.dir().parent_path() / "data";
  WorkerRunner runner(o);
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"({"a":1})");
  ASSERT_EQ(r.logs.size(), 2u);
  EXPECT_EQ(r.logs[0].message, "one");
  EXPECT_EQ(r.logs[1].message, "two 2");
  EXPECT_EQ(r.usage.host_calls, 4u);
}

TEST(WorkerRunner, ConcurrentRunsFromManyThreads) {
  WorkerRunner runner(worker_options());
  TempSkill skill({{"index.js", "export default async (n) => { await null; return n * 2 }"}});
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        RunResult r = run(runner, skill, std::to_string(t * 100 + i));
        if (r.outcome == Outcome::ok && r.value_json == std::to_string(2 * (t * 100 + i))) ++good;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 40);
}

TEST(WorkerRunner, OnDemandWorkersWithoutPool) {
  WorkerRunner runner(worker_options(0));
  TempSkill skill({{"index.js", "export default () => 'fresh'"}});
  for (int i = 0; i < 3; ++i) {
    RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, "\"fresh\"");
  }
  EXPECT_TRUE(runner.pooled_worker_pids().empty());
}

// Every worker inherits the zygote's memory, so the zygote gets none of the host's environment (API
// keys live there): only LD_BIND_NOW (symbols bound once, before any fork) and the sanitizers' settings.
TEST(WorkerRunner, TheZygoteHoldsNoneOfTheHostsEnvironment) {
  ScopedEnv env;
  env.set("SKILLBOX_TEST_HOST_SECRET", "sk-live-0123456789");
  WorkerRunner runner(worker_options());
  TempSkill skill({{"index.js", "export default () => 1"}});
  ASSERT_EQ(run(runner, skill).outcome, Outcome::ok);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (runner.pooled_worker_pids().empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::vector<int> pids = runner.pooled_worker_pids();
  ASSERT_FALSE(pids.empty());
  // The zygote is the pooled worker's parent (field 4 of /proc/PID/stat); it is not sandboxed, so
  // this process (its parent) may read its environment.
  const auto read_proc = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  };
  const std::string text = read_proc("/proc/" + std::to_string(pids.front()) + "/stat");
  std::istringstream fields(text.substr(text.rfind(')') + 2));
  std::string state;
  int zygote = 0;
  fields >> state >> zygote;
  ASSERT_GT(zygote, 0) << text;
  const std::string environ_text = read_proc("/proc/" + std::to_string(zygote) + "/environ");
  std::vector<std::string> names;
  for (size_t at = 0; at < environ_text.size();) {
    const size_t end = environ_text.find('\0', at);
    const std::string entry = environ_text.substr(at, end - at);
    names.push_back(entry.substr(0, entry.find('=')));
    at = end == std::string::npos ? environ_text.size() : end + 1;
  }
  EXPECT_EQ(environ_text.find("sk-live-0123456789"), std::string::npos);
  for (const std::string& n : names)
    EXPECT_TRUE(n == "LD_BIND_NOW" || n == "ASAN_OPTIONS" || n == "UBSAN_OPTIONS" || n == "LSAN_OPTIONS")
        << n;
  EXPECT_NE(std::find(names.begin(), names.end(), "LD_BIND_NOW"), names.end());
}

// The supervisor serves the sources from its cache (runner/source_cache.h) once the files are a second
// old: an edit of the same size still takes effect on the next run, and nothing of a run survives.
TEST(WorkerRunner, AnEditedSkillTakesEffectOnTheNextRunServedFromTheSourceCache) {
  WorkerRunner runner(worker_options());
  const auto source = [](int version) {
    return "export default () => { const seen = typeof globalThis.mark; globalThis.mark = 1;\n"
           "  return [" +
           std::to_string(version) + ", seen]; }";
  };
  TempSkill skill({{"index.js", source(1)}});
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (int i = 0; i < 3; ++i) {
    RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    EXPECT_EQ(r.value_json, R"([1,"undefined"])");
  }
  skill.write("index.js", source(2));
  RunResult r = run(runner, skill);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, R"([2,"undefined"])");
}

TEST(WorkerRunner, MissingWorkerExecutableFailsClosed) {
  HostOptions o;
  o.worker_path = "/nonexistent/skillbox-worker";
  WorkerRunner runner(o);
  TempSkill skill({{"index.js", "export default () => 1"}});
  RunResult r = run(runner, skill);
  EXPECT_EQ(r.outcome, Outcome::internal);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->name, "IsolationUnavailable");
  EXPECT_NE(r.error->message.find("--isolation=inprocess"), std::string::npos) << r.error->message;
  EXPECT_FALSE(WorkerRunner::check_support(o));
}

TEST(WorkerRunner, CheckSupportOnThisMachine) {
  Result<void> ok = WorkerRunner::check_support(worker_options());
  EXPECT_TRUE(ok) << (ok ? "" : ok.error().message);
}

TEST(WorkerRunner, ZygoteDeathIsSurvived) {
  WorkerRunner runner(worker_options());
  TempSkill skill({{"index.js", "export default () => 7"}});
  ASSERT_EQ(run(runner, skill).outcome, Outcome::ok);
  const int zygote = runner.zygote_pid();
  ASSERT_GT(zygote, 0);
  ASSERT_EQ(kill(zygote, SIGKILL), 0);
  // A run may still get a worker the dead zygote forked before it died (it is killed with its zygote
  // by PDEATHSIG, but not instantly); a later run restarts the zygote. None faults the supervisor.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  RunResult r;
  do {
    r = run(runner, skill);
  } while ((r.outcome != Outcome::ok || runner.zygote_pid() == zygote) &&
           std::chrono::steady_clock::now() < until);
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_NE(runner.zygote_pid(), zygote);
  EXPECT_EQ(zombie_children(), 0);
}

// A worker dies with its zygote, also after a root supervisor's worker took the unprivileged uid (which
// clears the parent-death signal; the sandbox arms it again): the run it held ends `crashed`.
TEST(WorkerRunner, ARunWhoseZygoteDiesEndsCrashed) {
  WorkerRunner runner(worker_options());
  TempSkill slow(
      {{"index.js", "export default () => new Promise((done) => setTimeout(() => done('late'), 3000))"}});
  TempSkill quick({{"index.js", "export default () => 7"}});
  ASSERT_EQ(run(runner, quick).outcome, Outcome::ok);
  const int zygote = runner.zygote_pid();
  ASSERT_GT(zygote, 0);
  RunResult held;
  std::thread caller([&] { held = run(runner, slow); });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));  // the run is in its worker
  ASSERT_EQ(kill(zygote, SIGKILL), 0);
  caller.join();
  EXPECT_EQ(held.outcome, Outcome::crashed) << describe(held);
}

}  // namespace
}  // namespace skillbox::testing
