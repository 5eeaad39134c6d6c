// The public Observer (Invocation::observer): log lines and events reach the embedder while the skill
// runs, with monotonic timestamps, and never after run() returned; a run cut off keeps its lines.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "skill_fixture.h"
#include "skillbox/skillbox.h"
#include "support/hold_hook.h"

namespace skillbox::testing {
namespace {

using namespace std::chrono_literals;

/// Everything an observer saw, in order, with the thread and time of each call.
struct Seen {
  std::mutex mutex;
  std::vector<std::string> lines;  // "log:<level>:<message>" or "event:<kind>:<detail>"
  std::vector<Timestamp> times;
  std::vector<std::thread::id> threads;
  int concurrent = 0;
  int max_concurrent = 0;

  Observer observer() {
    Observer o;
    o.on_log = [this](const LogEntry& e, Timestamp at) {
      add("log:" + std::string(to_string(e.level)) + ":" + e.message, at);
    };
    o.on_event = [this](const RunEvent& ev, Timestamp at) {
      add("event:" + std::string(to_string(ev.kind)) + ":" + ev.detail, at);
    };
    return o;
  }
  void add(std::string line, Timestamp at) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      max_concurrent = std::max(max_concurrent, ++concurrent);
      lines.push_back(std::move(line));
      times.push_back(at);
      threads.push_back(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(1ms);  // widen the window in which a second concurrent call would show
    std::lock_guard<std::mutex> lock(mutex);
    --concurrent;
  }
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return lines;
  }
};

size_t index_of(const std::vector<std::string>& lines, const std::string& line) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i] == line) return i;
  return lines.size();
}

TEST(Observer, LogLinesArriveWhileTheSkillRunsWithMonotonicTimestamps) {
  TestRunner runner;
  TempSkill skill({{"index.js",
                    "export default async () => {\n"
                    "  console.log('first');\n"
                    "  await new Promise((r) => setTimeout(r, 300));\n"
                    "  console.warn('second', 2);\n"
                    "  return 'done';\n"
                    "}"}});
  Seen seen;
  const Timestamp before = Timestamp::clock::now();
  RunResult r = runner.run({.skill = skill.skill(), .observer = seen.observer()});
  const Timestamp after = Timestamp::clock::now();
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);

  const std::vector<std::string> lines = seen.snapshot();
  const size_t first = index_of(lines, "log:info:first");
  const size_t second = index_of(lines, "log:warn:second 2");
  ASSERT_LT(first, lines.size()) << ::testing::PrintToString(lines);
  ASSERT_LT(second, lines.size()) << ::testing::PrintToString(lines);
  EXPECT_LT(first, second);
  // Streamed, not handed over at the end: the second line came a timer's wait after the first.
  EXPECT_GE(seen.times[second] - seen.times[first], 250ms);
  EXPECT_GE(seen.times[first], before);
  EXPECT_LE(seen.times[second], after);
  for (size_t i = 1; i < seen.times.size(); ++i) EXPECT_LE(seen.times[i - 1], seen.times[i]);
  // Never on the caller's thread for log lines, and never two calls at once.
  EXPECT_NE(seen.threads[first], std::this_thread::get_id());
  EXPECT_EQ(seen.max_concurrent, 1);
  // The result still carries every line.
  ASSERT_EQ(r.logs.size(), 2u);
  EXPECT_EQ(r.logs[1].message, "second 2");
}

TEST(Observer, EventsNameTheStartAndEachHostCall) {
  TestRunner runner;
  TempSkill skill(
      {{"index.js",
        "export async function go() {\n"
        "  env.get('NOT_GRANTED');\n"
        "  try { await openhuman.http.get('http://127.0.0.1:9/never'); } catch (e) { log(e.name); }\n"
        "  return 1;\n"
        "}"}});
  skill.manifest().permissions.http.allow = {"https://api.example.com/"};  // not 127.0.0.1:9
  Seen seen;
  RunResult r = runner.run({.skill = skill.skill(), .export_name = "go", .observer = seen.observer()});
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  const std::vector<std::string> lines = seen.snapshot();
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "event:started:go");
  const size_t env = index_of(lines, "event:host_call:env.get NOT_GRANTED");
  const size_t http =
      index_of(lines, "event:host_call:http GET http://127.0.0.1:9/never -> PermissionDenied");
  EXPECT_LT(env, lines.size()) << ::testing::PrintToString(lines);
  EXPECT_LT(http, lines.size()) << ::testing::PrintToString(lines);
  EXPECT_LT(env, http);
  EXPECT_LT(http, index_of(lines, "log:info:PermissionDenied")) << ::testing::PrintToString(lines);
}

TEST(Observer, EventDetailIsEscapedAndCapped) {
  TestRunner runner;
  TempSkill skill(
      {{"index.js", "export default () => { env.get('A\\n\\u001b[2J' + 'x'.repeat(1000)); return 0; }"}});
  Seen seen;
  RunResult r = runner.run({.skill = skill.skill(), .observer = seen.observer()});
  ASSERT_EQ(r.outcome, Outcome::ok) << describe(r);
  bool found = false;
  for (const std::string& line : seen.snapshot()) {
    if (!line.starts_with("event:host_call:env.get ")) continue;
    found = true;
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find('\x1b'), std::string::npos);
    EXPECT_NE(line.find("A\\n\\x1b[2J"), std::string::npos) << line;
    EXPECT_LE(line.size(), std::string("event:host_call:").size() + 512);
  }
  EXPECT_TRUE(found);
}

TEST(Observer, AnObserverThatThrowsDoesNotDisturbTheRun) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default () => { log('a'); log('b'); return 7; }"}});
  int calls = 0;
  Observer o;
  o.on_log = [&](const LogEntry&, Timestamp) {
    ++calls;
    throw std::runtime_error("observer bug");
  };
  RunResult r = runner.run({.skill = skill.skill(), .observer = o});
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "7");
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(r.logs.size(), 2u);
}

TEST(Observer, AnAbandonedRunKeepsItsLinesAndIsNotObservedAfterRunReturns) {
  SKIP_IN_PROCESS_MODE(
      "hold() is an in-process testing hook: a worker stuck in a native call is killed, never "
      "abandoned (WorkerWall.NativeLoopEndsAsTimeoutAtTheDeadlineAndTheCpuStops)");
  HoldHook hook;
  InProcessRunner runner;
  TempSkill skill({{"index.js", "export default () => { log('before'); hold(); log('after'); return 1; }"}});
  skill.manifest().limits.timeout_ms = 100;
  Seen seen;
  RunResult r = runner.run({.skill = skill.skill(), .observer = seen.observer()});
  ASSERT_EQ(r.outcome, Outcome::timeout) << describe(r);
  ASSERT_EQ(r.logs.size(), 1u) << describe(r);
  EXPECT_EQ(r.logs[0].message, "before");
  EXPECT_GE(r.usage.wall_ms, 1000u);  // the deadline plus the grace the watchdog waited

  HoldHook::release();
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (runner.abandoned_runs() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(runner.abandoned_runs(), 0u);
  const std::vector<std::string> lines = seen.snapshot();
  EXPECT_LT(index_of(lines, "log:info:before"), lines.size());
  EXPECT_EQ(index_of(lines, "log:info:after"), lines.size()) << "observed after run() returned";
}

// ---- cancellation ------------------------------------------------------------------------------

/// Cancels `token` after `delay` from another thread; joins on destruction.
class CancelLater {
 public:
  CancelLater(CancelToken token, std::chrono::milliseconds delay)
      : thread_([token, delay] {
          std::this_thread::sleep_for(delay);
          token.cancel();
        }) {}
  ~CancelLater() { thread_.join(); }
  CancelLater(const CancelLater&) = delete;
  CancelLater& operator=(const CancelLater&) = delete;

 private:
  std::thread thread_;
};

TEST(Cancel, StopsARunningLoopWithOutcomeCancelledAndKeepsTheLogs) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default () => { log('looping'); for (;;) {} }"}});
  skill.manifest().limits.timeout_ms = 30'000;
  skill.manifest().limits.steps = Limits::kMaxSteps;
  CancelToken cancel;
  Seen seen;
  const auto start = std::chrono::steady_clock::now();
  RunResult r;
  {
    CancelLater later(cancel, 200ms);
    r = runner.run({.skill = skill.skill(), .observer = seen.observer(), .cancel = cancel});
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.outcome, Outcome::cancelled) << describe(r);
  EXPECT_EQ(to_string(r.outcome), "cancelled");
  EXPECT_EQ(exit_code(r.outcome), 130);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->name, "Cancelled");
  EXPECT_TRUE(r.value_json.empty());
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_EQ(r.logs[0].message, "looping");
  EXPECT_LT(took, 5s);  // not the 30 s deadline
  EXPECT_TRUE(cancel.cancelled());
  EXPECT_LT(index_of(seen.snapshot(), "event:cancel_requested:"), seen.snapshot().size());
}

TEST(Cancel, WakesARunWaitingForATimer) {
  InProcessRunner runner;  // abandoned_runs() below is InProcessRunner's
  TempSkill skill({{"index.js", "export default () => new Promise((r) => setTimeout(r, 60000))"}});
  skill.manifest().limits.timeout_ms = 30'000;
  CancelToken cancel;
  const auto start = std::chrono::steady_clock::now();
  RunResult r;
  {
    CancelLater later(cancel, 100ms);
    r = runner.run({.skill = skill.skill(), .cancel = cancel});
  }
  EXPECT_EQ(r.outcome, Outcome::cancelled) << describe(r);
  // Woken at once: well under the 1 s an abandoned run would take.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);
  EXPECT_EQ(runner.abandoned_runs(), 0u);
}

TEST(Cancel, ATokenCancelledBeforeRunStartsNothing) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default () => { log('ran'); return 1; }"}});
  CancelToken cancel;
  cancel.cancel();
  cancel.cancel();  // idempotent
  RunResult r = runner.run({.skill = skill.skill(), .cancel = cancel});
  EXPECT_EQ(r.outcome, Outcome::cancelled) << describe(r);
  EXPECT_TRUE(r.logs.empty());
  EXPECT_EQ(r.usage.steps, 0u);
}

TEST(Cancel, AnUntriggeredTokenChangesNothingAndCopiesShareOneState) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default (x) => x * 2"}});
  CancelToken cancel;
  RunResult r = runner.run({.skill = skill.skill(), .input_json = "21", .cancel = cancel});
  EXPECT_EQ(r.outcome, Outcome::ok) << describe(r);
  EXPECT_EQ(r.value_json, "42");
  const CancelToken copy = cancel;  // NOLINT(performance-unnecessary-copy-initialization): the point
  copy.cancel();
  EXPECT_TRUE(cancel.cancelled());
  EXPECT_FALSE(CancelToken().cancelled());
}

TEST(Cancel, OneTokenStopsEveryRunUsingIt) {
  TestRunner runner;
  TempSkill skill({{"index.js", "export default () => { for (;;) {} }"}});
  skill.manifest().limits.timeout_ms = 30'000;
  skill.manifest().limits.steps = Limits::kMaxSteps;
  CancelToken cancel;
  RunResult a;
  RunResult b;
  {
    CancelLater later(cancel, 200ms);
    std::thread other([&] { a = runner.run({.skill = skill.skill(), .cancel = cancel}); });
    b = runner.run({.skill = skill.skill(), .cancel = cancel});
    other.join();
  }
  EXPECT_EQ(a.outcome, Outcome::cancelled) << describe(a);
  EXPECT_EQ(b.outcome, Outcome::cancelled) << describe(b);
}

TEST(Cancel, DuringAnUninterruptibleNativeCallTheRunIsAbandonedAsCancelled) {
  SKIP_IN_PROCESS_MODE(
      "hold() is an in-process testing hook: a worker stuck in a native call is killed, never "
      "abandoned (WorkerWall.NativeLoopEndsAsTimeoutAtTheDeadlineAndTheCpuStops)");
  HoldHook hook;
  InProcessRunner runner;
  TempSkill skill({{"index.js", "export default () => { log('holding'); hold(); return 1; }"}});
  skill.manifest().limits.timeout_ms = 30'000;
  CancelToken cancel;
  RunResult r;
  {
    CancelLater later(cancel, 100ms);
    r = runner.run({.skill = skill.skill(), .cancel = cancel});
  }
  EXPECT_EQ(r.outcome, Outcome::cancelled) << describe(r);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("abandoned"), std::string::npos) << r.error->message;
  ASSERT_EQ(r.logs.size(), 1u);
  EXPECT_EQ(r.logs[0].message, "holding");
  EXPECT_EQ(runner.abandoned_runs(), 1u);
  HoldHook::release();
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (runner.abandoned_runs() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(runner.abandoned_runs(), 0u);
}

TEST(Cancel, SubscriptionsRunOnceAndNeverAfterReset) {
  CancelToken token;
  int a = 0;
  int b = 0;
  CancelToken::Subscription sa = token.subscribe([&] { ++a; });
  CancelToken::Subscription sb = token.subscribe([&] { ++b; });
  sb.reset();
  token.cancel();
  token.cancel();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 0);
  int c = 0;
  CancelToken::Subscription sc = token.subscribe([&] { ++c; });  // already cancelled: at once
  EXPECT_EQ(c, 1);
}

}  // namespace
}  // namespace skillbox::testing
