// capabilities/db/db_file.h — the host side of a bundle's database: its file and the lease on it.
//
// The engine that runs statements on the file's bytes is bundle_db/db_engine.h (it runs in the worker
// process in process isolation); this side stays on the host, since it opens files under the data dir.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/result.h"

namespace skillbox::capabilities {

/// One invocation's hold on DATA/skills/<id>/db.sqlite.
class DbFile {
 public:
  /// Takes the lease: an exclusive flock(2) on DATA/skills/<id>/db.lock (the folder and the lock file
  /// are created 0700/0600, never following a symlink), retried until `stop` is requested; then reads
  /// db.sqlite (absent: empty). Refusals: Timeout (another invocation of the skill held the lease until
  /// this one's deadline or limit), PayloadTooLarge (the file is larger than `max_image_bytes`), IoError.
  /// A rollback journal left beside the file by an older skillbox is replayed first.
  static Result<std::unique_ptr<DbFile>, bus::ErrorReply> open(const std::filesystem::path& data_dir,
                                                               const std::string& skill_id,
                                                               uint64_t max_image_bytes,
                                                               const bus::StopToken& stop);
  ~DbFile();  // releases the lease
  DbFile(const DbFile&) = delete;
  DbFile& operator=(const DbFile&) = delete;

  /// The bytes read by open(), moved out (once).
  [[nodiscard]] bus::Bytes take_image();

  /// Replaces db.sqlite with `image`, atomically: a temporary file in the same folder, fsync, rename
  /// over db.sqlite, fsync of the folder. A crash at any point leaves the old or the new database.
  Result<void, bus::ErrorReply> store(const bus::Bytes& image);

 private:
  DbFile() = default;
  int lock_fd_ = -1;
  int dir_fd_ = -1;
  bus::Bytes image_;
};

}  // namespace skillbox::capabilities
