// state/local_run_ledger.cpp — the local RunLedger (state/run_ledger.h): ROOT/runs.sqlite.
//
// Schema (user_version 1):
//   runs(id, skill, body, idempotency_key, state, attempts, max_attempts, fence, owner, lease_until_ms,
//        not_before_ms, created_ms, started_ms, ended_ms, status, result)
//   runs_by_key(idempotency_key) unique where a key was given; runs_due(state, not_before_ms, created_ms)
// One connection per ledger, used by one thread at a time (a mutex); other processes on the same file
// wait on SQLite's lock (busy timeout 5 s). Every write is one IMMEDIATE transaction, committed with
// synchronous=FULL: an acknowledged enqueue survives a crash.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "base/errno_text.h"
#include "base/mutex.h"
#include "base/unique_fd.h"
#include "state/file_io.h"
#include "state/run_ledger.h"

namespace skillbox::state {

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::queued:
      return "queued";
    case RunState::running:
      return "running";
    case RunState::completed:
      return "completed";
    case RunState::failed:
      return "failed";
    case RunState::dead:
      return "dead";
  }
  return "queued";
}

std::string new_run_id() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "run_";
  for (int i = 0; i < 2; ++i) {
    uint64_t v = file_io::random_u64();
    for (int d = 0; d < 16; ++d, v >>= 4) id += kHex[v & 0xf];
  }
  return id;
}

Enqueued created_run(const std::string& id, const NewRun& run, int64_t created_ms) {
  Enqueued out;
  out.run.id = id;
  out.run.skill_id = run.skill_id;
  out.run.max_attempts = std::max<uint32_t>(run.max_attempts, 1);
  out.run.created_ms = created_ms;
  out.created = true;
  if (!run.claim_for.empty()) {
    out.run.state = RunState::running;
    out.run.attempts = 1;
    out.run.started_ms = created_ms;
    out.claimed = ClaimedRun{.id = id,
                             .skill_id = run.skill_id,
                             .body = run.body,
                             .attempt = 1,
                             .max_attempts = out.run.max_attempts,
                             .fence = 1};
  }
  return out;
}

std::optional<RunState> parse_run_state(std::string_view text) {
  for (const RunState s :
       {RunState::queued, RunState::running, RunState::completed, RunState::failed, RunState::dead}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

bool is_run_id(std::string_view text) {
  if (text.size() != 36 || !text.starts_with("run_")) return false;
  for (const char c : text.substr(4)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

namespace {

constexpr int kSchemaVersion = 1;
constexpr int kBusyTimeoutMs = 5000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id              TEXT PRIMARY KEY,
  skill           TEXT NOT NULL,
  body            TEXT NOT NULL,
  idempotency_key TEXT,
  state           TEXT NOT NULL,
  attempts        INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL,
  fence           INTEGER NOT NULL DEFAULT 0,
  owner           TEXT,
  lease_until_ms  INTEGER,
  not_before_ms   INTEGER NOT NULL,
  created_ms      INTEGER NOT NULL,
  started_ms      INTEGER,
  ended_ms        INTEGER,
  status          INTEGER NOT NULL DEFAULT 0,
  result          TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS runs_by_key ON runs (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_due ON runs (state, not_before_ms, created_ms);
PRAGMA user_version = 1;
)sql";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// One prepared statement, finalized on destruction.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  [[nodiscard]] bool prepared() const { return rc_ == SQLITE_OK; }
  void bind(int i, std::string_view text) {
    sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void bind_null(int i) { sqlite3_bind_null(stmt_, i); }
  /// SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(stmt_); }
  [[nodiscard]] std::string text(int c) const {
    const auto* p = sqlite3_column_text(stmt_, c);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p),
                                      static_cast<size_t>(sqlite3_column_bytes(stmt_, c)));
  }
  [[nodiscard]] int64_t integer(int c) const { return sqlite3_column_int64(stmt_, c); }
  [[nodiscard]] bool null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

constexpr const char* kRecordColumns =
    "id, skill, state, attempts, max_attempts, created_ms, started_ms, ended_ms, status, result";

class LocalRunLedger final : public RunLedger {
 public:
  explicit LocalRunLedger(DataLayout layout) : layout_(std::move(layout)) {}
  ~LocalRunLedger() override {
    base::MutexLock lock(mu_);
    if (db_ != nullptr) sqlite3_close_v2(db_);
  }
  LocalRunLedger(const LocalRunLedger&) = delete;
  LocalRunLedger& operator=(const LocalRunLedger&) = delete;

  Result<Enqueued> enqueue(const NewRun& run) override {
    base::MutexLock lock(mu_);
    if (auto ok = open(); !ok) return ok.error();
    Transaction tx(db_);
    if (auto ok = tx.begin(); !ok) return error("starting a transaction");
    if (!run.idempotency_key.empty()) {
      Statement find(db_, "SELECT id, skill, body FROM runs WHERE idempotency_key = ?1");
      find.bind(1, run.idempotency_key);
      if (!find.prepared()) return error("looking up an idempotency key");
      const int rc = find.step();
      if (rc == SQLITE_ROW) {
        const std::string id = find.text(0);
        const bool same = find.text(1) == run.skill_id && find.text(2) == run.body;
        auto record = read(id);
        if (!record) return record.error();
        if (!*record) return error("reading the run an idempotency key names");
        Enqueued found_run;
        found_run.run = std::move(**record);
        found_run.conflict = !same;
        return found_run;
      }
      if (rc != SQLITE_DONE) return error("looking up an idempotency key");
    }
    {
      Statement pending(db_, "SELECT count(*) FROM runs WHERE state IN ('queued', 'running')");
      if (!pending.prepared() || pending.step() != SQLITE_ROW) return error("counting the pending runs");
      if (static_cast<uint64_t>(pending.integer(0)) >= run.max_pending) {
        Enqueued full;
        full.full = true;
        return full;
      }
    }
    const int64_t now = now_ms();
    const std::string id = new_run_id();
    Statement insert(
        db_,
        "INSERT INTO runs (id, skill, body, idempotency_key, state, max_attempts, not_before_ms, created_ms, "
        "attempts, fence, owner, lease_until_ms, started_ms) VALUES (?1, ?2, ?3, ?4, ?7, ?5, ?6, ?6, ?8, ?8, "
        "?9, "
        "?10, ?11)");
    insert.bind(1, id);
    insert.bind(2, run.skill_id);
    insert.bind(3, run.body);
    if (run.idempotency_key.empty()) {
      insert.bind_null(4);
    } else {
      insert.bind(4, run.idempotency_key);
    }
    insert.bind(5, static_cast<int64_t>(std::max<uint32_t>(run.max_attempts, 1)));
    insert.bind(6, now);
    const bool claim = !run.claim_for.empty();
    insert.bind(7, claim ? "running" : "queued");
    insert.bind(8, int64_t{claim ? 1 : 0});
    if (claim) {
      insert.bind(9, run.claim_for);
      insert.bind(10, now + run.claim_lease.count());
      insert.bind(11, now);
    } else {
      insert.bind_null(9);
      insert.bind_null(10);
      insert.bind_null(11);
    }
    if (!insert.prepared() || insert.step() != SQLITE_DONE) return error("storing the run");
    if (!tx.commit()) return error("committing the run");
    return created_run(id, run, now);
  }

  Result<std::optional<RunRecord>> get(std::string_view id) override {
    base::MutexLock lock(mu_);
    if (auto ok = open(); !ok) return ok.error();
    return read(id);
  }

  Result<std::vector<ClaimedRun>> claim(std::string_view owner, std::chrono::milliseconds lease,
                                        size_t max) override {
    base::MutexLock lock(mu_);
    if (auto ok = open(); !ok) return ok.error();
    std::vector<ClaimedRun> runs;
    if (max == 0) return runs;
    // One transaction, one commit, for the whole batch.
    Transaction tx(db_);
    if (auto ok = tx.begin(); !ok) return error("starting a transaction");
    const int64_t now = now_ms();
    std::vector<ClaimedRun> due;
    {
      Statement pick(
          db_,
          "SELECT id, skill, body, attempts, max_attempts, fence FROM runs "
          "WHERE (state = 'queued' AND not_before_ms <= ?1) OR (state = 'running' AND lease_until_ms < ?1) "
          "ORDER BY not_before_ms, created_ms LIMIT ?2");
      pick.bind(1, now);
      pick.bind(2, static_cast<int64_t>(std::min<size_t>(max, 1000)));
      if (!pick.prepared()) return error("finding runs to claim");
      for (int rc = pick.step(); rc != SQLITE_DONE; rc = pick.step()) {
        if (rc != SQLITE_ROW) return error("finding runs to claim");
        due.push_back(ClaimedRun{.id = pick.text(0),
                                 .skill_id = pick.text(1),
                                 .body = pick.text(2),
                                 .attempt = static_cast<uint32_t>(pick.integer(3)) + 1,
                                 .max_attempts = static_cast<uint32_t>(pick.integer(4)),
                                 .fence = pick.integer(5) + 1});
      }
    }
    for (ClaimedRun& run : due) {
      if (run.attempt > run.max_attempts) {
        // Taken over after its lease expired max_attempts times: the replicas running it kept stopping.
        Statement end(db_,
                      "UPDATE runs SET state = 'dead', ended_ms = ?2, owner = NULL, lease_until_ms = NULL, "
                      "status = 500, result = ?3, fence = fence + 1 WHERE id = ?1");
        end.bind(1, run.id);
        end.bind(2, now);
        end.bind(3, lost_replica_answer(run.max_attempts));
        if (!end.prepared() || end.step() != SQLITE_DONE) return error("ending a run as dead");
        continue;
      }
      Statement take(
          db_,
          "UPDATE runs SET state = 'running', attempts = attempts + 1, fence = fence + 1, owner = ?2, "
          "lease_until_ms = ?3, started_ms = coalesce(started_ms, ?4) WHERE id = ?1");
      take.bind(1, run.id);
      take.bind(2, owner);
      take.bind(3, now + lease.count());
      take.bind(4, now);
      if (!take.prepared() || take.step() != SQLITE_DONE) return error("claiming a run");
      runs.push_back(std::move(run));
    }
    if (!tx.commit()) return error("committing a claim");
    return runs;
  }

  Result<bool> renew(std::string_view id, int64_t fence, std::chrono::milliseconds lease) override {
    base::MutexLock lock(mu_);
    if (auto ok = open(); !ok) return ok.error();
    const int64_t now = now_ms();
    Statement s(db_,
                "UPDATE runs SET lease_until_ms = ?3 WHERE id = ?1 AND fence = ?2 AND state = 'running'");
    s.bind(1, id);
    s.bind(2, fence);
    s.bind(3, now + lease.count());
    if (!s.prepared() || s.step() != SQLITE_DONE) return error("renewing a lease");
    return sqlite3_changes(db_) == 1;
  }

  Result<bool> finish(std::string_view id, int64_t fence, const RunEnding& ending) override {
    base::MutexLock lock(mu_);
    if (auto ok = open(); !ok) return ok.error();
    const int64_t now = now_ms();
    const bool requeue = ending.state == RunState::queued || ending.state == RunState::running;
    Statement s(db_, requeue
                         ? "UPDATE runs SET state = 'queued', owner = NULL, lease_until_ms = NULL, "
                           "not_before_ms = ?3, attempts = attempts - ?4 "
                           "WHERE id = ?1 AND fence = ?2 AND state = 'running'"
                         : "UPDATE runs SET state = ?3, owner = NULL, lease_until_ms = NULL, ended_ms = ?5, "
                           "status = ?4, result = ?6 "
                           "WHERE id = ?1 AND fence = ?2 AND state = 'running'");
    s.bind(1, id);
    s.bind(2, fence);
    if (requeue) {
      s.bind(3, now + ending.retry_after.count());
      s.bind(4, int64_t{ending.give_back_attempt ? 1 : 0});
    } else {
      s.bind(3, to_string(ending.state));
      s.bind(4, int64_t{ending.status});
      s.bind(5, now);
      s.bind(6, ending.result);
    }
    if (!s.prepared() || s.step() != SQLITE_DONE) return error("ending a run");
    return sqlite3_changes(db_) == 1;
  }

 private:
  /// BEGIN IMMEDIATE ... COMMIT; rolled back when not committed.
  class Transaction {
   public:
    explicit Transaction(sqlite3* db) : db_(db) {}
    ~Transaction() {
      if (open_) (void)sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Result<void> begin() {
      if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) return Error{"begin"};
      open_ = true;
      return {};
    }
    bool commit() {
      if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) return false;
      open_ = false;
      return true;
    }

   private:
    sqlite3* db_;
    bool open_ = false;
  };

  static std::string lost_replica_answer(uint32_t attempts) {
    std::string answer(kLostRunAnswer);
    answer.replace(answer.find("%n"), 2, std::to_string(attempts));
    return answer;
  }

  Error error(std::string_view doing) const SKILLBOX_REQUIRES(mu_) {
    const char* what = db_ == nullptr ? "not open" : sqlite3_errmsg(db_);
    return Error{"the async run ledger " + layout_.run_ledger().string() + ": " + std::string(doing) + ": " +
                 what};
  }

  // Opens (creating) the file on first use. Under mu_.
  Result<void> open() SKILLBOX_REQUIRES(mu_) {
    if (db_ != nullptr) return {};
    if (layout_.empty()) return Error{"no data directory for the async run ledger; set --data-dir"};
    base::UniqueFd root;
    if (const int e = file_io::open_data_directory(layout_.root(), root); e != 0) {
      return Error{"cannot open the data directory " + layout_.root().string() + ": " + base::errno_text(e)};
    }
    // Created 0600 here when missing (O_EXCL: an existing file is never opened, and so never closed
    // again by this process, which would drop the POSIX locks another connection holds on it).
    const int fd = ::openat(root.get(), DataLayout::kRunLedger,
                            O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, file_io::kFileMode);
    if (fd >= 0) {
      ::close(fd);
    } else if (errno != EEXIST) {
      return Error{"cannot create the async run ledger " + layout_.run_ledger().string() + ": " +
                   base::errno_text(errno)};
    }
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(
        layout_.run_ledger().c_str(), &db,
        SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW, nullptr);
    db_ = db;
    if (rc != SQLITE_OK) {
      Error e = error("opening");
      sqlite3_close_v2(db_);
      db_ = nullptr;
      return e;
    }
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    int64_t found = 0;
    {
      Statement version(db_, "PRAGMA user_version");
      if (!version.prepared() || version.step() != SQLITE_ROW)
        return close_with(error("reading its version"));
      found = version.integer(0);
    }
    if (found > kSchemaVersion) {
      return close_with(Error{"the async run ledger " + layout_.run_ledger().string() +
                              " has schema version " + std::to_string(found) +
                              ", newer than this skillbox understands (" + std::to_string(kSchemaVersion) +
                              "); it was left untouched: use a newer skillbox"});
    }
    if (sqlite3_exec(db_, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL", nullptr, nullptr,
                     nullptr) != SQLITE_OK ||
        (found < kSchemaVersion && sqlite3_exec(db_, kSchema, nullptr, nullptr, nullptr) != SQLITE_OK)) {
      return close_with(error("preparing"));
    }
    return {};
  }

  Error close_with(Error e) SKILLBOX_REQUIRES(mu_) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    return e;
  }

  // Under mu_, the ledger open.
  Result<std::optional<RunRecord>> read(std::string_view id) SKILLBOX_REQUIRES(mu_) {
    const std::string sql = std::string("SELECT ") + kRecordColumns + " FROM runs WHERE id = ?1";
    Statement s(db_, sql.c_str());
    s.bind(1, id);
    if (!s.prepared()) return error("reading a run");
    const int rc = s.step();
    if (rc == SQLITE_DONE) return std::optional<RunRecord>();
    if (rc != SQLITE_ROW) return error("reading a run");
    const std::optional<RunState> state = parse_run_state(s.text(2));
    if (!state) {
      return Error{"the async run ledger " + layout_.run_ledger().string() + ": run " + s.text(0) +
                   " has the state \"" + s.text(2) + "\", which this skillbox does not know"};
    }
    RunRecord r{.id = s.text(0),
                .skill_id = s.text(1),
                .state = *state,
                .attempts = static_cast<uint32_t>(s.integer(3)),
                .max_attempts = static_cast<uint32_t>(s.integer(4)),
                .created_ms = s.integer(5),
                .started_ms = s.null(6) ? std::nullopt : std::optional<int64_t>(s.integer(6)),
                .ended_ms = s.null(7) ? std::nullopt : std::optional<int64_t>(s.integer(7)),
                .status = static_cast<int>(s.integer(8)),
                .result = s.text(9)};
    return std::optional<RunRecord>(std::move(r));
  }

  const DataLayout layout_;
  base::Mutex mu_;
  sqlite3* db_ SKILLBOX_GUARDED_BY(mu_) = nullptr;
};

}  // namespace

std::shared_ptr<RunLedger> make_local_run_ledger(const DataLayout& layout) {
  return std::make_shared<LocalRunLedger>(layout);
}

}  // namespace skillbox::state
