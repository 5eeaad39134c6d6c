// state/sqlite_store.cpp — the SQLite store behind skillbox/store.h (the local state::StoreBackend).
//
// File layout (schema version 2, docs/store.md):
//   entries(id, skill, key, value_bytes, value)  a rowid table: one row per entry, the value last
//   entries_by_key(skill, key)                    unique index: every lookup by (skill, key) goes here
//   usage(skill, keys, bytes)                     per-skill totals, kept by triggers on `entries`
// No value is ever part of a b-tree key. Version 1 kept entries WITHOUT ROWID, so each row was the key
// of the primary-key b-tree, and SQLite loads a key's whole payload (overflow chain included) to
// compare against it: one skill's 60 MiB value made every lookup that passed it read 60 MiB (measured:
// a neighbour's 10 sets 0.3 ms -> 2.0-2.4 s, 10 gets 0.05 ms -> 1.0-1.3 s). In a rowid table the b-tree
// compares integers and the index holds only (skill, key, rowid).
// `usage.bytes` is key bytes + value bytes; the per-entry overhead is added in C++ (keys * overhead), so
// changing kStoreEntryOverheadBytes never needs a migration.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <compare>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <thread>

#include "base/errno_text.h"
#include "base/escape.h"
#include "base/json_text.h"
#include "base/skill_id.h"
#include "base/utf8.h"
#include "skillbox/store.h"
#include "state/data_layout.h"
#include "state/store_values.h"

namespace skillbox {

using state::check_key;
using state::check_quota;
using state::check_value;
using state::describe_json;
using state::entry_cost;

namespace {

// ---- schema -----------------------------------------------------------------------------------------

// Migrations, in order: kMigrations[i] takes a database from version i to version i + 1. A future schema
// change appends one entry and raises kStoreSchemaVersion; old files are migrated on open.
constexpr std::array<const char*, kStoreSchemaVersion> kMigrations = {
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE entries (
  skill TEXT NOT NULL,
  key   TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (skill, key)
) WITHOUT ROWID;
CREATE TABLE usage (
  skill TEXT NOT NULL PRIMARY KEY,
  keys  INTEGER NOT NULL,
  bytes INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TRIGGER entries_insert AFTER INSERT ON entries BEGIN
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + length(CAST(new.value AS BLOB)))
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER entries_update AFTER UPDATE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - length(CAST(old.value AS BLOB))
    WHERE skill = old.skill;
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + length(CAST(new.value AS BLOB)))
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
CREATE TRIGGER entries_delete AFTER DELETE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - length(CAST(old.value AS BLOB))
    WHERE skill = old.skill;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
)sql",
    // 1 -> 2: entries becomes a rowid table (see the top of this file). The old table is renamed away
    // (its triggers first, so the rename rewrites nothing) and the new one created under its own name,
    // so a migrated file has exactly the schema text of a new one. Rows are copied unchanged; the usage
    // counters stay valid (same keys, same values).
    R"sql(
DROP TRIGGER entries_insert;
DROP TRIGGER entries_update;
DROP TRIGGER entries_delete;
ALTER TABLE entries RENAME TO entries_v1;
CREATE TABLE entries (
  id          INTEGER PRIMARY KEY,
  skill       TEXT NOT NULL,
  key         TEXT NOT NULL,
  value_bytes INTEGER NOT NULL GENERATED ALWAYS AS (length(CAST(value AS BLOB))) STORED,
  value       TEXT NOT NULL
);
CREATE UNIQUE INDEX entries_by_key ON entries (skill, key);
INSERT INTO entries (skill, key, value) SELECT skill, key, value FROM entries_v1 ORDER BY skill, key;
DROP TABLE entries_v1;
CREATE TRIGGER entries_insert AFTER INSERT ON entries BEGIN
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + new.value_bytes)
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
END;
CREATE TRIGGER entries_update AFTER UPDATE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - old.value_bytes
    WHERE skill = old.skill;
  INSERT INTO usage (skill, keys, bytes)
    VALUES (new.skill, 1, length(CAST(new.key AS BLOB)) + new.value_bytes)
    ON CONFLICT (skill) DO UPDATE SET keys = keys + 1, bytes = bytes + excluded.bytes;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
CREATE TRIGGER entries_delete AFTER DELETE ON entries BEGIN
  UPDATE usage SET keys = keys - 1,
                   bytes = bytes - length(CAST(old.key AS BLOB)) - old.value_bytes
    WHERE skill = old.skill;
  DELETE FROM usage WHERE skill = old.skill AND keys = 0;
END;
)sql",
};

// Prepared statements, by purpose. Every statement that touches entries or usage binds the skill id as
// ?1: that is the isolation between skills.
enum Stmt : size_t {
  kBegin,
  kCommit,
  kRollback,
  kGet,
  kValueBytes,
  kUsage,
  kUpsert,
  kDelete,
  kDeleteAll,
  kKeys,
  kEntries,
  kSkills,
  kStmtCount,
};

constexpr std::array<const char*, kStmtCount> kStmtSql = {
    "BEGIN IMMEDIATE",
    "COMMIT",
    "ROLLBACK",
    "SELECT value FROM entries WHERE skill = ?1 AND key = ?2",
    // value_bytes sits before the value in the record: reading it never walks the value's overflow chain.
    "SELECT value_bytes FROM entries WHERE skill = ?1 AND key = ?2",
    "SELECT keys, bytes FROM usage WHERE skill = ?1",
    "INSERT INTO entries (skill, key, value) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (skill, key) DO UPDATE SET value = excluded.value",
    "DELETE FROM entries WHERE skill = ?1 AND key = ?2",
    "DELETE FROM entries WHERE skill = ?1",
    // Prefix scan over the primary key: ?3 is the prefix followed by byte 0xFF, which sorts after every
    // valid UTF-8 continuation of the prefix (UTF-8 never contains 0xFF).
    "SELECT key FROM entries WHERE skill = ?1 AND key >= ?2 AND key < ?3 ORDER BY key",
    "SELECT key, value FROM entries WHERE skill = ?1 ORDER BY key",
    "SELECT skill FROM usage WHERE keys > 0 ORDER BY skill",
};

// ---- errors -----------------------------------------------------------------------------------------

StoreError make_error(StoreErrc code, std::string message) {
  return StoreError{code, std::move(message)};
}

StoreError corrupt_error(std::string_view what) {
  return make_error(StoreErrc::corrupt,
                    "the store database is damaged or is not a skillbox store (" + std::string(what) +
                        "); it was left untouched: restore it from a backup or move it away (docs/store.md)");
}

// Maps a SQLite failure to a StoreError. `doing` says what was attempted ("reading a value").
StoreError sqlite_error(sqlite3* db, int rc, std::string_view doing) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return make_error(StoreErrc::busy,
                        "the store database is busy: another process held its write lock "
                        "for longer than the busy timeout (or until the invocation's deadline) while " +
                            std::string(doing) + "; try again");
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return corrupt_error(sqlite3_errstr(rc));
    case SQLITE_FULL:
      return make_error(StoreErrc::io_error, "the disk holding the store database is full while " +
                                                 std::string(doing) + "; nothing was changed");
    default: {
      std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
      return make_error(StoreErrc::io_error,
                        "store database error while " + std::string(doing) + ": " + detail);
    }
  }
}

// ---- connection -------------------------------------------------------------------------------------

// Binds, steps and always resets one prepared statement, so a statement never stays half-run or keeps
// a pointer to a caller's string after the Use ends.
class Use {
 public:
  explicit Use(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Use() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  // Binds text without copying: valid until the Use ends. An empty view binds '' (never NULL).
  void text(int index, std::string_view value) {
    const char* data = value.data() != nullptr ? value.data() : "";
    keep(sqlite3_bind_text64(stmt_, index, data, value.size(), SQLITE_STATIC, SQLITE_UTF8));
  }
  int step() { return bind_rc_ != SQLITE_OK ? bind_rc_ : sqlite3_step(stmt_); }
  [[nodiscard]] std::string column_text(int index) const {
    const auto* p = sqlite3_column_text(stmt_, index);
    const int n = sqlite3_column_bytes(stmt_, index);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }
  [[nodiscard]] int64_t column_int(int index) const { return sqlite3_column_int64(stmt_, index); }

 private:
  void keep(int rc) {
    if (bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  }
  sqlite3_stmt* stmt_;
  int bind_rc_ = SQLITE_OK;
};

// One row of sqlite_schema. `sql` is normalised (normalize_sql), so layout-only differences in the
// text do not count; everything else does.
struct SchemaObject {
  std::string type;  // table, index, view, trigger
  std::string name;
  std::string tbl_name;
  std::string sql;
  auto operator<=>(const SchemaObject&) const = default;
};
using Schema = std::set<SchemaObject>;

struct Header {
  int64_t application_id = 0;
  int64_t user_version = 0;
  Schema schema;
};

bool is_word_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || u == '_' || u == '$' || (u >= '0' && u <= '9') ||
         ((u | 0x20) >= 'a' && (u | 0x20) <= 'z');
}

// `sql` with comments dropped, each run of whitespace reduced to one space where it separates two
// words (and dropped elsewhere), and ASCII letters outside quotes lower-cased: two texts that normalise
// alike are the same SQL statement. Quoted text ('..', "..", `..`, [..]) is kept byte for byte.
std::string normalize_sql(std::string_view sql) {
  std::string out;
  bool gap = false;
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
    if (c == '-' && next == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
      gap = true;
      continue;
    }
    if (c == '/' && next == '*') {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
      gap = true;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      gap = true;
      ++i;
      continue;
    }
    if (gap && !out.empty() && is_word_char(out.back()) && is_word_char(c)) out += ' ';
    gap = false;
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      const char close = c == '[' ? ']' : c;
      size_t j = i + 1;
      while (j < sql.size()) {
        if (sql[j] == close) {
          if (close != ']' && j + 1 < sql.size() && sql[j + 1] == close) {
            j += 2;  // a doubled quote inside the quoted text
            continue;
          }
          break;
        }
        ++j;
      }
      const size_t end = std::min(j + 1, sql.size());
      out.append(sql.substr(i, end - i));
      i = end;
      continue;
    }
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c | 0x20) : c;
    ++i;
  }
  return out;
}

// Reads every row of sqlite_schema.
StoreResult<Schema> read_schema(sqlite3* db) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema", -1, &s, nullptr);
  if (rc != SQLITE_OK) return sqlite_error(db, rc, "reading the database schema");
  Schema out;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    auto col = [&](int i) {
      const auto* p = sqlite3_column_text(s, i);
      return p == nullptr ? std::string()
                          : std::string(reinterpret_cast<const char*>(p),
                                        static_cast<size_t>(sqlite3_column_bytes(s, i)));
    };
    out.insert(SchemaObject{col(0), col(1), col(2), normalize_sql(col(3))});
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sqlite_error(db, rc, "reading the database schema");
  return out;
}

// The schema of each version 0..kStoreSchemaVersion, as the migrations make it: they are run once per
// process on an in-memory database, so the expected schema can never drift from what open() creates.
const std::vector<Schema>& expected_schemas() {
  static const std::vector<Schema> schemas = [] {
    std::vector<Schema> out;
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    for (size_t v = 0; rc == SQLITE_OK; ++v) {
      auto schema = read_schema(db);
      if (!schema) break;
      out.push_back(std::move(*schema));
      if (v == kMigrations.size()) break;
      rc = sqlite3_exec(db, kMigrations[v], nullptr, nullptr, nullptr);
    }
    sqlite3_close(db);
    // The migrations are constants of this build: if one does not run, the build is broken.
    if (out.size() != kMigrations.size() + 1) std::abort();
    return out;
  }();
  return schemas;
}

// `name` for a message: quoted, with control characters escaped (a tampered file chooses it).
std::string shown_name(const SchemaObject& o) {
  return o.type + " \"" + base::escape_text(o.name.substr(0, 128)) + "\"";
}

// Compares a file's schema with version `version`'s exactly. Returns the differences, one phrase per
// object ("unexpected trigger \"t\"", "missing table \"usage\"", "changed index \"i\""), empty when
// they are equal.
std::vector<std::string> schema_differences(const Schema& actual, int64_t version) {
  const Schema& expected = expected_schemas().at(static_cast<size_t>(version));
  auto same_name = [](const SchemaObject& a, const SchemaObject& b) {
    return a.type == b.type && a.name == b.name;
  };
  std::vector<std::string> out;
  for (const SchemaObject& o : actual) {
    if (expected.count(o) != 0) continue;
    const bool changed =
        std::any_of(expected.begin(), expected.end(), [&](const SchemaObject& e) { return same_name(e, o); });
    out.push_back((changed ? "changed " : "unexpected ") + shown_name(o));
  }
  for (const SchemaObject& e : expected) {
    if (actual.count(e) != 0) continue;
    if (std::none_of(actual.begin(), actual.end(), [&](const SchemaObject& o) { return same_name(e, o); }))
      out.push_back("missing " + shown_name(e));
  }
  return out;
}

StoreError schema_error(const std::vector<std::string>& differences, int64_t version) {
  std::string list;
  for (const std::string& d : differences) list += (list.empty() ? "" : ", ") + d;
  return corrupt_error("its schema differs from skillbox's schema version " + std::to_string(version) + ": " +
                       list);
}

}  // namespace

struct StoreDatabase::Impl {
  sqlite3* db = nullptr;
  std::array<sqlite3_stmt*, kStmtCount> stmts{};
  int64_t busy_timeout_ms = 0;
  std::chrono::steady_clock::time_point wait_until = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point busy_since;  // start of the current busy wait
  std::function<bool()> stop_requested;              // StoreOpenOptions::stop_requested

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    for (sqlite3_stmt* s : stmts) sqlite3_finalize(s);
    sqlite3_close_v2(db);
  }

  // The prepared statement `id`, prepared on first use (most invocations use one or two).
  StoreResult<sqlite3_stmt*> stmt(Stmt id) {
    if (stmts[id] == nullptr) {
      const int rc = sqlite3_prepare_v3(db, kStmtSql[id], -1, SQLITE_PREPARE_PERSISTENT, &stmts[id], nullptr);
      if (rc != SQLITE_OK) return sqlite_error(db, rc, "preparing a statement");
    }
    return stmts[id];
  }

  // Runs a statement that returns no rows.
  StoreResult<StoreOk> run(Stmt id, std::string_view doing) {
    auto s = stmt(id);
    if (!s) return s.error();
    Use use(*s);
    const int rc = use.step();
    if (rc != SQLITE_DONE) return sqlite_error(db, rc, doing);
    return StoreOk{};
  }

  // Runs SQL without parameters (schema, pragmas). Never used with skill data.
  StoreResult<StoreOk> exec(const char* sql, std::string_view doing) {
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return sqlite_error(db, rc, doing);
    return StoreOk{};
  }

  // Runs a one-row, one-column pragma query and returns its value as text.
  StoreResult<std::string> pragma_text(const char* sql) {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) return sqlite_error(db, rc, "reading the database header");
    std::string out;
    {
      Use use(s);
      rc = use.step();
      if (rc == SQLITE_ROW) {
        out = use.column_text(0);
        rc = SQLITE_DONE;
      }
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) return sqlite_error(db, rc, "reading the database header");
    return out;
  }

  StoreResult<int64_t> pragma_int(const char* sql) {
    auto text = pragma_text(sql);
    if (!text) return text.error();
    return static_cast<int64_t>(std::strtoll(text->c_str(), nullptr, 10));
  }

  // Reads what identifies the file: application id, schema version and the names of its objects. The
  // first read of a file that is not SQLite fails here with SQLITE_NOTADB, before anything is written.
  StoreResult<Header> header() {
    Header h;
    auto app = pragma_int("PRAGMA application_id");
    if (!app) return app.error();
    h.application_id = *app;
    auto version = pragma_int("PRAGMA user_version");
    if (!version) return version.error();
    h.user_version = *version;
    auto schema = read_schema(db);
    if (!schema) return schema.error();
    h.schema = std::move(*schema);
    return h;
  }

  // Usage counters of `skill` (zero when it has no entries).
  StoreResult<StoreUsage> usage_of(std::string_view skill) {
    auto s = stmt(kUsage);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill);
    StoreUsage u;
    const int rc = use.step();
    if (rc == SQLITE_ROW) {
      const int64_t keys = use.column_int(0);
      const int64_t bytes = use.column_int(1);
      if (keys < 0 || bytes < 0) return corrupt_error("negative usage counters");
      u.keys = static_cast<uint64_t>(keys);
      u.bytes = static_cast<uint64_t>(bytes) + u.keys * kStoreEntryOverheadBytes;
    } else if (rc != SQLITE_DONE) {
      return sqlite_error(db, rc, "reading the store's usage");
    }
    return u;
  }

  // Byte length of the stored value of (skill, key), or nullopt when the key does not exist.
  StoreResult<std::optional<uint64_t>> value_bytes(std::string_view skill, std::string_view key) {
    auto s = stmt(kValueBytes);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill);
    use.text(2, key);
    const int rc = use.step();
    if (rc == SQLITE_ROW) return std::optional<uint64_t>(static_cast<uint64_t>(use.column_int(0)));
    if (rc != SQLITE_DONE) return sqlite_error(db, rc, "reading a value");
    return std::optional<uint64_t>();
  }

  // The stored JSON text of (skill, key), or nullopt when the key does not exist. Like SkillStore::get,
  // a value that is not JSON is reported as corrupt.
  StoreResult<std::optional<std::string>> value(std::string_view skill, std::string_view key) {
    auto s = stmt(kGet);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill);
    use.text(2, key);
    const int rc = use.step();
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    if (rc != SQLITE_ROW) return sqlite_error(db, rc, "reading a value");
    std::string text = use.column_text(0);
    if (!base::json_text::check(text).ok()) return corrupt_error("a stored value is not valid JSON");
    return std::optional<std::string>(std::move(text));
  }

  StoreResult<StoreOk> upsert(std::string_view skill, std::string_view key, std::string_view value) {
    auto s = stmt(kUpsert);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill);
    use.text(2, key);
    use.text(3, value);
    const int rc = use.step();
    if (rc != SQLITE_DONE) return sqlite_error(db, rc, "writing a value");
    return StoreOk{};
  }
};

namespace {

using Impl = StoreDatabase::Impl;

// One IMMEDIATE write transaction: takes the write lock up front (waiting up to the busy timeout), so
// the reads that check quotas and the writes that follow see the same data; rolled back unless
// committed. IMMEDIATE also avoids the deadlock of two readers both upgrading to writers, which SQLite
// reports as SQLITE_BUSY without waiting.
class WriteTransaction {
 public:
  explicit WriteTransaction(Impl& db) : db_(db) {}
  ~WriteTransaction() {
    if (active_ && sqlite3_get_autocommit(db_.db) == 0) (void)db_.run(kRollback, "rolling back");
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

  StoreResult<StoreOk> begin() {
    auto r = db_.run(kBegin, "waiting for the write lock");
    active_ = r.ok();
    return r;
  }
  StoreResult<StoreOk> commit() {
    auto r = db_.run(kCommit, "committing");
    if (r.ok()) active_ = false;
    return r;
  }

 private:
  Impl& db_;
  bool active_ = false;
};

// The busy handler of connections opened with a wait_until: sleeps with backoff (100 us doubling to
// 20 ms) until busy_timeout has passed since the wait began or wait_until comes, then gives up
// (SQLITE_BUSY). `count` is 0 at the first call of each wait.
int busy_wait(void* p, int count) {
  auto* impl = static_cast<StoreDatabase::Impl*>(p);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) impl->busy_since = now;
  const auto give_up =
      std::min(impl->wait_until - impl->busy_since,
               std::chrono::steady_clock::duration(std::chrono::milliseconds(impl->busy_timeout_ms))) +
      impl->busy_since;
  if (now >= give_up) return 0;
  if (impl->stop_requested && impl->stop_requested()) return 0;  // a limit or a cancel: stop waiting
  const auto step = std::chrono::microseconds(std::min(20'000, 100 << std::min(count, 8)));
  std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(step, give_up - now));
  return 1;
}

// Opens `file` (which must exist) and applies the per-connection settings. Reads nothing yet.
StoreResult<std::shared_ptr<Impl>> connect(const std::filesystem::path& file,
                                           const StoreOpenOptions& options) {
  auto impl = std::make_shared<Impl>();
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  int rc = sqlite3_open_v2(file.c_str(), &impl->db, flags, nullptr);
  if (rc != SQLITE_OK) {
    if ((rc & 0xff) == SQLITE_CANTOPEN)
      return make_error(StoreErrc::io_error, "cannot open the store database (missing, or no permission)");
    return sqlite_error(impl->db, rc, "opening the store database");
  }
  impl->busy_timeout_ms = options.busy_timeout.count();
  impl->wait_until = options.wait_until;
  impl->stop_requested = options.stop_requested;
  if (impl->wait_until == std::chrono::steady_clock::time_point::max()) {
    sqlite3_busy_timeout(impl->db, static_cast<int>(std::min<int64_t>(impl->busy_timeout_ms, INT32_MAX)));
  } else {
    // SQLite's own handler only knows a duration; this one also stops at wait_until (an invocation's
    // deadline): a write lock held elsewhere must not keep a run past its deadline.
    sqlite3_busy_handler(impl->db, &busy_wait, impl.get());
  }
  // Defensive mode: no writable_schema or other ways of corrupting the file through SQL. Untrusted
  // schema: a tampered file cannot make triggers or views call functions with side effects.
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(impl->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // A refused file is left byte-identical: closing this connection must not checkpoint its WAL into it.
  (void)sqlite3_db_config(impl->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // Extra checks of b-tree cells as pages are read: damage is reported as SQLITE_CORRUPT, not misread.
  if (auto r = impl->exec("PRAGMA cell_size_check = ON", "configuring the connection"); !r) return r.error();
  return impl;
}

// WAL: readers and one writer work at once across processes. synchronous=FULL: in WAL mode every
// commit fsyncs the WAL before it returns, so an acknowledged set survives SIGKILL and power loss.
StoreResult<StoreOk> make_durable(Impl& impl) {
  auto mode = impl.pragma_text("PRAGMA journal_mode");
  if (!mode) return mode.error();
  if (*mode != "wal") {
    auto set = impl.pragma_text("PRAGMA journal_mode = WAL");
    if (!set) return set.error();
    if (*set != "wal")
      return make_error(StoreErrc::io_error,
                        "cannot switch the store database to WAL mode (it is \"" + *set + "\")");
  }
  // Checkpoints are left to SQLite's automatic ones (when the WAL passes 1000 pages) instead of one at
  // every close: each invocation opens and closes the store, and a checkpoint on close fsyncs the main
  // file too (measured on the CI disk: 13-15 ms per writing invocation with it, 3.6 ms without). The WAL
  // file is kept between connections for the same reason. Commits are durable in the WAL either way;
  // a copy of store.sqlite alone is therefore not a backup (use `skillbox store export`).
  int persist_wal = 1;
  (void)sqlite3_file_control(impl.db, "main", SQLITE_FCNTL_PERSIST_WAL, &persist_wal);
  (void)sqlite3_db_config(impl.db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  return impl.exec("PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 4194304",
                   "configuring the connection");
}

// Migrates from the version read in `seen` up to kStoreSchemaVersion in one IMMEDIATE transaction. The
// header is read again under the write lock: another process may have migrated in the meantime.
StoreResult<StoreOk> migrate(Impl& impl) {
  WriteTransaction tx(impl);
  if (auto r = tx.begin(); !r) return r;
  auto h = impl.header();
  if (!h) return h.error();
  const bool fresh = h->application_id == 0 && h->user_version == 0 && h->schema.empty();
  if (!fresh && h->application_id != kStoreApplicationId) return corrupt_error("not a skillbox store");
  if (h->user_version > kStoreSchemaVersion)
    return make_error(StoreErrc::newer_schema,
                      "the store database has schema version " + std::to_string(h->user_version) +
                          ", newer than this skillbox understands (" + std::to_string(kStoreSchemaVersion) +
                          "); it was left untouched: use a newer skillbox");
  if (h->user_version < 0) return corrupt_error("negative schema version");
  if (auto d = schema_differences(h->schema, h->user_version); !d.empty())
    return schema_error(d, h->user_version);
  for (int64_t v = h->user_version; v < kStoreSchemaVersion; ++v) {
    if (auto r = impl.exec(kMigrations[static_cast<size_t>(v)], "migrating the store schema"); !r) return r;
  }
  const std::string stamp = "PRAGMA application_id = " + std::to_string(kStoreApplicationId) +
                            "; PRAGMA user_version = " + std::to_string(kStoreSchemaVersion);
  if (auto r = impl.exec(stamp.c_str(), "migrating the store schema"); !r) return r;
  return tx.commit();
}

// Copies every WAL frame into the main file and empties the WAL (no other connection can hold the
// file: it is still under its temporary name).
StoreResult<StoreOk> checkpoint_all(Impl& impl) {
  int log_frames = -1;
  int checkpointed = -1;
  const int rc =
      sqlite3_wal_checkpoint_v2(impl.db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log_frames, &checkpointed);
  if (rc != SQLITE_OK) return sqlite_error(impl.db, rc, "creating the store database");
  if (log_frames != checkpointed)
    return make_error(StoreErrc::io_error,
                      "creating the store database: the new file could not be checkpointed");
  return StoreOk{};
}

// Checks an existing file before anything is written to it, then migrates and configures it.
StoreResult<std::shared_ptr<Impl>> open_existing(const std::filesystem::path& file,
                                                 const StoreOpenOptions& options) {
  auto impl = connect(file, options);
  if (!impl) return impl.error();
  auto h = (*impl)->header();
  if (!h) return h.error();
  const bool fresh = h->application_id == 0 && h->user_version == 0 && h->schema.empty();
  if (!fresh) {
    if (h->application_id != kStoreApplicationId) return corrupt_error("not a skillbox store");
    if (h->user_version > kStoreSchemaVersion)
      return make_error(StoreErrc::newer_schema,
                        "the store database has schema version " + std::to_string(h->user_version) +
                            ", newer than this skillbox understands (" + std::to_string(kStoreSchemaVersion) +
                            "); it was left untouched: use a newer skillbox");
    if (h->user_version < 0) return corrupt_error("negative schema version");
    // Exactly our schema, or nothing is run on the file: a planted trigger would run inside the host on
    // every write (copying one skill's values into another's rows, say), and a planted index on
    // `value` would put values back into a b-tree key (the noisy-neighbour cost, docs/store.md).
    if (auto d = schema_differences(h->schema, h->user_version); !d.empty())
      return schema_error(d, h->user_version);
  }
  if (auto r = make_durable(**impl); !r) return r.error();
  if (fresh || h->user_version < kStoreSchemaVersion) {
    if (auto r = migrate(**impl); !r) return r.error();
  }
  return impl;
}

std::string random_suffix() {
  std::random_device rd;
  const uint64_t r = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char buf[32];
  (void)std::snprintf(buf, sizeof buf, "%d-%016llx", static_cast<int>(::getpid()),
                      static_cast<unsigned long long>(r));
  return buf;
}

// Makes `dir` (mode 0700 for the last component, like the workspaces) when it is missing.
StoreResult<StoreOk> ensure_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) return StoreOk{};
  if (dir.has_parent_path() && dir.parent_path() != dir) {
    std::filesystem::create_directories(dir.parent_path(), ec);
    if (ec) return make_error(StoreErrc::io_error, "cannot create the data directory: " + ec.message());
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return make_error(StoreErrc::io_error,
                      std::string("cannot create the data directory: ") + base::errno_text(errno));
  return StoreOk{};
}

// Creates a complete, empty store at `file` without ever exposing a half-made one: the database is
// built under a temporary name in the same directory, closed (which checkpoints and removes its WAL),
// and then linked into place. link() never replaces: if another process created the file first, its
// file wins and ours is discarded.
StoreResult<StoreOk> create_fresh(const std::filesystem::path& file, const StoreOpenOptions& options) {
  const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  if (auto r = ensure_directory(dir); !r) return r;
  const std::filesystem::path tmp = dir / ("." + file.filename().string() + ".init-" + random_suffix());
  auto cleanup = [&] {
    for (const char* ext : {"", "-wal", "-shm", "-journal"}) ::unlink((tmp.string() + ext).c_str());
  };
  // 0600: values may be secrets; SQLite gives the -wal and -shm files the same mode.
  const int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return make_error(StoreErrc::io_error,
                      std::string("cannot create the store database: ") + base::errno_text(errno));
  ::close(fd);
  {
    auto impl = connect(tmp, options);
    if (!impl) {
      cleanup();
      return impl.error();
    }
    auto r = make_durable(**impl);
    if (r) r = migrate(**impl);
    // Everything into the main file before it is linked into place: the WAL stays behind.
    if (r) r = checkpoint_all(**impl);
    if (!r) {
      impl->reset();
      cleanup();
      return r;
    }
  }
  if (::link(tmp.c_str(), file.c_str()) != 0 && errno != EEXIST) {
    const int err = errno;
    cleanup();
    return make_error(StoreErrc::io_error,
                      std::string("cannot create the store database: ") + base::errno_text(err));
  }
  cleanup();
  // The new directory entry must survive power loss too.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return StoreOk{};
}

}  // namespace

std::string_view to_string(StoreErrc code) {
  switch (code) {
    case StoreErrc::invalid_argument:
      return "invalid_argument";
    case StoreErrc::quota_exceeded:
      return "quota_exceeded";
    case StoreErrc::corrupt:
      return "corrupt";
    case StoreErrc::newer_schema:
      return "newer_schema";
    case StoreErrc::busy:
      return "busy";
    case StoreErrc::io_error:
      return "io_error";
  }
  return "io_error";
}

// ---- StoreDatabase ------------------------------------------------------------------------------------

std::filesystem::path StoreDatabase::path_in(const std::filesystem::path& data_dir) {
  return state::DataLayout(data_dir).store_database();
}

StoreResult<StoreDatabase> StoreDatabase::open(const std::filesystem::path& file,
                                               const StoreOpenOptions& options) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return make_error(StoreErrc::io_error,
                        std::string("cannot open the store database: ") + base::errno_text(errno));
    if (!options.create) return make_error(StoreErrc::io_error, "the store database does not exist");
    if (auto r = create_fresh(file, options); !r) return r.error();
  } else if (!S_ISREG(st.st_mode)) {
    return make_error(StoreErrc::io_error, "the store database path is not a regular file");
  }
  auto impl = open_existing(file, options);
  if (!impl) return impl.error();
  return StoreDatabase(std::move(*impl));
}

StoreDatabase::StoreDatabase(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
StoreDatabase::StoreDatabase(StoreDatabase&&) noexcept = default;
StoreDatabase& StoreDatabase::operator=(StoreDatabase&&) noexcept = default;
StoreDatabase::~StoreDatabase() = default;

std::optional<StoreError> StoreDatabase::check_skill_id(std::string_view skill_id) {
  if (base::is_valid_skill_id(skill_id)) return std::nullopt;
  return make_error(StoreErrc::invalid_argument, "skill id must be " + std::string(base::kSkillIdRule));
}

StoreResult<SkillStore> StoreDatabase::skill(std::string_view skill_id, const StorePolicy& policy) const {
  if (auto e = check_skill_id(skill_id)) return *e;
  return SkillStore(impl_, std::string(skill_id), policy);
}

StoreResult<std::vector<std::string>> StoreDatabase::skills() const {
  auto s = impl_->stmt(kSkills);
  if (!s) return s.error();
  Use use(*s);
  std::vector<std::string> out;
  int rc = 0;
  while ((rc = use.step()) == SQLITE_ROW) out.push_back(use.column_text(0));
  if (rc != SQLITE_DONE) return sqlite_error(impl_->db, rc, "listing skills");
  return out;
}

StoreResult<StoreOk> StoreDatabase::check() const {
  sqlite3* db = impl_->db;
  auto run_rows = [&](const char* sql, auto&& row) -> StoreResult<StoreOk> {
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    if (rc != SQLITE_OK) return sqlite_error(db, rc, "checking the database");
    Result<void, StoreError> row_ok;
    {
      Use use(s);
      while ((rc = use.step()) == SQLITE_ROW && row_ok) row_ok = row(use);
    }
    sqlite3_finalize(s);
    if (!row_ok) return row_ok.error();
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return sqlite_error(db, rc, "checking the database");
    return StoreOk{};
  };
  auto schema = read_schema(db);
  if (!schema) return schema.error();
  if (auto d = schema_differences(*schema, kStoreSchemaVersion); !d.empty())
    return schema_error(d, kStoreSchemaVersion);
  std::string problems;
  auto r = run_rows("PRAGMA integrity_check", [&](Use& use) -> Result<void, StoreError> {
    const std::string line = use.column_text(0);
    if (line != "ok") problems += (problems.empty() ? "" : "; ") + line;
    return {};
  });
  if (!r) return r;
  if (!problems.empty()) return corrupt_error("integrity_check: " + problems);
  // The usage table must agree with the entries, and every value must still be JSON.
  r = run_rows(
      "SELECT e.skill, count(*), sum(length(CAST(e.key AS BLOB)) + length(CAST(e.value AS BLOB))), "
      "       coalesce(u.keys, -1), coalesce(u.bytes, -1) "
      "FROM entries e LEFT JOIN usage u ON u.skill = e.skill GROUP BY e.skill",
      [&](Use& use) -> Result<void, StoreError> {
        if (use.column_int(1) != use.column_int(3) || use.column_int(2) != use.column_int(4))
          return corrupt_error("usage counters of skill \"" + use.column_text(0) +
                               "\" disagree with its entries");
        return {};
      });
  if (!r) return r;
  r = run_rows("SELECT count(*) FROM usage WHERE skill NOT IN (SELECT skill FROM entries)",
               [&](Use& use) -> Result<void, StoreError> {
                 if (use.column_int(0) != 0)
                   return corrupt_error("usage counters for skills without entries");
                 return {};
               });
  if (!r) return r;
  return run_rows("SELECT skill, value FROM entries", [&](Use& use) -> Result<void, StoreError> {
    if (!base::json_text::check(use.column_text(1)).ok())
      return corrupt_error("a value of skill \"" + use.column_text(0) + "\" is not valid JSON");
    return {};
  });
}

StoreResult<StoreInfo> StoreDatabase::info() const {
  StoreInfo info;
  auto version = impl_->pragma_int("PRAGMA user_version");
  if (!version) return version.error();
  info.schema_version = *version;
  auto mode = impl_->pragma_text("PRAGMA journal_mode");
  if (!mode) return mode.error();
  info.journal_mode = *mode;
  auto sync = impl_->pragma_int("PRAGMA synchronous");
  if (!sync) return sync.error();
  info.synchronous = *sync;
  auto busy = impl_->pragma_int("PRAGMA busy_timeout");
  if (!busy) return busy.error();
  info.busy_timeout_ms = *busy;
  return info;
}

// ---- SkillStore ---------------------------------------------------------------------------------------

StoreResult<std::optional<std::string>> SkillStore::get(std::string_view key) const {
  if (auto ok = check_key(key, "key", false, false); !ok) return ok.error();
  // Never trust the file: whatever is read back must be JSON before a binding parses it (value()).
  return db_->value(skill_id_, key);
}

StoreResult<StoreOk> SkillStore::set(std::string_view key, std::string_view value_json) {
  if (auto ok = check_key(key, "key", false, true); !ok) return ok.error();
  if (auto ok = check_value(value_json, policy_); !ok) return ok.error();
  WriteTransaction tx(*db_);
  if (auto r = tx.begin(); !r) return r;
  auto old = db_->value_bytes(skill_id_, key);
  if (!old) return old.error();
  if (auto r = write_checked(key, value_json, *old); !r) return r;
  return tx.commit();
}

StoreResult<double> SkillStore::increment(std::string_view key, double delta) {
  if (auto ok = check_key(key, "key", false, true); !ok) return ok.error();
  if (!std::isfinite(delta))
    return make_error(StoreErrc::invalid_argument, "store.increment: delta must be a finite number");
  WriteTransaction tx(*db_);
  if (auto r = tx.begin(); !r) return r.error();
  auto old = db_->value(skill_id_, key);
  if (!old) return old.error();
  double sum = delta;
  if (old->has_value()) {
    const std::optional<double> current = state::json_number_value(**old);
    if (!current)
      return make_error(StoreErrc::invalid_argument,
                        "store.increment: key \"" + base::escape_text_capped(key, 160, "...") + "\" holds " +
                            describe_json(**old) + ", not a number; nothing was changed");
    sum = *current + delta;
  }
  if (!std::isfinite(sum))
    return make_error(StoreErrc::invalid_argument,
                      "store.increment: the sum is beyond the range of a double; nothing was changed");
  std::string text = state::json_number_text(sum);
  if (auto ok = check_value(text, policy_); !ok) return ok.error();
  if (auto r =
          write_checked(key, text, old->has_value() ? std::optional<uint64_t>((*old)->size()) : std::nullopt);
      !r)
    return r.error();
  if (auto r = tx.commit(); !r) return r.error();
  return sum == 0 ? 0.0 : sum;  // -0 is stored as "0": return what a later get() reads
}

StoreResult<bool> SkillStore::compare_and_set(std::string_view key,
                                              const std::optional<std::string>& expected_json,
                                              const std::optional<std::string>& value_json) {
  if (auto ok = check_key(key, "key", false, value_json.has_value()); !ok) return ok.error();
  if (expected_json && !base::json_text::check(*expected_json).ok())
    return make_error(StoreErrc::invalid_argument, "store expected value is not valid JSON text");
  if (value_json) {
    if (auto ok = check_value(*value_json, policy_); !ok) return ok.error();
  }
  WriteTransaction tx(*db_);
  if (auto r = tx.begin(); !r) return r.error();
  auto old = db_->value(skill_id_, key);
  if (!old) return old.error();
  const bool matches =
      expected_json ? old->has_value() && state::json_values_equal(**old, *expected_json) : !old->has_value();
  if (!matches) return false;  // the transaction rolls back: nothing was written
  const std::optional<uint64_t> old_bytes =
      old->has_value() ? std::optional<uint64_t>((*old)->size()) : std::nullopt;
  if (value_json) {
    if (auto r = write_checked(key, *value_json, old_bytes); !r) return r.error();
  } else if (old->has_value()) {
    auto s = db_->stmt(kDelete);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill_id_);
    use.text(2, key);
    if (const int rc = use.step(); rc != SQLITE_DONE) return sqlite_error(db_->db, rc, "deleting a value");
  }
  if (auto r = tx.commit(); !r) return r.error();
  return true;
}

StoreResult<StoreOk> SkillStore::write_checked(std::string_view key, std::string_view value_json,
                                               std::optional<uint64_t> old_value_bytes) {
  auto before = db_->usage_of(skill_id_);
  if (!before) return before.error();
  StoreUsage after = *before;
  if (old_value_bytes) {
    after.bytes -= std::min(after.bytes, entry_cost(key, *old_value_bytes));  // the old value stops counting
  } else {
    after.keys += 1;
  }
  after.bytes += entry_cost(key, value_json.size());
  if (auto ok = check_quota(*before, after, policy_); !ok) return ok.error();
  return db_->upsert(skill_id_, key, value_json);
}

StoreResult<bool> SkillStore::remove(std::string_view key) {
  if (auto ok = check_key(key, "key", false, false); !ok) return ok.error();
  auto s = db_->stmt(kDelete);
  if (!s) return s.error();
  Use use(*s);
  use.text(1, skill_id_);
  use.text(2, key);
  const int rc = use.step();
  if (rc != SQLITE_DONE) return sqlite_error(db_->db, rc, "deleting a value");
  return sqlite3_changes64(db_->db) > 0;
}

StoreResult<std::vector<std::string>> SkillStore::keys(std::string_view prefix) const {
  if (auto ok = check_key(prefix, "prefix", true, false); !ok) return ok.error();
  auto s = db_->stmt(kKeys);
  if (!s) return s.error();
  const std::string upper = std::string(prefix) + '\xff';
  Use use(*s);
  use.text(1, skill_id_);
  use.text(2, prefix);
  use.text(3, upper);
  std::vector<std::string> out;
  int rc = 0;
  while ((rc = use.step()) == SQLITE_ROW) out.push_back(use.column_text(0));
  if (rc != SQLITE_DONE) return sqlite_error(db_->db, rc, "listing keys");
  return out;
}

StoreResult<std::vector<StoreEntry>> SkillStore::entries() const {
  auto s = db_->stmt(kEntries);
  if (!s) return s.error();
  Use use(*s);
  use.text(1, skill_id_);
  std::vector<StoreEntry> out;
  int rc = 0;
  while ((rc = use.step()) == SQLITE_ROW) {
    StoreEntry e{use.column_text(0), use.column_text(1)};
    if (!base::json_text::check(e.value_json).ok()) return corrupt_error("a stored value is not valid JSON");
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return sqlite_error(db_->db, rc, "reading entries");
  return out;
}

StoreResult<StoreUsage> SkillStore::usage() const {
  return db_->usage_of(skill_id_);
}

StoreResult<StoreUsage> SkillStore::import(const std::vector<StoreEntry>& entries, StoreImportMode mode) {
  std::set<std::string_view> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const StoreEntry& e = entries[i];
    auto at = [&](StoreError err) {
      err.message = "entry " + std::to_string(i + 1) + ": " + err.message;
      return err;
    };
    if (auto ok = check_key(e.key, "key", false, true); !ok) return at(ok.error());
    if (auto ok = check_value(e.value_json, policy_); !ok) return at(ok.error());
    if (!seen.insert(e.key).second)
      return at(make_error(StoreErrc::invalid_argument, "the same key appears more than once"));
  }
  WriteTransaction tx(*db_);
  if (auto r = tx.begin(); !r) return r.error();
  auto before = db_->usage_of(skill_id_);
  if (!before) return before.error();
  StoreUsage after = mode == StoreImportMode::replace ? StoreUsage{} : *before;
  for (const StoreEntry& e : entries) {
    if (mode == StoreImportMode::merge) {
      auto old = db_->value_bytes(skill_id_, e.key);
      if (!old) return old.error();
      if (old->has_value()) {
        after.bytes -= std::min(after.bytes, entry_cost(e.key, **old));
        after.keys -= 1;
      }
    }
    after.keys += 1;
    after.bytes += entry_cost(e.key, e.value_json.size());
  }
  if (auto ok = check_quota(*before, after, policy_); !ok) return ok.error();
  if (mode == StoreImportMode::replace) {
    auto s = db_->stmt(kDeleteAll);
    if (!s) return s.error();
    Use use(*s);
    use.text(1, skill_id_);
    const int rc = use.step();
    if (rc != SQLITE_DONE) return sqlite_error(db_->db, rc, "deleting entries");
  }
  for (const StoreEntry& e : entries) {
    if (auto r = db_->upsert(skill_id_, e.key, e.value_json); !r) return r.error();
  }
  auto final_usage = db_->usage_of(skill_id_);
  if (!final_usage) return final_usage.error();
  if (auto r = tx.commit(); !r) return r.error();
  return *final_usage;
}

}  // namespace skillbox
