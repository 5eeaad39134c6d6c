// "After a limit", whatever the skill waited on (issue: limits at the edges, item 1). A skill waits on
// the host — an http transfer, the synchronous net.fetch of a bundle, a workspace write behind a held
// lock, a store write behind a held SQLite lock, a timer, an endless promise chain — inside
// `try/catch/finally`, and a limit trips while it waits: the deadline, the step budget, the heap or
// the caller's cancellation. Every run must end with exactly that limit's outcome, and the skill's
// `catch`/`finally` must never run: the writes they attempt are looked for afterwards, in the store
// and in the workspace, and never found.
//
// Before the fix, in process isolation a reply the supervisor finished at its deadline (the transfer
// cut off by it: `Timeout`) reached a worker whose own deadline was later by the frame's transit
// time, and 7 runs of 10 ended `ok` with "recovered:Timeout".
//
// Each case runs kRuns invocations (SKILLBOX_LIMIT_WAIT_RUNS overrides; 200 by default, fewer in the
// slower sanitizer builds), kConcurrency at a time on one runner.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/sanitizer.h"
#include "base/unique_fd.h"
#include "capabilities/store/store_test_util.h"
#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/http_test_server.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

enum class Wait { http, net_fetch, bundle_db, fs_write, store_write, timer, promise_chain };
enum class Limit { deadline, steps, memory, cancel };

const char* name_of(Wait w) {
  switch (w) {
    case Wait::http:
      return "http";
    case Wait::net_fetch:
      return "net_fetch";
    case Wait::bundle_db:
      return "bundle_db";
    case Wait::fs_write:
      return "fs_write";
    case Wait::store_write:
      return "store_write";
    case Wait::timer:
      return "timer";
    case Wait::promise_chain:
      return "promise_chain";
  }
  return "?";
}
const char* name_of(Limit l) {
  switch (l) {
    case Limit::deadline:
      return "deadline";
    case Limit::steps:
      return "steps";
    case Limit::memory:
      return "memory";
    case Limit::cancel:
      return "cancel";
  }
  return "?";
}

Outcome outcome_of(Limit l) {
  switch (l) {
    case Limit::deadline:
      return Outcome::timeout;
    case Limit::steps:
      return Outcome::step_limit;
    case Limit::memory:
      return Outcome::memory_limit;
    case Limit::cancel:
      return Outcome::cancelled;
  }
  return Outcome::internal;
}

size_t runs_per_case() {
  if (const char* v = std::getenv("SKILLBOX_LIMIT_WAIT_RUNS")) return std::max<size_t>(1, std::stoul(v));
  return base::kSanitizerBuild ? 20 : 200;
}
constexpr size_t kConcurrency = 8;
constexpr uint64_t kDeadlineMs = 150;
constexpr uint64_t kCancelAfterMs = 40;
constexpr uint64_t kStepBudget = 200'000;
constexpr uint64_t kMemoryBytes = 16ull * 1024 * 1024;

// The limit's trigger, started beside the wait: a timer that spins or allocates (the wait itself
// takes no steps). Synchronous waits block the JS thread, so only the deadline and cancellation can
// end them; those cases are not generated.
std::string arm(Limit l) {
  switch (l) {
    case Limit::steps:
      return "setTimeout(() => { for (;;) {} }, 5);";
    case Limit::memory:
      return "setTimeout(() => { const a = []; for (;;) a.push(new Array(4096).fill(7)); }, 5);";
    default:
      return "";
  }
}

// What a skill does once it catches or finishes: the writes that must never happen after a limit.
constexpr const char* kLateWrites =
    "store.set('late', 'catch'); await openhuman.fs.writeFile('late.txt', 'catch'); "
    "return 'recovered:' + (e && e.name);";
constexpr const char* kFinally = "store.set('finally', 1);";

std::string v1_source(Wait w, Limit l, const std::string& hang_url) {
  std::string wait;
  switch (w) {
    case Wait::http:
      wait = "await openhuman.http.get(" + json(hang_url).dump() + ");";
      break;
    case Wait::fs_write:
      wait = "await openhuman.fs.writeFile('a.txt', 'x');";
      break;
    case Wait::store_write:
      wait = "store.set('k', 1);";
      break;
    case Wait::timer:
      wait = "await new Promise((r) => setTimeout(r, 60000));";
      break;
    case Wait::promise_chain:
      // The chain drains the job queue for ever, so timers never fire: the trigger is in the chain.
      wait = std::string("const keep = []; const spin = () => { ") +
             (l == Limit::memory ? "keep.push(new Array(4096).fill(7)); " : "") +
             "return Promise.resolve().then(spin); }; await spin();";
      break;
    case Wait::net_fetch:
    case Wait::bundle_db:
      break;
  }
  const std::string trigger = w == Wait::promise_chain ? "" : arm(l);
  return "export default async () => {\n  " + trigger + "\n  try { " + wait + " } catch (e) { " +
         kLateWrites + " } finally { " + kFinally + " }\n  return 'finished';\n}\n";
}

// A bundle with one tool that waits in the synchronous net.fetch (oauth.fetch takes the same path:
// the bundle API's fetchSync), or in one costly statement of its database (a single call of SQL's
// replace() on megabyte strings, which never returns to SQLite's progress handler by itself).
std::string bundle_source(Wait w, const std::string& hang_url) {
  const std::string wait =
      w == Wait::bundle_db
          ? "db.get(\"SELECT length(replace(printf('%.*c', 2000000, 'a'), printf('%.*c', 500000, 'a') "
            "|| 'b', 'x')) AS n\")"
          : "net.fetch(" + json(hang_url).dump() + ")";
  return R"JS(
var __skill_bundle = (() => {
  const skill = {
    tools: [
      { name: 'wait', execute() {
          try { )JS" +
         wait + R"JS(; }
          catch (e) { state.set('late', 'catch'); db.exec('CREATE TABLE late (x)'); return 'recovered:' + e.name; }
          finally { state.set('finally', 1); }
          return 'finished';
        } },
      { name: 'late', execute() {
          const table = db.get("SELECT name FROM sqlite_master WHERE name = 'late'");
          return JSON.stringify([state.get('late') ?? null, state.get('finally') ?? null, table]);
        } },
    ],
  };
  return { default: skill };
})();
globalThis.__skill = { default: __skill_bundle.default };
)JS";
}

struct Case {
  Wait wait;
  Limit limit;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(name_of(info.param.wait)) + "_" + name_of(info.param.limit);
}

std::vector<Case> all_cases() {
  std::vector<Case> out;
  for (Wait w : {Wait::http, Wait::net_fetch, Wait::bundle_db, Wait::fs_write, Wait::store_write, Wait::timer,
                 Wait::promise_chain}) {
    const bool synchronous =
        w == Wait::net_fetch || w == Wait::bundle_db || w == Wait::fs_write || w == Wait::store_write;
    for (Limit l : {Limit::deadline, Limit::steps, Limit::memory, Limit::cancel}) {
      if (synchronous && (l == Limit::steps || l == Limit::memory)) continue;
      out.push_back({w, l});
    }
  }
  return out;
}

class LimitWhileWaiting : public ::testing::TestWithParam<Case> {
 protected:
  // Runs `n` invocations of `inv`, kConcurrency at a time, each with its own CancelToken (cancelled
  // kCancelAfterMs after its start for Limit::cancel). Returns the outcomes by description.
  std::map<std::string, size_t> run_many(Runner& runner, const Invocation& inv, Limit limit, size_t n) {
    std::mutex mu;
    std::map<std::string, size_t> seen;
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (size_t t = 0; t < kConcurrency; ++t) {
      threads.emplace_back([&] {
        while (next.fetch_add(1) < n) {
          Invocation mine = inv;
          mine.cancel = CancelToken();
          std::thread canceller;
          std::atomic<bool> done{false};
          if (limit == Limit::cancel) {
            canceller = std::thread([token = mine.cancel, &done] {
              const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(kCancelAfterMs);
              while (!done.load() && std::chrono::steady_clock::now() < until)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
              token.cancel();
            });
          }
          const RunResult r = runner.run(mine);
          done.store(true);
          if (canceller.joinable()) canceller.join();
          std::string key = std::string(to_string(r.outcome));
          if (r.outcome != outcome_of(limit)) key += " (" + describe(r) + " value=" + r.value_json + ")";
          std::lock_guard<std::mutex> lock(mu);
          ++seen[key];
        }
      });
    }
    for (std::thread& t : threads) t.join();
    return seen;
  }

  static void expect_all(const std::map<std::string, size_t>& seen, Limit limit, size_t n) {
    const std::string wanted(to_string(outcome_of(limit)));
    EXPECT_EQ(seen.size(), 1u);
    for (const auto& [what, count] : seen) {
      if (what == wanted)
        EXPECT_EQ(count, n);
      else
        ADD_FAILURE() << count << " of " << n << " runs ended " << what << ", not " << wanted;
    }
  }

  TempDir data_;
};

TEST_P(LimitWhileWaiting, EndsWithTheLimitAndNoCatchOrFinallyRuns) {
  const Case c = GetParam();
  const size_t n = runs_per_case();
  HttpTestServer server;
  const std::string hang = server.url("/hang");
  HttpPolicy http;
  http.allow = {server.origin() + "/"};
  http.allow_private_addresses = true;  // the test server is on loopback

  Limits limits;
  limits.timeout_ms = c.limit == Limit::deadline ? kDeadlineMs : 20'000;
  limits.steps = c.limit == Limit::steps ? kStepBudget : Limits::kMaxSteps;
  limits.memory_bytes = c.limit == Limit::memory ? kMemoryBytes : 64ull * 1024 * 1024;

  HostOptions options;
  options.data_dir = data_.path();
  options.env = std::map<std::string, std::string>{};

  if (c.wait == Wait::net_fetch || c.wait == Wait::bundle_db) {
    Bundle bundle("notes", grants({server.origin()}));
    bundle.write("index.js", bundle_source(c.wait, hang));
    const Skill skill = bundle.skill();
    TestRunner runner(host(bundle.data()));
    // The case's deadline for the runs under test only; the check below runs with the bundle's own.
    Invocation inv{skill, "tool:wait", "{}", {}};
    inv.overrides.timeout_ms = limits.timeout_ms;
    expect_all(run_many(runner, inv, c.limit, n), c.limit, n);
    // The bundle's state, read by another invocation: neither the catch nor the finally wrote it.
    const RunResult after = call(runner, skill, "tool:late", "{}");
    ASSERT_EQ(after.outcome, Outcome::ok) << describe_run(after);
    EXPECT_NE(after.value_json.find("[null,null,null]"), std::string::npos) << after.value_json;
    return;
  }

  TempSkill skill({{"index.js", v1_source(c.wait, c.limit, hang)}});
  skill.manifest().id = "waiter";
  skill.manifest().permissions.fs.mode = FsMode::readwrite;
  skill.manifest().permissions.http = http;
  TestRunner runner(options);

  const fs::path skill_data = data_.path() / "skills" / "waiter";
  // Create the store and the workspace (and its lock file) before anything holds their locks.
  {
    skill.write("index.js",
                "export default async () => { store.set('setup', 1); store.delete('setup'); "
                "await openhuman.fs.writeFile('setup.txt', 'x'); "
                "await openhuman.fs.remove('setup.txt'); }");
    const RunResult r = run(runner, skill);
    ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
    skill.write("index.js", v1_source(c.wait, c.limit, hang));
  }
  // The setup and the check below run with the default limits; the runs under test with the case's.
  const Limits defaults = skill.manifest().limits;
  skill.manifest().limits = limits;

  // The held locks of the synchronous waits: another invocation's workspace write, another
  // process's SQLite write transaction on the store.
  base::UniqueFd workspace_lock;
  sqlite3* store_db = nullptr;
  if (c.wait == Wait::fs_write) {
    workspace_lock.reset(::open((skill_data / "workspace.lock").c_str(), O_RDWR | O_CLOEXEC));
    ASSERT_TRUE(workspace_lock);
    ASSERT_EQ(flock(workspace_lock.get(), LOCK_EX), 0);
  }
  if (c.wait == Wait::store_write) {
    ASSERT_EQ(sqlite3_open((data_.path() / "store.sqlite").c_str(), &store_db), SQLITE_OK);
    // The setup run's connection may still be checkpointing as it closes: wait for it.
    sqlite3_busy_timeout(store_db, 10'000);
    ASSERT_EQ(sqlite3_exec(store_db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }

  Invocation inv{skill.skill(), "", "null", {}};
  const std::map<std::string, size_t> seen = run_many(runner, inv, c.limit, n);
  if (store_db != nullptr) {
    sqlite3_exec(store_db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(store_db);
  }
  workspace_lock.reset();
  expect_all(seen, c.limit, n);

  // Nothing the catch or the finally tried was kept.
  skill.manifest().limits = defaults;
  skill.write("index.js",
              "export default async () => [store.get('late') ?? null, store.get('finally') ?? null, "
              "await openhuman.fs.exists('late.txt')]");
  const RunResult after = run(runner, skill);
  ASSERT_EQ(after.outcome, Outcome::ok) << describe(after);
  EXPECT_EQ(after.value_json, "[null,null,false]");
  EXPECT_FALSE(fs::exists(skill_data / "workspace" / "late.txt"));
}

INSTANTIATE_TEST_SUITE_P(AllWaitsAndLimits, LimitWhileWaiting, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace skillbox::testing
