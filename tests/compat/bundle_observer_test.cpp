// A bundle's events (platform.notify, memory.insert, oauth.revoke, cron registrations) reach the
// embedder's Observer while the run goes on, as RunEvent::Kind::skill_event, in both isolation modes.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using testing::Bundle;
using testing::describe_run;

struct Seen {
  std::mutex mutex;
  std::vector<RunEvent> events;
  std::vector<Timestamp> event_times;
  std::vector<std::pair<std::string, Timestamp>> logs;

  Observer observer() {
    Observer o;
    o.on_event = [this](const RunEvent& e, Timestamp at) {
      std::lock_guard<std::mutex> lock(mutex);
      events.push_back(e);
      event_times.push_back(at);
    };
    o.on_log = [this](const LogEntry& e, Timestamp at) {
      std::lock_guard<std::mutex> lock(mutex);
      logs.emplace_back(e.message, at);
    };
    return o;
  }
};

TEST(BundleObserver, EventsAreStreamedAsTheyHappenAndMatchTheResultsEvents) {
  Bundle b("notes", "");
  // Each event is followed by a wait, so an event that is only handed over at the end of the run
  // would arrive after the log line written after the wait.
  b.write("index.js", R"JS(
var __skill_bundle = (() => {
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  const skill = { tools: [{ name: 'events', async execute() {
    platform.notify('Build', 'done');
    await wait(300);
    console.log('after notify');
    memory.insert({ title: 't', content: 'c', priority: 2 });
    cron.register('nightly', '0 3 * * *');
    cron.unregister('nightly');
    return 'ok';
  } }] };
  return { default: skill };
})();
globalThis.__skill = { default: __skill_bundle.default };
)JS");
  testing::TestRunner runner(testing::host(b.data()));
  Seen seen;
  Invocation inv{.skill = b.skill(), .export_name = "tool:events", .input_json = "{}", .overrides = {}};
  inv.observer = seen.observer();
  const RunResult r = runner.run(inv);
  const Timestamp returned = Timestamp::clock::now();
  ASSERT_EQ(r.outcome, Outcome::ok) << describe_run(r);

  std::lock_guard<std::mutex> lock(seen.mutex);
  std::vector<std::string> streamed;
  std::vector<Timestamp> streamed_at;
  for (size_t i = 0; i < seen.events.size(); ++i) {
    const RunEvent& e = seen.events[i];
    if (e.kind != RunEvent::Kind::skill_event) {
      EXPECT_TRUE(e.data_json.empty()) << to_string(e.kind) << " " << e.detail;
      continue;
    }
    ASSERT_GT(i, 0u);
    EXPECT_EQ(seen.events[i - 1].kind, RunEvent::Kind::host_call);
    EXPECT_EQ(seen.events[i - 1].detail, "event " + e.detail) << "right after its host call";
    streamed.push_back(e.detail + " " + e.data_json);
    streamed_at.push_back(seen.event_times[i]);
  }
  std::vector<std::string> returned_events;
  for (const Event& e : r.events) returned_events.push_back(e.type + " " + e.data_json);
  EXPECT_EQ(streamed, returned_events) << "the same events, in the same order, as RunResult::events";
  ASSERT_EQ(streamed.size(), 4u);
  EXPECT_EQ(streamed[0], R"(notify {"title":"Build","body":"done"})");
  EXPECT_EQ(json::parse(seen.events.empty() ? "{}" : r.events[1].data_json)["priority"], 2);
  EXPECT_EQ(r.events[2].type, "cron.register");
  EXPECT_EQ(r.events[3].type, "cron.unregister");

  // The notification arrived before the line logged 300 ms after it, and long before run() returned.
  Timestamp after_notify{};
  for (const auto& [message, at] : seen.logs)
    if (message == "after notify") after_notify = at;
  ASSERT_NE(after_notify, Timestamp{}) << "the log line was streamed";
  EXPECT_LT(streamed_at[0], after_notify);
  EXPECT_GE(after_notify - streamed_at[0], 250ms);
  EXPECT_GE(returned - streamed_at[0], 250ms);
  for (const Timestamp& at : streamed_at) EXPECT_LE(at, returned);
}

TEST(BundleObserver, RevokeIsStreamedAndAnEventOverTheBudgetIsNotStreamed) {
  Bundle b("notes", "");
  b.write("index.js", R"JS(
globalThis.__skill = { default: { tools: [{ name: 'flood', execute() {
  oauth.revoke();
  let n = 1;
  try { for (;; n++) platform.notify('n' + n, ''); } catch (e) { return n + ' ' + e.name; }
} }] } };
)JS");
  testing::TestRunner runner(testing::host(b.data()));
  Seen seen;
  Invocation inv{.skill = b.skill(), .export_name = "tool:flood", .input_json = "{}", .overrides = {}};
  inv.observer = seen.observer();
  const RunResult r = runner.run(inv);
  ASSERT_EQ(r.outcome, Outcome::ok) << describe_run(r);
  const json v = json::parse(r.value_json);
  // oauth.revoke plus 999 notifications fill the budget of 1000 events; the 1000th notify is refused.
  EXPECT_EQ(v["content"][0]["text"], "1000 QuotaExceeded");
  std::lock_guard<std::mutex> lock(seen.mutex);
  size_t streamed = 0;
  std::string first;
  std::string last_host_call;
  for (const RunEvent& e : seen.events) {
    if (e.kind == RunEvent::Kind::skill_event) {
      if (streamed++ == 0) first = e.detail + " " + e.data_json;
    } else if (e.kind == RunEvent::Kind::host_call) {
      last_host_call = e.detail;
    }
  }
  EXPECT_EQ(streamed, r.events.size());
  EXPECT_EQ(streamed, 1000u);
  EXPECT_EQ(first, R"(oauth.revoke {"credentialId":null})");
  EXPECT_EQ(last_host_call, "event notify -> QuotaExceeded");
}

}  // namespace
}  // namespace skillbox
