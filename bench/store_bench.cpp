// store.get / store.set from a skill against direct SQLite calls doing the same database work, as a
// ratio measured in the same run.
//
// The skill side is a whole invocation through InProcessRunner (fresh runtime, host API, the store opened
// on first use) whose export makes N calls; the direct side makes the same N calls on an already open
// sqlite3 connection to the same file with the same settings (WAL, synchronous=FULL): a prepared SELECT
// per get, and BEGIN IMMEDIATE + upsert + COMMIT per set. Both run alternately in one loop, so machine
// load affects them alike. Wall time: a set's cost is mostly its fsync, which thread CPU time would miss.
//
// Arguments: calls per invocation, and 1 to put the data directory on /dev/shm (tmpfs: fsync is free,
// which shows the CPU overhead of the sandbox path) instead of the build machine's disk.
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "skillbox/skillbox.h"
#include "skillbox/store.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kKeys = 100;  // keys k0..k99; calls cycle through them

const char* kSkillSource = R"JS(
export default function ({op, n}) {
  let sum = 0;
  if (op === 'get') {
    for (let i = 0; i < n; i++) sum += store.get('k' + (i % 100)).v;
  } else {
    for (let i = 0; i < n; i++) store.set('k' + (i % 100), {v: i, s: 'payload-0123456789'});
  }
  return sum;
}
)JS";

std::string value_json(int i) {
  return R"({"v":)" + std::to_string(i) + R"(,"s":"payload-0123456789"})";
}

void check(bool ok, const char* what) {
  if (!ok) {
    // About to abort: if stderr cannot take the reason, there is no better place to report it.
    (void)std::fprintf(stderr, "store_bench: %s\n", what);
    std::abort();
  }
}

/// A skill folder and a data directory with the store filled, removed at the end.
class Fixture {
 public:
  explicit Fixture(bool on_tmpfs) {
    std::string pattern =
        ((on_tmpfs ? fs::path("/dev/shm") : fs::temp_directory_path()) / "skillbox-bench-XXXXXX").string();
    check(::mkdtemp(pattern.data()) != nullptr, "mkdtemp failed");
    root_ = pattern;
    fs::create_directories(root_ / "skill");
    std::ofstream(root_ / "skill" / "skill.json")
        << R"({"id": "bench", "name": "Bench", "version": "1.0.0", "entry": "index.js"})";
    std::ofstream(root_ / "skill" / "index.js") << kSkillSource;
    auto db = skillbox::StoreDatabase::open(skillbox::StoreDatabase::path_in(data_dir()));
    check(db.ok(), "cannot create the store");
    auto s = db->skill("bench", {});
    check(s.ok(), "bad skill id");
    for (int i = 0; i < kKeys; ++i) check(s->set("k" + std::to_string(i), value_json(i)).ok(), "fill failed");
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  [[nodiscard]] fs::path skill_dir() const { return root_ / "skill"; }
  [[nodiscard]] fs::path data_dir() const { return root_ / "data"; }

 private:
  fs::path root_;
};

/// The direct side: one sqlite3 connection with the store's settings and prepared statements.
class Direct {
 public:
  explicit Direct(const fs::path& file) {
    check(sqlite3_open_v2(file.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) ==
              SQLITE_OK,
          "open failed");
    sqlite3_busy_timeout(db_, 5000);
    check(sqlite3_exec(db_, "PRAGMA synchronous = FULL", nullptr, nullptr, nullptr) == SQLITE_OK, "pragma");
    prepare("SELECT value FROM entries WHERE skill = ?1 AND key = ?2", &get_);
    prepare(
        "INSERT INTO entries (skill, key, value) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (skill, key) DO UPDATE SET value = excluded.value",
        &upsert_);
    prepare("BEGIN IMMEDIATE", &begin_);
    prepare("COMMIT", &commit_);
  }
  ~Direct() {
    for (sqlite3_stmt* s : {get_, upsert_, begin_, commit_}) sqlite3_finalize(s);
    sqlite3_close(db_);
  }
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  size_t get(const std::string& key) {
    bind(get_, key, {});
    check(sqlite3_step(get_) == SQLITE_ROW, "get: no row");
    const size_t n = static_cast<size_t>(sqlite3_column_bytes(get_, 0));
    sqlite3_reset(get_);
    return n;
  }
  void set(const std::string& key, const std::string& value) {
    step(begin_);
    bind(upsert_, key, value);
    step(upsert_);
    step(commit_);
  }

 private:
  void prepare(const char* sql, sqlite3_stmt** out) {
    check(sqlite3_prepare_v2(db_, sql, -1, out, nullptr) == SQLITE_OK, sql);
  }
  static void bind(sqlite3_stmt* s, const std::string& key, const std::string& value) {
    sqlite3_bind_text(s, 1, "bench", 5, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
    if (!value.empty())
      sqlite3_bind_text(s, 3, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  }
  static void step(sqlite3_stmt* s) {
    check(sqlite3_step(s) == SQLITE_DONE, "step failed");
    sqlite3_reset(s);
  }
  sqlite3* db_ = nullptr;
  sqlite3_stmt* get_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* begin_ = nullptr;
  sqlite3_stmt* commit_ = nullptr;
};

void run_ratio(benchmark::State& state, const char* op) {
  const int n = static_cast<int>(state.range(0));
  Fixture fixture(state.range(1) != 0);
  auto skill = skillbox::Skill::load(fixture.skill_dir());
  check(skill.ok(), "skill does not load");
  skillbox::HostOptions host;
  host.data_dir = fixture.data_dir();
  skillbox::InProcessRunner runner(host);
  const skillbox::Invocation invocation{
      .skill = *skill,
      .export_name = "",
      .input_json = std::string(R"({"op":")") + op + R"(","n":)" + std::to_string(n) + "}",
      .overrides = {}};
  Direct direct(skillbox::StoreDatabase::path_in(fixture.data_dir()));
  const bool is_get = std::string(op) == "get";

  Clock::duration in_skill{};
  Clock::duration in_sqlite{};
  for (auto _ : state) {
    const auto t0 = Clock::now();
    const skillbox::RunResult r = runner.run(invocation);
    const auto t1 = Clock::now();
    check(r.outcome == skillbox::Outcome::ok, "the skill failed");
    size_t bytes = 0;
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + std::to_string(i % kKeys);
      if (is_get) {
        bytes += direct.get(key);
      } else {
        direct.set(key, value_json(i));
      }
    }
    benchmark::DoNotOptimize(bytes);
    const auto t2 = Clock::now();
    in_skill += t1 - t0;
    in_sqlite += t2 - t1;
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["skill_us_per_invocation"] =
      std::chrono::duration<double, std::micro>(in_skill).count() / runs;
  if (n == 0) return;  // the invocation alone: no store call, so the store is never opened
  const double calls = runs * n;
  const double skill_us = std::chrono::duration<double, std::micro>(in_skill).count() / calls;
  const double sqlite_us = std::chrono::duration<double, std::micro>(in_sqlite).count() / calls;
  state.counters["skill_us_per_call"] = skill_us;
  state.counters["sqlite_us_per_call"] = sqlite_us;
  state.counters["ratio"] = skill_us / sqlite_us;
}

void BM_StoreGetRatio(benchmark::State& state) {
  run_ratio(state, "get");
}
void BM_StoreSetRatio(benchmark::State& state) {
  run_ratio(state, "set");
}

// {calls per invocation, tmpfs}. Zero calls is the invocation alone (the store is opened lazily, so
// never); one call adds opening the store; many calls show the per-call cost.
BENCHMARK(BM_StoreGetRatio)->Args({0, 0})->Args({1, 0})->Args({1000, 0})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StoreSetRatio)
    ->Args({1, 0})
    ->Args({20, 0})
    ->Args({1, 1})
    ->Args({200, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
