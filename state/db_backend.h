// state/db_backend.h — the storage of an OpenHuman bundle's database: one image per skill, and the
// lease that gives one invocation at a time the right to read and replace it (docs/openhuman.md "db").
//
// The engine that runs statements on an image (bundle_db/db_engine.h) is not here: it runs inside the
// worker in process isolation, on an in-memory copy the supervisor reads before the run and replaces
// after it. A backend stores bytes and never opens them as a database, except to replay what an older
// skillbox left (below).
//
// Local implementation (make_local_db_backend): DataLayout::bundle_db(id), ROOT/skills/<id>/db.sqlite;
// the lease is an exclusive flock(2) on db.lock beside it; a new image is written to .db.sqlite.tmp,
// fsynced and renamed over db.sqlite, then the folder is fsynced. A hot rollback journal
// (db.sqlite-journal) left by an older skillbox that wrote through SQLite is replayed, under the
// lease, before the image is read.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/result.h"
#include "state/data_layout.h"

namespace skillbox::state {

/// The first 16 bytes of every SQLite database file (https://sqlite.org/fileformat.html, 1.3).
inline constexpr std::string_view kSqliteHeader{"SQLite format 3\0", 16};

/// True for the empty image (no database yet) and for bytes that start with kSqliteHeader.
[[nodiscard]] bool looks_like_sqlite(std::span<const uint8_t> image);

/// One invocation's hold on one skill's database image. Destroying it releases the lease (also when
/// the process dies: the local lease is a flock). Not thread-safe.
class DbLease {
 public:
  virtual ~DbLease() = default;

  /// The stored image; empty when the skill has no database yet. Errors: PayloadTooLarge when it is
  /// larger than `max_image_bytes` (the message says both sizes; the caller names its limit), IoError
  /// when it cannot be read, or when it is not a SQLite database (damaged: it is left as it is,
  /// never replaced by a read).
  [[nodiscard]] virtual Result<bus::Bytes, bus::ErrorReply> read_image(uint64_t max_image_bytes) = 0;

  /// Replaces the stored image with `image`, atomically and durably: a crash at any point, a full disk
  /// or a file-size limit leaves the old image or the new one, never a mixture. InvalidArgument when
  /// `image` is not empty and not a SQLite database (nothing is written); IoError naming the cause.
  [[nodiscard]] virtual Result<void, bus::ErrorReply> replace_image(std::span<const uint8_t> image) = 0;
};

/// The database images of one tenant. Thread-safe; leases of one skill id exclude each other across
/// threads and processes.
class DbBackend {
 public:
  virtual ~DbBackend() = default;

  /// Waits for the lease of `skill_id`'s database, until `stop` is requested (its deadline included):
  /// then Timeout, nothing held. IoError for an invalid skill id or storage that cannot be reached.
  [[nodiscard]] virtual Result<std::unique_ptr<DbLease>, bus::ErrorReply> acquire(
      std::string_view skill_id, const bus::StopToken& stop) = 0;
};

/// The local backend of `layout` (see above). Folders are created 0700, files 0600, never through a
/// symbolic link.
[[nodiscard]] std::shared_ptr<DbBackend> make_local_db_backend(const DataLayout& layout);

}  // namespace skillbox::state
