// state/local_db_backend.cpp — the local DbBackend (db_backend.h): db.sqlite and its lease db.lock.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "base/errno_text.h"
#include "base/skill_id.h"
#include "base/unique_fd.h"
#include "state/db_backend.h"
#include "state/file_io.h"

namespace skillbox::state {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

ErrorReply io_error(const std::string& what, int err = 0) {
  std::string message = "db: the host could not " + what;
  if (err != 0) message += " (" + base::errno_text(err) + ")";
  return ErrorReply{ErrorCode::IoError, std::move(message)};
}

/// An older skillbox wrote db.sqlite through SQLite's rollback journal; a crash could leave a hot
/// journal beside it, which the bytes alone do not include. Opening the file through SQLite (under
/// the lease, so no one else writes) replays it. Only then, and only on the host's own file.
void replay_old_journal(int dir_fd, const DataLayout& layout, std::string_view id) {
  struct stat st {};
  if (fstatat(dir_fd, DataLayout::kBundleDbJournal, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
    return;
  sqlite3* db = nullptr;
  const std::string file = layout.bundle_db(id).string();
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr) == SQLITE_OK)
    sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
  sqlite3_close_v2(db);
}

class LocalDbLease final : public DbLease {
 public:
  LocalDbLease(DataLayout layout, std::string id, base::UniqueFd dir, base::UniqueFd lock)
      : layout_(std::move(layout)), id_(std::move(id)), dir_(std::move(dir)), lock_(std::move(lock)) {}

  Result<bus::Bytes, ErrorReply> read_image(uint64_t max_image_bytes) override {
    replay_old_journal(dir_.get(), layout_, id_);
    base::UniqueFd fd(::openat(dir_.get(), DataLayout::kBundleDb, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT) return bus::Bytes{};  // a new database
      return io_error("open the skill's database", errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
      return io_error("read the skill's database (not a regular file)");
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > max_image_bytes) {
      return ErrorReply{ErrorCode::PayloadTooLarge, "db: the database is " + std::to_string(size) +
                                                        " bytes; an invocation holds at most " +
                                                        std::to_string(max_image_bytes) + " in memory"};
    }
    bus::Bytes image;
    try {
      image.resize(static_cast<size_t>(size));
    } catch (const std::bad_alloc&) {
      return ErrorReply{ErrorCode::PayloadTooLarge, "db: out of memory reading the database"};
    }
    size_t got = 0;
    while (got < image.size()) {
      const ssize_t n = ::read(fd.get(), image.data() + got, image.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return io_error("read the skill's database", errno);
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    if (got != image.size()) return io_error("read the skill's database (it shrank while read)");
    // A damaged file is reported, not handed to the engine (which would start a new database over it
    // at the end of the run): the operator decides what to do with it.
    if (!looks_like_sqlite(image)) {
      return ErrorReply{ErrorCode::IoError, "db: the skill's database " + layout_.bundle_db(id_).string() +
                                                " is damaged (not a SQLite database); skillbox left it as "
                                                "it is: move it away to start with an empty database"};
    }
    return image;
  }

  Result<void, ErrorReply> replace_image(std::span<const uint8_t> image) override {
    if (!looks_like_sqlite(image))
      return ErrorReply{ErrorCode::InvalidArgument,
                        "db: the new image is not a SQLite database; nothing was stored"};
    // The temporary has a fixed name: only the lease holder writes it, and a leftover of a crashed
    // writer is truncated here.
    base::UniqueFd fd(::openat(dir_.get(), DataLayout::kBundleDbTemp,
                               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, file_io::kFileMode));
    if (!fd) return io_error("write the skill's database", errno);
    int err = file_io::write_all(fd.get(), image.data(), image.size());
    if (!err && ::fsync(fd.get()) != 0) err = errno;
    fd.reset();
    if (!err && ::renameat(dir_.get(), DataLayout::kBundleDbTemp, dir_.get(), DataLayout::kBundleDb) != 0)
      err = errno;
    if (err) {
      ::unlinkat(dir_.get(), DataLayout::kBundleDbTemp, 0);
      return io_error("write the skill's database", err);
    }
    (void)file_io::sync_directory(dir_.get());
    // A journal of an older skillbox belongs to the file just replaced.
    ::unlinkat(dir_.get(), DataLayout::kBundleDbJournal, 0);
    return {};
  }

 private:
  const DataLayout layout_;
  const std::string id_;
  base::UniqueFd dir_;   // ROOT/skills/<id>
  base::UniqueFd lock_;  // db.lock, flocked: closing it releases the lease
};

class LocalDbBackend final : public DbBackend {
 public:
  explicit LocalDbBackend(DataLayout layout) : layout_(std::move(layout)) {}

  Result<std::unique_ptr<DbLease>, ErrorReply> acquire(std::string_view skill_id,
                                                       const bus::StopToken& stop) override {
    if (!base::is_valid_skill_id(skill_id))
      return io_error("open the database: the skill id is not a valid folder name");
    const std::string id(skill_id);
    base::UniqueFd data;
    base::UniqueFd skills;
    base::UniqueFd dir;
    int err = file_io::open_data_directory(layout_.root(), data);
    if (!err) err = file_io::ensure_directory(data.get(), DataLayout::kSkillsFolder, skills);
    if (!err) err = file_io::ensure_directory(skills.get(), id.c_str(), dir);
    if (err) return io_error("create the skill's data folder", err);
    base::UniqueFd lock(::openat(dir.get(), DataLayout::kBundleDbLock,
                                 O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, file_io::kFileMode));
    if (!lock) return io_error("open the database's lock file", errno);
    // The lease: one invocation of the skill at a time holds its database, from its first db call to
    // the end of the run. A waiter gives up at its own deadline or limit (with backoff: 1 ms doubling
    // to 20 ms, so it notices within 20 ms).
    auto backoff = std::chrono::milliseconds(1);
    while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) return io_error("lock the database", errno);
      if (stop.stop_requested())
        return ErrorReply{ErrorCode::Timeout,
                          "db: another invocation of this skill held its database until this invocation's "
                          "deadline (an invocation holds the database from its first db call to its end)"};
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(20));
    }
    // A temporary left by a writer that crashed before its rename: never part of the database.
    ::unlinkat(dir.get(), DataLayout::kBundleDbTemp, 0);
    return std::unique_ptr<DbLease>(
        std::make_unique<LocalDbLease>(layout_, id, std::move(dir), std::move(lock)));
  }

 private:
  const DataLayout layout_;
};

}  // namespace

bool looks_like_sqlite(std::span<const uint8_t> image) {
  return image.empty() || (image.size() >= kSqliteHeader.size() &&
                           std::equal(kSqliteHeader.begin(), kSqliteHeader.end(), image.begin(),
                                      [](char a, uint8_t b) { return static_cast<uint8_t>(a) == b; }));
}

std::shared_ptr<DbBackend> make_local_db_backend(const DataLayout& layout) {
  return std::make_shared<LocalDbBackend>(layout);
}

}  // namespace skillbox::state
