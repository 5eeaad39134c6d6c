// log() and console.*: levels, host calls, the run's log budget end to end with the real log
// capability behind a fake Bridge, and the docs/security.md "Log flooding" and "Formatting skill values"
// cases.
#include "bindings/console.h"

#include <gtest/gtest.h>

#include <string>

#include "bindings/js_harness.h"
#include "capabilities/log/log_capability.h"

namespace skillbox::bindings {
namespace {

using capabilities::LogCapability;
using testing::JsHarness;

// A harness whose Bridge hands log requests to a real LogCapability, as runner::HostEndpoint does.
struct LoggingRun {
  LoggingRun() {
    js.bridge.responder = [this](const bus::Request& r) {
      return capability.handle(std::get<bus::LogRequest>(r));
    };
  }
  LogCapability capability;
  JsHarness js;
};

// The next invocation in the same process behaves normally (docs/security.md, every case).
void expect_next_run_is_normal() {
  LoggingRun next;
  ASSERT_TRUE(next.js.eval("log('next run', 1)").ok);
  const std::vector<LogEntry> entries = next.capability.take();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message, "next run 1");
}

TEST(Console, LevelsAndOneHostCallPerMessage) {
  JsHarness js;
  ASSERT_TRUE(js.eval("log('a'); console.log('b'); console.info('c'); console.warn('d'); console.error('e');"
                      "console.debug('f', 2)")
                  .ok);
  const std::vector<bus::LogRequest> logs = js.bridge.logs();
  ASSERT_EQ(logs.size(), 6u);
  EXPECT_EQ(js.bridge.requests.size(), 6u);
  const bus::LogLevel expected[] = {bus::LogLevel::info, bus::LogLevel::info,  bus::LogLevel::info,
                                    bus::LogLevel::warn, bus::LogLevel::error, bus::LogLevel::debug};
  for (size_t i = 0; i < logs.size(); ++i) EXPECT_EQ(logs[i].level, expected[i]) << i;
  EXPECT_EQ(logs[5].text, "f 2");
}

TEST(Console, ReturnsUndefinedAndNeedsNoReceiver) {
  JsHarness js;
  EXPECT_EQ(
      js.eval("const l = console.warn; [l('x'), log.call(42, 'y'), typeof console, log.name, log.length]")
          .value,
      R"([null,null,"object","log",0])");
  EXPECT_EQ(js.bridge.texts(), (std::vector<std::string>{"x", "y"}));
}

TEST(Console, SecurityLogFloodingHugeStrings) {
  // 100,000 calls of log with a 1 MiB string: each message is cut to the per-message cap, the run
  // keeps 32 of them (256 KiB) and ONE marker, and once the budget is gone nothing more is formatted
  // or sent.
  LoggingRun run;
  const testing::JsResult r =
      run.js.eval("const s = 'x'.repeat(1 << 20); for (let i = 0; i < 100000; i++) log(s); 'done'");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.value, "done");

  const size_t fitting = LogCapability::kMaxRunBytes / LogCapability::kMaxMessageBytes;  // 32
  EXPECT_EQ(run.js.bridge.requests.size(), fitting + 1);  // the last one got QuotaExceeded
  const std::vector<LogEntry> entries = run.capability.take();
  ASSERT_EQ(entries.size(), fitting + 1);
  const std::string cut =
      std::string(LogCapability::kMaxMessageBytes - LogCapability::kCutSuffix.size(), 'x') +
      std::string(LogCapability::kCutSuffix);
  for (size_t i = 0; i < fitting; ++i) {
    EXPECT_EQ(entries[i].message, cut) << i;
    EXPECT_EQ(entries[i].level, LogEntry::Level::info);
  }
  EXPECT_EQ(entries.back().message, LogCapability::budget_marker());
  EXPECT_EQ(entries.back().level, LogEntry::Level::warn);

  // The skill goes on normally after the budget is gone, and logging still returns undefined.
  EXPECT_EQ(run.js.eval("typeof log('still quiet')").value, "undefined");
  EXPECT_EQ(run.js.bridge.requests.size(), fitting + 1);
  expect_next_run_is_normal();
}

TEST(Console, SecurityLogFloodingManyLines) {
  LoggingRun run;
  ASSERT_TRUE(run.js.eval("for (let i = 0; i < 100000; i++) console.log('line', i)").ok);
  const std::vector<LogEntry> entries = run.capability.take();
  ASSERT_EQ(entries.size(), LogCapability::kMaxRunLines + 1);
  EXPECT_EQ(entries[0].message, "line 0");
  EXPECT_EQ(entries[LogCapability::kMaxRunLines - 1].message, "line 999");
  EXPECT_EQ(entries.back().message, LogCapability::budget_marker());
  size_t markers = 0;
  for (const LogEntry& e : entries) markers += e.message == LogCapability::budget_marker() ? 1 : 0;
  EXPECT_EQ(markers, 1u);
  EXPECT_EQ(run.js.bridge.requests.size(), LogCapability::kMaxRunLines + 1);
  expect_next_run_is_normal();  // a new run (new capability) has a fresh budget
}

TEST(Console, SecurityForgedHostLineAndTerminalControlsAreEscaped) {
  LoggingRun run;
  ASSERT_TRUE(run.js.eval(R"(log('done\n[host] skill=other status=ok'); log('\x1b[2J\u202e'))").ok);
  const std::vector<LogEntry> entries = run.capability.take();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].message, "done\\n[host] skill=other status=ok");
  EXPECT_EQ(entries[1].message, "\\x1b[2J\\u202e");
  expect_next_run_is_normal();
}

TEST(Console, SecurityLoopingGetterIsStoppedByTheStepLimit) {
  JsHarness js;
  js.set_step_limit(50);
  const testing::JsResult r = js.eval("log({get x() { for (;;) {} }})");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.interrupted) << r.error;  // not swallowed as [Getter threw]
  EXPECT_TRUE(js.bridge.requests.empty());
  expect_next_run_is_normal();
}

TEST(Console, SecurityProxyWithLoopingOwnKeysIsStoppedByTheStepLimit) {
  JsHarness js;
  js.set_step_limit(50);
  const testing::JsResult r =
      js.eval("try { log(new Proxy({}, {ownKeys() { for (;;) {} }})) } catch (e) { 'caught' }");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.interrupted) << r.error;  // the skill's catch cannot keep it running
  EXPECT_TRUE(js.bridge.requests.empty());
  expect_next_run_is_normal();
}

TEST(Console, SecurityToJsonLoopIsStoppedByTheStepLimit) {
  JsHarness js;
  js.set_step_limit(50);
  const testing::JsResult r = js.eval("log({toJSON() { while (true) {} }})");
  EXPECT_TRUE(r.interrupted) << r.error;
  expect_next_run_is_normal();
}

TEST(Console, GetterThatLogsIsReentrant) {
  JsHarness js;
  ASSERT_TRUE(js.eval("log('outer', {get x() { log('inner'); return 1; }})").ok);
  EXPECT_EQ(js.bridge.texts(), (std::vector<std::string>{"inner", R"(outer {"x":1})"}));
}

TEST(Console, RecursiveLoggingGetterEndsTheRunAtTheStackLimit) {
  // A getter that logs its own object recurses until the JS stack limit. The engine's stack-overflow
  // patch (patches/0002) makes that overflow uncatchable, so the formatter cannot swallow it as
  // [Getter threw] and the skill cannot go on: the run ends, and the host stays up.
  JsHarness js;
  const testing::JsResult r = js.eval("const o = {get x() { log(o); return 1; }}; log(o); 'ok'");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("stack overflow"), std::string::npos) << r.error;
  EXPECT_TRUE(js.bridge.texts().empty());  // no half-formatted message was sent
  expect_next_run_is_normal();
}

TEST(Console, OtherErrorRepliesDoNotCloseTheLog) {
  JsHarness js;
  js.bridge.responder = [](const bus::Request&) {
    return bus::Reply{bus::ErrorReply{bus::ErrorCode::IoError, "sink failed"}};
  };
  ASSERT_TRUE(js.eval("log(1); log(2)").ok);  // never thrown to the skill
  EXPECT_EQ(js.bridge.requests.size(), 2u);
}

}  // namespace
}  // namespace skillbox::bindings
