// skillbox/store.h — the persistent per-skill key-value store: one SQLite database per data directory.
//
// A fresh runtime per invocation means this store is the only state that survives between runs of a
// skill, so it must never lose a write it acknowledged. The same code serves three callers: the store
// capability behind `store.get/set/delete/keys/increment/compareAndSet` (capabilities/store/, through
// the local state::StoreBackend), the operators' `skillbox store` command (cli/store_command.cpp), and
// embedders that keep a connection open across invocations. The implementation is state/sqlite_store.cpp.
// See docs/store.md for the file format, durability settings, quota accounting and concurrency.
//
// Shape:
//   auto db = skillbox::StoreDatabase::open(skillbox::StoreDatabase::path_in(data_dir));
//   if (!db) { report(db.error().message); }
//   auto notes = db->skill("notes", policy.store);          // every row this object touches is notes'
//   notes->set("greeting", R"("hello")");                     // durable once it returns
//   notes->get("greeting");                                   // -> "\"hello\""
//
// Isolation: a SkillStore is bound to one skill id when it is made; every SQL statement it runs binds
// that id, so it can neither read, list nor count another skill's rows.
//
// Threads: a StoreDatabase is one SQLite connection. Use it, and the SkillStores made from it, from one
// thread at a time; open one StoreDatabase per thread or process for parallel work. Several processes
// may use the same file at once (WAL mode, a busy timeout, every write in one IMMEDIATE transaction).
//
// Error messages never contain host paths (they may be shown to skills); callers that talk to
// operators add the path themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "skillbox/policy.h"
#include "skillbox/result.h"

namespace skillbox {

/// Why a store operation failed. Nothing was changed by a failed operation.
enum class StoreErrc : uint8_t {
  invalid_argument,  // malformed skill id, key, prefix or value (empty, NUL, not UTF-8, not JSON)
  quota_exceeded,    // the write would pass a StorePolicy limit (bytes, keys, key length, value size)
  corrupt,           // the file is damaged or is not a skillbox store; it was left untouched
  newer_schema,      // the file was written by a newer skillbox; it was left untouched
  busy,              // another connection held the write lock for longer than the busy timeout
  io_error,          // any other failure of SQLite or the OS (disk full, permissions, ...)
};

/// Stable lower-case name of a StoreErrc ("quota_exceeded", ...).
[[nodiscard]] std::string_view to_string(StoreErrc code);

/// A failed store operation: what went wrong and what to do. `message` never contains a host path.
struct StoreError {
  StoreErrc code = StoreErrc::io_error;
  std::string message;
};

/// A value of type T or a StoreError (skillbox/result.h).
template <typename T>
using StoreResult = Result<T, StoreError>;

/// Success without a value.
struct StoreOk {};

/// Bytes a stored entry costs beyond its key and value. The row also holds the skill id (up to 64
/// bytes, repeated in every row), a record header, a b-tree cell pointer and page slack; 64 bytes keeps
/// the quota close to the real disk cost and stops a skill from filling the disk with empty values
/// (10,000 empty entries still cost 640,000 bytes of quota).
inline constexpr uint64_t kStoreEntryOverheadBytes = 64;

/// Schema version this build writes. A database with a lower version is migrated forward on open; a
/// higher one is refused (StoreErrc::newer_schema) and never modified.
inline constexpr int64_t kStoreSchemaVersion = 2;

/// `PRAGMA application_id` of every skillbox store ("SkBx"): a SQLite file with another id is not ours
/// and is refused rather than written to.
inline constexpr int32_t kStoreApplicationId = 0x536B4278;

/// One entry of a skill's store. `value_json` is JSON text.
struct StoreEntry {
  std::string key;
  std::string value_json;
};

/// What a skill's entries cost against its StorePolicy.
struct StoreUsage {
  uint64_t keys = 0;
  /// Key bytes + value bytes + kStoreEntryOverheadBytes per entry (UTF-8 bytes, not characters).
  uint64_t bytes = 0;
};

/// Settings of an open database as SQLite reports them (for operators and tests).
struct StoreInfo {
  int64_t schema_version = 0;
  std::string journal_mode;  // "wal"
  int64_t synchronous = 0;   // 2 = FULL: every commit is fsynced before it returns
  int64_t busy_timeout_ms = 0;
};

/// How to open a database.
struct StoreOpenOptions {
  /// How long a statement waits for another connection's write lock before failing with
  /// StoreErrc::busy. Writes hold the lock for one short transaction, so waits are normally brief.
  std::chrono::milliseconds busy_timeout{5000};
  /// No busy wait lasts past this instant (an invocation's deadline), whatever busy_timeout says: a
  /// statement that would wait longer fails with StoreErrc::busy at that instant. max(): no such bound.
  std::chrono::steady_clock::time_point wait_until = std::chrono::steady_clock::time_point::max();
  /// Asked between the backoff steps of a busy wait (when wait_until is set): true ends the wait at
  /// once with StoreErrc::busy. An invocation passes "a limit tripped or the caller cancelled", so that
  /// no limit leaves a run waiting for another connection's lock. Must be cheap and thread-safe.
  std::function<bool()> stop_requested;
  /// Create the file (and its directory, mode 0700) when it does not exist. An existing file is never
  /// created anew, truncated or "repaired".
  bool create = true;
};

class SkillStore;

/// One connection to a store database file.
class StoreDatabase {
 public:
  /// The store file of a data directory (`data_dir/store.sqlite`; the local state backends' layout).
  [[nodiscard]] static std::filesystem::path path_in(const std::filesystem::path& data_dir);

  /// Opens the store at `file`. A missing file is created (when options.create) fully initialised and
  /// mode 0600, atomically: other processes see either no file or a complete empty store. An existing
  /// file is checked before anything is written to it:
  ///  - not SQLite, damaged header, a SQLite file of another application, or a schema that is not
  ///    exactly the one skillbox creates for the file's version (a planted trigger, view, table or
  ///    index; each is named in the message) -> StoreErrc::corrupt, file left byte-identical;
  ///  - schema version newer than kStoreSchemaVersion -> StoreErrc::newer_schema;
  ///  - older schema -> migrated forward in one transaction.
  /// The connection then uses WAL, synchronous=FULL, the busy timeout, defensive mode and
  /// trusted_schema=OFF (see docs/store.md). Damage deeper in the file is detected when a statement
  /// reaches it (StoreErrc::corrupt); `check()` scans the whole file.
  static StoreResult<StoreDatabase> open(const std::filesystem::path& file,
                                         const StoreOpenOptions& options = {});

  StoreDatabase(StoreDatabase&&) noexcept;
  StoreDatabase& operator=(StoreDatabase&&) noexcept;
  ~StoreDatabase();

  /// Checks a skill id against the manifest rule `[a-z0-9][a-z0-9._-]{0,63}`: nullopt when valid, else
  /// the invalid_argument error skill() would return. Lets callers refuse a bad id before opening.
  [[nodiscard]] static std::optional<StoreError> check_skill_id(std::string_view skill_id);

  /// A view of `skill_id`'s rows with `policy`'s quotas. The id must match the manifest rule
  /// `[a-z0-9][a-z0-9._-]{0,63}` (StoreErrc::invalid_argument otherwise). The view shares this
  /// connection and keeps it alive.
  [[nodiscard]] StoreResult<SkillStore> skill(std::string_view skill_id, const StorePolicy& policy) const;

  /// Skill ids that have at least one entry, sorted. For operators.
  [[nodiscard]] StoreResult<std::vector<std::string>> skills() const;

  /// Verifies the schema exactly (every sqlite_schema row; differences named by type and name), runs
  /// `PRAGMA integrity_check` over the whole file, compares the usage table with the entries and checks
  /// that every value is JSON. Writes nothing. StoreErrc::corrupt names the first kind of problem found.
  /// Cost grows with the file size (a full scan), so it is for operators, not for every invocation.
  [[nodiscard]] StoreResult<StoreOk> check() const;

  /// Schema version and connection settings.
  [[nodiscard]] StoreResult<StoreInfo> info() const;

  struct Impl;

 private:
  explicit StoreDatabase(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

/// How SkillStore::import treats entries that are not in the imported set.
enum class StoreImportMode : uint8_t {
  merge,    // keep them; imported keys are inserted or overwritten
  replace,  // delete them: afterwards the skill's store holds exactly the imported entries
};

/// One skill's entries in a StoreDatabase. Key rules (docs/store.md): 1..512 bytes of valid UTF-8
/// without NUL. Values are JSON text: validated before they are stored and again when read back.
/// Keys sort by their UTF-8 bytes (= Unicode code point order).
class SkillStore {
 public:
  /// The value of `key` as JSON text, or nullopt when the key does not exist. A stored value that is no
  /// longer valid JSON is reported as StoreErrc::corrupt, never returned.
  [[nodiscard]] StoreResult<std::optional<std::string>> get(std::string_view key) const;

  /// Stores `value_json` under `key`, replacing any previous value. Durable when it returns
  /// (synchronous=FULL). Checks and write happen in one IMMEDIATE transaction, so parallel writers
  /// cannot jointly pass a quota. Errors: invalid_argument (bad key, value not JSON text or nested deeper
  /// than 512 levels of arrays and objects); quota_exceeded (key longer than StorePolicy::kMaxKeyBytes, value
  /// above max_value_bytes, or the new totals above max_keys / quota_bytes). The old value of an overwritten
  /// key is not counted against the new total, and a write that does not increase usage is always allowed (so
  /// a skill over a lowered quota can still shrink its data).
  StoreResult<StoreOk> set(std::string_view key, std::string_view value_json);

  /// Deletes `key`. Returns whether it existed. Always allowed (it never increases usage).
  StoreResult<bool> remove(std::string_view key);

  /// Atomically adds `delta` to the number stored under `key` and returns the sum, which is stored as
  /// JSON text spelled as JSON.stringify spells that number. A missing key counts as 0 (and is created);
  /// the read, the addition and the write are one IMMEDIATE transaction, so concurrent increments from any
  /// number of connections, threads or processes never lose one (docs/store.md "Concurrency").
  /// Arithmetic is IEEE-754 double, as JavaScript's `+`: integers are exact up to 2^53, fractions round
  /// (0.1 + 0.2 stores 0.30000000000000004). Errors, nothing changed: invalid_argument when `delta` is
  /// NaN or infinite, when the stored value is not a JSON number (the message names the key and what it
  /// holds), or when the sum is not finite; the key rules and quotas of set() (quota_exceeded).
  StoreResult<double> increment(std::string_view key, double delta);

  /// Atomically stores `value_json` under `key` only if the key currently holds `expected_json`, and
  /// returns whether it did. `expected_json` nullopt means "the key must not exist"; `value_json`
  /// nullopt deletes the key instead of storing a value. Equality is JSON value equality (the rule of
  /// PostgreSQL's jsonb `=`): same type; numbers by numeric value (1 equals 1.0); strings by their
  /// characters; arrays element by element; objects by their set of members, whatever the order in
  /// which they were written. The compare and the write are one IMMEDIATE transaction. Errors, nothing
  /// changed: invalid_argument (bad key, `expected_json` or `value_json` not JSON text); the key and
  /// value rules of set() (key length, max_value_bytes: quota_exceeded), checked before the comparison;
  /// the totals (max_keys, quota_bytes: quota_exceeded), checked only when it matched. A stored value
  /// that is not valid JSON is StoreErrc::corrupt.
  StoreResult<bool> compare_and_set(std::string_view key, const std::optional<std::string>& expected_json,
                                    const std::optional<std::string>& value_json);

  /// Keys starting with `prefix` (empty: all), sorted by UTF-8 bytes. `prefix` follows the key rules
  /// except that it may be empty.
  [[nodiscard]] StoreResult<std::vector<std::string>> keys(std::string_view prefix = {}) const;

  /// Every entry, sorted by key, values validated as in get(). For export.
  [[nodiscard]] StoreResult<std::vector<StoreEntry>> entries() const;

  /// Keys and bytes counted against the quota.
  [[nodiscard]] StoreResult<StoreUsage> usage() const;

  /// Applies `entries` all-or-nothing in one transaction: every key and value is validated first, keys
  /// must be distinct, and the resulting usage must fit the policy (StoreErrc::quota_exceeded, nothing
  /// changed, otherwise). Returns the usage afterwards.
  StoreResult<StoreUsage> import(const std::vector<StoreEntry>& entries, StoreImportMode mode);

  [[nodiscard]] const std::string& skill_id() const { return skill_id_; }
  [[nodiscard]] const StorePolicy& policy() const { return policy_; }

 private:
  friend class StoreDatabase;
  // Writes `value_json` under `key` inside the caller's write transaction after checking the totals
  // against the policy; `old_value_bytes` is the size of the value it replaces (nullopt: a new key).
  StoreResult<StoreOk> write_checked(std::string_view key, std::string_view value_json,
                                     std::optional<uint64_t> old_value_bytes);
  SkillStore(std::shared_ptr<StoreDatabase::Impl> db, std::string skill_id, const StorePolicy& policy)
      : db_(std::move(db)), skill_id_(std::move(skill_id)), policy_(policy) {}

  std::shared_ptr<StoreDatabase::Impl> db_;
  std::string skill_id_;
  StorePolicy policy_;
};

}  // namespace skillbox
