// A bundle's database under limits, in the suite's isolation mode (both, through TestRunner): a costly
// SQL call ends at the deadline and leaves no work behind; two invocations of one bundle lose no
// update; the database keeps a run's changes only when it ended ok or error (docs/openhuman.md "db").
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "compat/bundle_support.h"
#include "skill_fixture.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using testing::Bundle;
using testing::describe_run;

// Each tool catches what db throws and returns it, so a test sees the host error itself.
constexpr const char* kBundle = R"JS(
const COSTLY = {
  replace: "SELECT length(replace(printf('%.*c', 4000000, 'a'), printf('%.*c', 500000, 'a')||'b', 'x')) AS n",
  instr: "SELECT instr(printf('%.*c', 4000000, 'a'), printf('%.*c', 500000, 'a')||'b') AS n",
  like: "SELECT printf('%.*c', 4000000, 'a') LIKE '%' || printf('%.*c', 4000, 'a') || 'b%' AS n",
  glob: "SELECT printf('%.*c', 4000000, 'a') GLOB '*' || printf('%.*c', 4000, 'a') || 'b*' AS n",
};
const caught = (f) => { try { return { ok: f() }; } catch (e) { return { name: e.name, message: e.message }; } };
const setup = () => db.exec("CREATE TABLE IF NOT EXISTS w (v TEXT)");
globalThis.__skill = { default: { tools: [
  { name: "costly", description: "", execute(a) { return caught(() => db.get(COSTLY[a.kind])); } },
  { name: "bump", description: "", execute() {
      db.exec("CREATE TABLE IF NOT EXISTS c (n INTEGER)");
      if (!db.get("SELECT n FROM c")) db.exec("INSERT INTO c VALUES (0)");
      db.exec("UPDATE c SET n = n + 1");
      return db.get("SELECT n FROM c").n; } },
  { name: "count", description: "", execute() {
      return caught(() => db.all("SELECT v FROM w ORDER BY v").map((r) => r.v)); } },
  { name: "write", description: "", execute(a) { setup(); db.exec("INSERT INTO w VALUES (?)", [a.v]); return "written"; } },
  { name: "write_then_throw", description: "", execute(a) {
      setup(); db.exec("INSERT INTO w VALUES (?)", [a.v]); throw new Error("after the write"); } },
  { name: "write_then_spin", description: "", execute(a) {
      setup(); db.exec("INSERT INTO w VALUES (?)", [a.v]); for (;;) {} } },
  { name: "write_after_limit", description: "", execute(a) {
      setup();
      const first = caught(() => db.get(COSTLY.replace));
      const second = caught(() => db.exec("INSERT INTO w VALUES (?)", [a.v]));
      return { first, second }; } },
  { name: "hold", description: "", execute() { setup(); return caught(() => db.get(COSTLY.replace)); } },
  { name: "query", description: "", execute(a) { return caught(() => db.get(a.sql)); } },
  { name: "touch", description: "", execute() { return caught(() => db.get("SELECT count(*) AS n FROM w")); } },
]}};
)JS";

class BundleDb : public ::testing::Test {
 protected:
  BundleDb()
      : bundle_("notes", testing::grants({}, {{"db", {{"quota_bytes", 1 << 20}}}}, {{"timeout_ms", 5000}})),
        runner_(testing::host(bundle_.data())),
        skill_((bundle_.write("index.js", kBundle), bundle_.skill())) {}

  RunResult call(const std::string& tool, const std::string& input = "{}", uint64_t timeout_ms = 5000) {
    LimitOverrides o;
    o.timeout_ms = timeout_ms;
    return runner_.run(
        Invocation{.skill = skill_, .export_name = "tool:" + tool, .input_json = input, .overrides = o});
  }

  /// The tool's return value (the ToolResult's text, parsed).
  json result(const RunResult& r) {
    const json v = testing::value_of(r);
    if (!v.is_object()) return nullptr;
    return json::parse(v["content"][0]["text"].get<std::string>());
  }

  json rows() { return result(call("count"))["ok"]; }

  Bundle bundle_;
  testing::TestRunner runner_;
  Skill skill_;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

TEST_F(BundleDb, ACostlySqlCallEndsAtTheDeadlineAndLeavesNoWorkBehind) {
  for (const char* kind : {"replace", "instr", "like", "glob"}) {
    const auto start = Clock::now();
    const RunResult r = call("costly", json{{"kind", kind}}.dump(), 300);
    const auto took = Clock::now() - start;
    EXPECT_EQ(r.outcome, Outcome::timeout) << kind << ": " << describe_run(r);
    // The rule is ~50 ms past the deadline; the margin is for a loaded test machine.
    EXPECT_LT(took, std::chrono::milliseconds(300 + 250)) << kind;
    // Nothing keeps a core busy once run() returned: no abandoned thread, no statement in the host.
    const double cpu_before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_LT(cpu_seconds() - cpu_before, 0.1) << kind << ": CPU was used after run() returned";
  }
  // Later runs are served as usual (in-process: no TooManyAbandonedRuns).
  EXPECT_EQ(result(call("bump")), 1);
}

TEST_F(BundleDb, TwoConcurrentInvocationsLoseNoUpdate) {
  constexpr int kEach = 12;
  std::vector<std::thread> threads;
  std::vector<int> failures(2, 0);
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i)
        if (call("bump").outcome != Outcome::ok) ++failures[static_cast<size_t>(t)];
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures[0] + failures[1], 0);
  EXPECT_EQ(result(call("bump")), 2 * kEach + 1) << "every increment of both invocations was kept";
}

TEST_F(BundleDb, AWaiterForTheDatabaseGivesUpByItsDeadline) {
  ASSERT_EQ(call("write", R"({"v": "seed"})").outcome, Outcome::ok);
  std::thread holder([&] { (void)call("hold", "{}", 1500); });  // holds the database until its deadline
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto start = Clock::now();
  const RunResult r = call("touch", "{}", 300);
  const auto took = Clock::now() - start;
  holder.join();
  EXPECT_LT(took, std::chrono::milliseconds(300 + 250)) << describe_run(r);
  if (r.outcome == Outcome::ok) {
    EXPECT_EQ(result(r)["name"], "Timeout") << describe_run(r);
  } else {
    EXPECT_EQ(r.outcome, Outcome::timeout) << describe_run(r);
  }
}

TEST_F(BundleDb, ARunKeepsItsChangesOnlyWhenItEndedOkOrError) {
  ASSERT_EQ(call("write", R"({"v": "ok"})").outcome, Outcome::ok);
  EXPECT_EQ(call("write_then_throw", R"({"v": "error"})").outcome, Outcome::error);
  const RunResult spun = call("write_then_spin", R"({"v": "a limit"})", 300);
  EXPECT_TRUE(spun.outcome == Outcome::timeout || spun.outcome == Outcome::step_limit) << describe_run(spun);
  // A write attempted after a limit, in a catch, is refused and nothing of the run is kept.
  const RunResult after = call("write_after_limit", R"({"v": "after a limit"})", 300);
  EXPECT_EQ(after.outcome, Outcome::timeout) << describe_run(after);
  EXPECT_EQ(rows(), json::array({"error", "ok"}));
}

TEST_F(BundleDb, ADatabaseFileWrittenBySqliteItselfIsReadAndKeptInItsFormat) {
  // What an older skillbox left: a plain SQLite file at DATA/skills/<id>/db.sqlite.
  const std::filesystem::path dir = bundle_.data() / "skills" / "notes";
  std::filesystem::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "db.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE w (v TEXT); INSERT INTO w VALUES ('from before')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(rows(), json::array({"from before"}));
  ASSERT_EQ(call("write", R"({"v": "new"})").outcome, Outcome::ok);
  // The stored image is a database SQLite itself reads.
  ASSERT_EQ(sqlite3_open_v2((dir / "db.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM w", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 2);
  sqlite3_finalize(s);
  sqlite3_close(db);
}

TEST_F(BundleDb, AHugeResultEndsWithinTheMemoryLimit) {
  // 3 MB of blob is 12 MB of JSON text, and far more as JS values: it must end as a refusal or the
  // memory limit, with the host side's peak inside limits.memory_mb (before: a 16 MB blob made the
  // host grow by 605 MB while host_peak_bytes said 450 bytes).
  for (const char* sql : {"SELECT zeroblob(3000000) AS b", "SELECT printf('%.*c', 3000000, '[') AS s",
                          "SELECT zeroblob(5000000) AS a, zeroblob(5000000) AS b"}) {
    LimitOverrides o;
    o.memory_bytes = 32ull << 20;
    const RunResult r = runner_.run(Invocation{.skill = skill_,
                                               .export_name = "tool:query",
                                               .input_json = json{{"sql", sql}}.dump(),
                                               .overrides = o});
    if (r.outcome == Outcome::ok) {
      const json v = result(r);
      EXPECT_TRUE(v.contains("ok") || v["name"] == "PayloadTooLarge")
          << sql << ": " << v.dump().substr(0, 200);
    } else {
      EXPECT_EQ(r.outcome, Outcome::memory_limit) << sql << ": " << describe_run(r);
    }
    EXPECT_LE(r.usage.host_peak_bytes, 32ull << 20) << sql;
  }
  EXPECT_EQ(result(call("bump")), 1) << "the runner carries on";
}

}  // namespace
}  // namespace skillbox
