// bundle_db/db_engine.h — the engine of the skill's own SQLite database (`db` of OpenHuman bundles).
//
// Its own layer, below capabilities/, because it runs inside the worker process, which must not link the
// host's capabilities (libcurl, the credential vault, the workspace). Two pieces, docs/openhuman.md "db":
//
//   - DbEngine, here: one invocation's connection to an in-memory copy of the database
//     (sqlite3_deserialize of the file's bytes). It runs wherever the bundle's JS runs: inside the
//     worker process in process isolation (so the deadline's SIGKILL stops any statement, and a SQLite
//     bug stays behind the sandbox), on the JS thread in-process. It opens no file, ever: its private
//     VFS keeps every temporary file (sorter spills, statement journals) in memory, counted in the
//     invocation's memory budget. What a statement may do is fenced by an authorizer (no ATTACH/DETACH,
//     no load_extension or fts3_tokenizer, no TEMP schema objects, no virtual table but FTS5, only
//     pragmas that read the schema); its size by `max_page_count` and the in-memory file's size limit
//     (permissions.db.quota_bytes); its time by a progress handler and by stop-token-polling versions
//     of the SQL functions whose cost is quadratic in their arguments (replace, instr, trim, like,
//     glob); its memory by SQLITE_LIMIT_LENGTH (derived from limits.memory_mb) and by the memory budget.
//   - DbFile, the host side (capabilities/db/db_file.h): the lease (an exclusive lock on
//     DATA/skills/<id>/db.lock held for the whole invocation, so two invocations of one bundle never
//     lose each other's update), the file's bytes read before the run, and the new bytes written back
//     atomically after it — only when the run ended `ok` or `error` (docs/limits.md "After a limit": a
//     write attempted after a limit is never persisted).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"

namespace skillbox::bundle_db {

/// What bounds one invocation's database.
struct DbSettings {
  uint64_t quota_bytes = 4ull * 1024 * 1024;    // permissions.db.quota_bytes: the database's size
  uint64_t memory_bytes = 32ull * 1024 * 1024;  // limits.memory_mb of the run, in bytes
};

/// The largest database image an invocation with `settings` holds, in bytes: the quota, but at most
/// half the run's memory (the image and its copy taken at the end are both in memory then), and at most
/// 192 MiB (it travels back in the worker's result frame, whose cap is bus::kMaxFrameBytes).
[[nodiscard]] uint64_t db_max_image_bytes(const DbSettings& settings);

/// The longest string or blob a statement may build (SQLITE_LIMIT_LENGTH), in bytes: an eighth of the
/// run's memory, from 64 KiB to 16 MiB. A value is held several times over while a row becomes JSON,
/// so this keeps one value well inside the budget.
[[nodiscard]] uint64_t db_max_value_bytes(const DbSettings& settings);

class DbEngine {
 public:
  /// A connection to an in-memory database holding `image` (a db.sqlite file's bytes; empty: a new
  /// database), opened on the first request. `stop` ends statements (a limit or the deadline) and
  /// must outlive this object, as must `budget` (may be null: nothing counted), where the image, the
  /// temporary files, SQLite's working memory and every result are counted.
  DbEngine(bus::Bytes image, DbSettings settings, const bus::StopToken& stop,
           bus::MemoryBudget* budget = nullptr);
  ~DbEngine();
  DbEngine(const DbEngine&) = delete;
  DbEngine& operator=(const DbEngine&) = delete;

  /// Runs exactly one statement. Reply: OptionalStringReply with JSON text (exec: rows changed; get:
  /// the first row object or null; all: an array of row objects), or ErrorReply: PermissionDenied (the
  /// authorizer refused, the message says what), QuotaExceeded (the database would outgrow
  /// permissions.db.quota_bytes), PayloadTooLarge (a value, the result or SQLite's working memory does
  /// not fit: the message names the limit), Timeout (the invocation reached a limit or its deadline
  /// while it ran), InvalidArgument (SQL errors, several statements, bad params), IoError (the image is
  /// not a database).
  bus::Reply handle(const bus::DbRequest& request);

  /// Ends the invocation's use of the database: rolls back a transaction still open, and returns the
  /// database's bytes if any statement changed them (nullopt: unchanged, or never opened). Call once,
  /// after the engine has finished; handle() refuses afterwards.
  [[nodiscard]] std::optional<bus::Bytes> finish();

  /// In a worker process only: makes the engine's private VFS SQLite's default, so SQLite seeds its
  /// random() from getrandom(2) rather than from /dev/urandom, which the sandbox does not open.
  static void prefer_private_vfs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::bundle_db
