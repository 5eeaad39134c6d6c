// capabilities/db/db_file.cpp — DbFile (db_file.h): the lease and the file's bytes.
#include "capabilities/db/db_file.h"

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

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

constexpr const char* kDbName = "db.sqlite";
constexpr const char* kLockName = "db.lock";
constexpr const char* kTempName = ".db.sqlite.tmp";

ErrorReply io_error(const std::string& what) {
  return ErrorReply{ErrorCode::IoError, "db: the host could not " + what};
}

/// An older skillbox wrote db.sqlite through SQLite's rollback journal; a crash could leave a hot
/// journal beside it, which the bytes alone do not include. Opening the file through SQLite (under
/// the lease, so no one else writes) replays it. Only then, and only on the host's own file.
void replay_old_journal(int dir_fd, const std::filesystem::path& dir) {
  struct stat st {};
  if (fstatat(dir_fd, "db.sqlite-journal", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) return;
  sqlite3* db = nullptr;
  const std::string file = (dir / kDbName).string();
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, nullptr) == SQLITE_OK)
    sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
  sqlite3_close_v2(db);
}

}  // namespace

Result<std::unique_ptr<DbFile>, ErrorReply> DbFile::open(const std::filesystem::path& data_dir,
                                                         const std::string& skill_id,
                                                         uint64_t max_image_bytes,
                                                         const bus::StopToken& stop) {
  std::unique_ptr<DbFile> f(new DbFile());
  const std::filesystem::path dir = data_dir / "skills" / skill_id;
  std::error_code ec;
  std::filesystem::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return io_error("create the skill's data folder");
  f->dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (f->dir_fd_ < 0) return io_error("open the skill's data folder");
  f->lock_fd_ = ::openat(f->dir_fd_, kLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (f->lock_fd_ < 0) return io_error("open the database's lock file");
  // The lease: one invocation of the skill at a time holds its database, from its first db call to
  // the end of the run. A waiter gives up at its own deadline or limit (with backoff: 1 ms doubling
  // to 20 ms, so it notices within 20 ms).
  auto backoff = std::chrono::milliseconds(1);
  while (::flock(f->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return io_error("lock the database");
    if (stop.stop_requested())
      return ErrorReply{ErrorCode::Timeout,
                        "db: another invocation of this skill held its database until this invocation's "
                        "deadline (an invocation holds the database from its first db call to its end)"};
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(20));
  }
  replay_old_journal(f->dir_fd_, dir);
  const int fd = ::openat(f->dir_fd_, kDbName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return f;  // a new database
    return io_error("open the skill's database");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error("read the skill's database (not a regular file)");
  }
  if (static_cast<uint64_t>(st.st_size) > max_image_bytes) {
    ::close(fd);
    return ErrorReply{ErrorCode::PayloadTooLarge,
                      "db: the database is " + std::to_string(st.st_size) +
                          " bytes; an invocation holds at most " + std::to_string(max_image_bytes) +
                          " in memory (permissions.db.quota_bytes, and half of limits.memory_mb)"};
  }
  try {
    f->image_.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    ::close(fd);
    return ErrorReply{ErrorCode::PayloadTooLarge, "db: out of memory reading the database"};
  }
  size_t got = 0;
  while (got < f->image_.size()) {
    const ssize_t n = ::read(fd, f->image_.data() + got, f->image_.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got != f->image_.size()) return io_error("read the skill's database");
  return f;
}

DbFile::~DbFile() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

bus::Bytes DbFile::take_image() {
  return std::move(image_);
}

Result<void, ErrorReply> DbFile::store(const bus::Bytes& image) {
  const int fd = ::openat(dir_fd_, kTempName, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return io_error("write the skill's database");
  size_t put = 0;
  while (put < image.size()) {
    const ssize_t n = ::write(fd, image.data() + put, image.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    put += static_cast<size_t>(n);
  }
  const bool ok = put == image.size() && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::renameat(dir_fd_, kTempName, dir_fd_, kDbName) != 0) {
    ::unlinkat(dir_fd_, kTempName, 0);
    return io_error("write the skill's database");
  }
  (void)::fsync(dir_fd_);
  // A journal of an older skillbox belongs to the file just replaced.
  ::unlinkat(dir_fd_, "db.sqlite-journal", 0);
  return {};
}

}  // namespace skillbox::capabilities
