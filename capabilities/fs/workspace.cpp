// capabilities/fs/workspace.cpp — `openhuman.fs` requests served inside one skill's workspace.
//
// Layout on disk (DATA = the resolved data directory):
//   DATA/skills/<id>/workspace/       the workspace (0700), opened once as `root_`
//   DATA/skills/<id>/workspace.lock   flock(2) serialising mutations; holds the change token
//
// Every skill path is parsed by parse_workspace_path() and then resolved by openat2 beneath `root_`
// (beneath.h). Operations that act on a name (mkdirat, unlinkat, renameat) first open the parent
// directory that way and then act on the single final component relative to that parent fd, so no
// path is ever checked by name and used again later.
//
// Quota accounting (docs/fs.md "Quotas"): the first mutation of an invocation scans the workspace
// under the lock (counting entries and regular-file bytes, deleting leftover temporaries of crashed
// writes), then keeps the totals up to date itself. Each mutation writes a fresh random token into
// the lock file before changing anything; an invocation whose cached token differs from the file's
// knows another invocation (or a crashed one) changed the workspace and rescans.
#include "capabilities/fs/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "capabilities/fs/beneath.h"
#include "capabilities/fs/unique_fd.h"
#include "capabilities/fs/workspace_path.h"

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;
constexpr const char* kWorkspaceDir = "workspace";
constexpr const char* kLockFile = "workspace.lock";
/// How long a mutation waits for another invocation of the same skill to finish its own (a write of
/// a maximal file with fsync takes well under this). Beyond it the call fails instead of hanging.
constexpr int kLockWaitMs = 5000;

enum class Access : uint8_t { read, write };

/// A request being served: the JS function's name and the path as the skill gave it (messages).
struct Call {
  std::string_view op;
  std::string_view path;
};

ErrorReply fail(ErrorCode code, const Call& call, std::string_view what) {
  std::string message(call.op);
  message += ' ';
  message += quote_path(call.path);
  message += ": ";
  message += what;
  return ErrorReply{code, std::move(message)};
}

std::string describe_errno(int err) {
  const char* text = strerrordesc_np(err);
  return text ? text : "error " + std::to_string(err);
}

/// Maps an errno from resolving or acting on `call.path` to what the skill sees.
ErrorReply errno_error(int err, const Call& call) {
  switch (err) {
    case ENOENT:
      return fail(ErrorCode::NotFound, call, "no such file or directory");
    case ENOTDIR:
      return fail(ErrorCode::NotFound, call, "a component of the path is not a directory");
    case ELOOP:
      return fail(ErrorCode::PermissionDenied, call,
                  "the path goes through a symbolic link; symbolic links are refused");
    case EXDEV:
      return fail(ErrorCode::PermissionDenied, call, "the path leaves the workspace");
    case EACCES:
    case EPERM:
      return fail(ErrorCode::PermissionDenied, call, "the host denied access");
    case EISDIR:
      return fail(ErrorCode::InvalidArgument, call, "is a directory");
    case ENOTEMPTY:
      return fail(ErrorCode::NotEmpty, call, "the directory is not empty");
    case EEXIST:
      return fail(ErrorCode::AlreadyExists, call, "already exists");
    case ENAMETOOLONG:
      return fail(ErrorCode::InvalidArgument, call, "the path is too long");
    case ENOSPC:
    case EDQUOT:
      return fail(ErrorCode::IoError, call, "the host is out of disk space");
    default:
      return fail(ErrorCode::IoError, call, "host I/O error (" + describe_errno(err) + ")");
  }
}

const char* mode_name(FsMode mode) {
  switch (mode) {
    case FsMode::none:
      return "none";
    case FsMode::read:
      return "read";
    case FsMode::write:
      return "write";
    case FsMode::readwrite:
      return "readwrite";
  }
  return "none";
}

double mtime_ms(const struct stat& st) {
  return static_cast<double>(st.st_mtim.tv_sec) * 1000.0 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
}

uint64_t random_u64() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    // getrandom cannot fail for 8 bytes once the pool is initialised; keep going regardless.
    const auto now = static_cast<uint64_t>(time(nullptr));
    value = (now * uint64_t{0x9E3779B97F4A7C15}) ^ static_cast<uint64_t>(getpid());
  }
  return value;
}

/// A fresh name for an atomic write's temporary file: the reserved prefix (never a skill's name),
/// then 16 random hex digits so that concurrent writers in one directory never collide.
std::string temporary_name() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(kReservedPrefix);
  name += "tmp-";
  const uint64_t bits = random_u64();
  for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(bits >> shift) & 0xF];
  return name;
}

int write_all(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

/// Copies the first `size` bytes of `from` (read from its current offset) to `to`.
int copy_bytes(int from, int to, uint64_t size) {
  std::vector<uint8_t> buffer(size_t{64} * 1024);
  while (size > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, buffer.size()));
    const ssize_t n = read(from, buffer.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // shrank while we held the lock: only the host can do that
    if (int err = write_all(to, buffer.data(), static_cast<size_t>(n))) return err;
    size -= static_cast<uint64_t>(n);
  }
  return 0;
}

/// fsync of a directory; file systems that cannot sync directories report EINVAL, which is not an
/// error of the operation.
int sync_directory(int fd) {
  if (fsync(fd) == 0 || errno == EINVAL || errno == EROFS) return 0;
  return errno;
}

/// Creates `name` in `parent` (0700) if missing and opens it as a directory without following a
/// symlink: the data folders below DATA are ours, a symlink there is not.
int ensure_directory(int parent, const char* name, UniqueFd& out) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  out.reset(openat(parent, name, kFlags));  // the common case: it exists
  if (out) return 0;
  if (errno != ENOENT) return errno;
  if (mkdirat(parent, name, kDirMode) != 0 && errno != EEXIST) return errno;
  out.reset(openat(parent, name, kFlags));
  return out ? 0 : errno;
}

/// Opens the host's data directory (it may be a symlink: it is the host's choice), creating it and
/// its missing parents 0700.
int open_data_directory(const std::filesystem::path& dir, UniqueFd& out) {
  out.reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (out) return 0;
  if (errno != ENOENT) return errno;
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (mkdir(partial.c_str(), kDirMode) != 0 && errno != EEXIST) return errno;
  }
  out.reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return out ? 0 : errno;
}

/// A directory fd that is either the workspace root (borrowed) or a subdirectory (owned).
struct Directory {
  UniqueFd owned;
  int fd = -1;
};

}  // namespace

struct Workspace::Impl {
  struct Usage {
    uint64_t bytes = 0;    // sum of st_size of regular files
    uint64_t entries = 0;  // files, directories and anything else, temporaries excluded
  };

  std::filesystem::path data_dir;
  std::string skill_id;
  FsPolicy policy;

  UniqueFd root;                            // the workspace directory, opened once
  UniqueFd lock;                            // workspace.lock, when the mode permits writing
  std::optional<std::string> open_failure;  // why opening failed (sticky for the invocation)

  std::optional<Usage> usage;  // valid while `token` equals the lock file's token
  uint64_t token = 0;
  bool locked = false;
  bool token_written = false;  // during the current lock: this mutation has published its token

  // ---- permissions and setup ---------------------------------------------------------------------

  std::optional<ErrorReply> allow(Access access, const Call& call) const {
    const bool granted = access == Access::read
                             ? policy.mode == FsMode::read || policy.mode == FsMode::readwrite
                             : policy.mode == FsMode::write || policy.mode == FsMode::readwrite;
    if (granted) return std::nullopt;
    std::string message = "permissions.fs.mode is \"";
    message += mode_name(policy.mode);
    message += "\"; ";
    message += call.op;
    message +=
        access == Access::read ? " needs \"read\" or \"readwrite\"" : " needs \"write\" or \"readwrite\"";
    return ErrorReply{ErrorCode::PermissionDenied, std::move(message)};
  }

  std::optional<ErrorReply> open(const Call& call) {
    if (root) return std::nullopt;
    if (!open_failure) open_failure = try_open();
    if (!open_failure->empty()) return fail(ErrorCode::IoError, call, *open_failure);
    return std::nullopt;
  }

  // Returns "" on success, else what went wrong (without host paths).
  std::string try_open() {
    // The manifest parser restricts ids to [a-z0-9][a-z0-9._-]*; refuse anything that could
    // name another folder in case a caller skipped it.
    if (skill_id.empty() || skill_id == "." || skill_id == ".." ||
        skill_id.find_first_of(std::string_view("/\0", 2)) != std::string::npos) {
      return "the skill id is not a valid folder name";
    }
    UniqueFd data;
    UniqueFd skills;
    UniqueFd skill;
    UniqueFd workspace;
    int err = open_data_directory(data_dir, data);
    if (!err) err = ensure_directory(data.get(), "skills", skills);
    if (!err) err = ensure_directory(skills.get(), skill_id.c_str(), skill);
    if (!err) err = ensure_directory(skill.get(), kWorkspaceDir, workspace);
    if (!err && (policy.mode == FsMode::write || policy.mode == FsMode::readwrite)) {
      lock.reset(openat(skill.get(), kLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, kFileMode));
      if (!lock) err = errno;
    }
    if (err) return "the workspace could not be opened (" + describe_errno(err) + ")";
    root = std::move(workspace);
    return "";
  }

  // ---- the mutation lock and usage -------------------------------------------------------------------

  /// Takes the workspace lock (waiting at most kLockWaitMs) and makes `usage` current.
  std::optional<ErrorReply> acquire(const Call& call) {
    for (int waited_us = 0, step_us = 100;; waited_us += step_us, step_us = std::min(step_us * 2, 20'000)) {
      if (flock(lock.get(), LOCK_EX | LOCK_NB) == 0) break;
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) return errno_error(errno, call);
      if (waited_us >= kLockWaitMs * 1000) {
        return fail(ErrorCode::Timeout, call,
                    "the workspace is busy: another invocation of this skill held it for more than " +
                        std::to_string(kLockWaitMs / 1000) + " s");
      }
      const timespec pause{0, static_cast<long>(step_us) * 1000};
      nanosleep(&pause, nullptr);
    }
    locked = true;
    token_written = false;
    uint64_t current = 0;
    if (pread(lock.get(), &current, sizeof current, 0) != static_cast<ssize_t>(sizeof current)) current = 0;
    if (!usage || current == 0 || current != token) {
      ScanVisitor scan;
      if (int err = walk_tree(root.get(), scan)) {
        release();
        return fail(ErrorCode::IoError, call,
                    "the workspace could not be scanned (" + describe_errno(err) + ")");
      }
      usage = scan.usage;
      token = current;
    }
    return std::nullopt;
  }

  void release() {
    if (!locked) return;
    flock(lock.get(), LOCK_UN);
    locked = false;
  }

  /// Publishes a new token before the first change of this mutation, so that any other invocation
  /// (also after we crash half-way) sees the workspace changed and recounts.
  std::optional<ErrorReply> begin_change(const Call& call) {
    if (token_written) return std::nullopt;
    uint64_t next = 0;
    while (next == 0 || next == token) next = random_u64();
    if (pwrite(lock.get(), &next, sizeof next, 0) != static_cast<ssize_t>(sizeof next)) {
      return errno_error(errno, call);
    }
    token = next;
    token_written = true;
    return std::nullopt;
  }

  /// QuotaExceeded unless the workspace may grow to `bytes` and `entries`. A change that does not
  /// grow a total is allowed even above a quota (a lowered quota must not block cleaning up).
  std::optional<ErrorReply> check_quota(const Call& call, uint64_t bytes, uint64_t entries) const {
    if (bytes > usage->bytes && bytes > policy.quota_bytes) {
      return fail(ErrorCode::QuotaExceeded, call,
                  "the workspace would hold " + std::to_string(bytes) +
                      " bytes; permissions.fs.quota_bytes is " + std::to_string(policy.quota_bytes));
    }
    if (entries > usage->entries && entries > policy.max_files) {
      return fail(ErrorCode::QuotaExceeded, call,
                  "the workspace would hold " + std::to_string(entries) +
                      " entries; permissions.fs.max_files is " + std::to_string(policy.max_files));
    }
    return std::nullopt;
  }

  ErrorReply file_too_large(const Call& call, uint64_t size) const {
    return fail(ErrorCode::QuotaExceeded, call,
                "the file would be " + std::to_string(size) + " bytes; permissions.fs.max_file_bytes is " +
                    std::to_string(policy.max_file_bytes));
  }

  /// Counts entries and regular-file bytes; removes leftover temporaries (we hold the lock, so no
  /// write is in progress: any temporary is from a writer that died before renaming it).
  class ScanVisitor : public TreeVisitor {
   public:
    Usage usage;
    int entry(int dir, const std::string& name, const struct stat& st, bool& descend) override {
      if (name.starts_with(kReservedPrefix)) {
        if (!S_ISDIR(st.st_mode)) unlinkat(dir, name.c_str(), 0);
        return 0;
      }
      ++usage.entries;
      if (S_ISREG(st.st_mode)) usage.bytes += static_cast<uint64_t>(st.st_size);
      descend = S_ISDIR(st.st_mode);
      return 0;
    }
    int leave(int, const std::string&, const struct stat&) override { return 0; }
  };

  /// Deletes everything below a directory without following symlinks (links are removed, never
  /// their targets).
  class RemoveVisitor : public TreeVisitor {
   public:
    int entry(int dir, const std::string& name, const struct stat& st, bool& descend) override {
      if (S_ISDIR(st.st_mode)) {
        descend = true;
        return 0;
      }
      return unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
    }
    int leave(int dir, const std::string& name, const struct stat&) override {
      return unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : errno;
    }
  };

  // ---- resolving ------------------------------------------------------------------------------------

  /// Opens the directory holding `path`'s last component.
  std::variant<Directory, ErrorReply> open_parent(const WorkspacePath& path, const Call& call) {
    Directory dir;
    if (path.components().size() == 1) {
      dir.fd = root.get();
      return dir;
    }
    const int err = open_beneath(root.get(), path.parent().c_str(), O_RDONLY | O_DIRECTORY, dir.owned);
    if (err == ENOENT) return fail(ErrorCode::NotFound, call, "the parent directory does not exist");
    if (err) return errno_error(err, call);
    dir.fd = dir.owned.get();
    return dir;
  }

  /// lstat of `name` in `dir`. Returns 0, ENOENT, or another errno.
  static int lstat_at(int dir, const std::string& name, struct stat& st) {
    return fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
  }

  static ErrorReply symlink_refused(const Call& call) { return errno_error(ELOOP, call); }

  /// Holds the workspace lock for one mutation; released on every path.
  class MutationLock {
   public:
    explicit MutationLock(Impl& impl) : impl_(impl) {}
    ~MutationLock() { impl_.release(); }
    MutationLock(const MutationLock&) = delete;
    MutationLock& operator=(const MutationLock&) = delete;

   private:
    Impl& impl_;
  };
};

// ---- construction --------------------------------------------------------------------------------------

Workspace::Workspace(std::filesystem::path data_dir, std::string skill_id, FsPolicy policy)
    : impl_(std::make_unique<Impl>()) {
  impl_->data_dir = std::move(data_dir);
  impl_->skill_id = std::move(skill_id);
  impl_->policy = policy;
}

Workspace::~Workspace() = default;

// Every handler follows the same order: mode, path syntax, open the workspace, resolve, act. The mode
// comes first so that a skill without the permission learns nothing about paths or files.

// ---- reading -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsReadFileRequest& r) {
  Impl& w = *impl_;
  const Call call{"readFile", r.path};
  if (auto e = w.allow(Access::read, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (auto e = w.open(call)) return *e;

  // First an O_PATH descriptor, which never opens the file itself: a FIFO, socket or device
  // (placed by the host; skills cannot create them) is refused without blocking or side effects.
  UniqueFd probe;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, probe))
    return errno_error(err, call);
  struct stat probe_st {};
  if (fstat(probe.get(), &probe_st) != 0) return errno_error(errno, call);
  if (S_ISDIR(probe_st.st_mode)) return fail(ErrorCode::InvalidArgument, call, "is a directory; use readdir");
  if (S_ISLNK(probe_st.st_mode)) return Impl::symlink_refused(call);
  if (!S_ISREG(probe_st.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");

  UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, fd)) {
    return errno_error(err, call);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  // The decision is made on the descriptor actually read. It may be a newer file than the probe's
  // (a concurrent writeFile renamed one into place): any regular file is fine.
  if (!S_ISREG(st.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > w.policy.max_file_bytes) {
    return fail(ErrorCode::PayloadTooLarge, call,
                "the file is " + std::to_string(size) + " bytes; permissions.fs.max_file_bytes is " +
                    std::to_string(w.policy.max_file_bytes));
  }
  bus::BytesReply reply;
  reply.data.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < reply.data.size()) {
    const ssize_t n = read(fd.get(), reply.data.data() + done, reply.data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, call);
    }
    if (n == 0) break;  // shrank meanwhile (only the host writes in place): return what is there
    done += static_cast<size_t>(n);
  }
  reply.data.resize(done);
  return reply;
}

bus::Reply Workspace::handle(const bus::FsReaddirRequest& r) {
  Impl& w = *impl_;
  const Call call{"readdir", r.path};
  if (auto e = w.allow(Access::read, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (auto e = w.open(call)) return *e;

  // O_DIRECTORY makes the kernel refuse anything else before opening it (no FIFO/device open).
  UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_RDONLY | O_DIRECTORY, fd)) {
    if (err == ENOTDIR) {
      UniqueFd probe;
      if (open_beneath(w.root.get(), path.relative().c_str(), O_PATH, probe) == 0) {
        return fail(ErrorCode::InvalidArgument, call, "not a directory");
      }
    }
    return errno_error(err, call);
  }
  std::vector<DirectoryEntry> listing;
  if (int err = list_directory(fd.get(), listing)) return errno_error(err, call);

  bus::FsReaddirReply reply;
  reply.entries.reserve(listing.size());
  for (DirectoryEntry& e : listing) {
    // Temporaries are the host's; names a skill could not pass back as a path are not listed.
    if (!is_visible_name(e.name)) continue;
    unsigned char type = e.type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (Impl::lstat_at(fd.get(), e.name, st) != 0) continue;  // gone meanwhile
      type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
    }
    const bus::FsEntryType t = type == DT_REG   ? bus::FsEntryType::file
                               : type == DT_DIR ? bus::FsEntryType::directory
                                                : bus::FsEntryType::other;
    reply.entries.push_back(bus::FsDirEntry{std::move(e.name), t});
  }
  std::sort(reply.entries.begin(), reply.entries.end(),
            [](const bus::FsDirEntry& a, const bus::FsDirEntry& b) { return a.name < b.name; });
  return reply;
}

bus::Reply Workspace::handle(const bus::FsStatRequest& r) {
  Impl& w = *impl_;
  const Call call{"stat", r.path};
  if (auto e = w.allow(Access::read, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (auto e = w.open(call)) return *e;

  UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, fd))
    return errno_error(err, call);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
  if (S_ISREG(st.st_mode))
    return bus::FsStatReply{bus::FsEntryType::file, static_cast<uint64_t>(st.st_size), mtime_ms(st)};
  if (S_ISDIR(st.st_mode)) return bus::FsStatReply{bus::FsEntryType::directory, 0, mtime_ms(st)};
  return fail(ErrorCode::PermissionDenied, call, "not a regular file or directory");
}

bus::Reply Workspace::handle(const bus::FsExistsRequest& r) {
  Impl& w = *impl_;
  const Call call{"exists", r.path};
  if (auto e = w.allow(Access::read, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (auto e = w.open(call)) return *e;

  UniqueFd fd;
  const int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, fd);
  if (err == ENOENT || err == ENOTDIR) return bus::BoolReply{false};
  // A symlink or an escape is not "absent": it is refused, like every other access through it.
  if (err) return errno_error(err, call);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
  return bus::BoolReply{true};
}

// ---- writing -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsWriteFileRequest& r) {
  Impl& w = *impl_;
  const Call call{r.append ? "appendFile" : "writeFile", r.path};
  if (auto e = w.allow(Access::write, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (path.is_root()) return fail(ErrorCode::InvalidArgument, call, "is a directory");
  if (!r.append && r.data.size() > w.policy.max_file_bytes) return w.file_too_large(call, r.data.size());
  if (auto e = w.open(call)) return *e;
  auto parent_or = w.open_parent(path, call);
  if (auto* e = std::get_if<ErrorReply>(&parent_or)) return std::move(*e);
  const int parent = std::get<Directory>(parent_or).fd;
  const std::string& name = path.name();

  Impl::MutationLock held(w);
  if (auto e = w.acquire(call)) return *e;

  struct stat old {};
  const int lstat_err = Impl::lstat_at(parent, name, old);
  const bool exists = lstat_err == 0;
  if (lstat_err && lstat_err != ENOENT) return errno_error(lstat_err, call);
  if (exists) {
    if (S_ISDIR(old.st_mode)) return fail(ErrorCode::InvalidArgument, call, "is a directory");
    if (S_ISLNK(old.st_mode)) return Impl::symlink_refused(call);
    if (!S_ISREG(old.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");
  }
  uint64_t old_size = exists ? static_cast<uint64_t>(old.st_size) : 0;

  // appendFile copies the current content into the temporary file, then appends: the same
  // all-or-nothing rename as writeFile, at the cost of copying (bounded by max_file_bytes).
  UniqueFd source;
  if (r.append && exists) {
    if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, source)) {
      return errno_error(err, call);
    }
    struct stat st {};
    if (fstat(source.get(), &st) != 0) return errno_error(errno, call);
    if (!S_ISREG(st.st_mode) || st.st_ino != old.st_ino || st.st_dev != old.st_dev) {
      return fail(ErrorCode::PermissionDenied, call, "not a regular file");
    }
    old_size = static_cast<uint64_t>(st.st_size);
  }
  const uint64_t new_size = (r.append ? old_size : 0) + r.data.size();
  if (new_size > w.policy.max_file_bytes) return w.file_too_large(call, new_size);
  const uint64_t bytes = w.usage->bytes - std::min(w.usage->bytes, old_size) + new_size;
  const uint64_t entries = w.usage->entries + (exists ? 0 : 1);
  if (auto e = w.check_quota(call, bytes, entries)) return *e;
  if (auto e = w.begin_change(call)) return *e;

  // Write a temporary file beside the target, make it durable, then rename it into place: readers
  // and concurrent writers see the old or the new content, never a mixture, and a failure (quota,
  // disk full, crash) leaves the old content untouched.
  const std::string temp = temporary_name();
  UniqueFd out(openat(parent, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode));
  if (!out) return errno_error(errno, call);
  int err = 0;
  if (source) err = copy_bytes(source.get(), out.get(), old_size);
  if (!err) err = write_all(out.get(), r.data.data(), r.data.size());
  if (!err && fsync(out.get()) != 0) err = errno;
  out.reset();
  if (!err && renameat(parent, temp.c_str(), parent, name.c_str()) != 0) err = errno;
  if (err) {
    unlinkat(parent, temp.c_str(), 0);
    return errno_error(err, call);
  }
  w.usage->bytes = bytes;
  w.usage->entries = entries;
  if (int sync_err = sync_directory(parent)) return errno_error(sync_err, call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsMkdirRequest& r) {
  Impl& w = *impl_;
  const Call call{"mkdir", r.path};
  if (auto e = w.allow(Access::write, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (auto e = w.open(call)) return *e;
  if (path.is_root()) {
    if (r.recursive) return bus::OkReply{};
    return fail(ErrorCode::AlreadyExists, call, "already exists");
  }

  if (!r.recursive) {
    auto parent_or = w.open_parent(path, call);
    if (auto* e = std::get_if<ErrorReply>(&parent_or)) return std::move(*e);
    const int parent = std::get<Directory>(parent_or).fd;
    Impl::MutationLock held(w);
    if (auto e = w.acquire(call)) return *e;
    struct stat st {};
    if (Impl::lstat_at(parent, path.name(), st) == 0) {
      if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
      return fail(ErrorCode::AlreadyExists, call, "already exists");
    }
    if (auto e = w.check_quota(call, w.usage->bytes, w.usage->entries + 1)) return *e;
    if (auto e = w.begin_change(call)) return *e;
    if (mkdirat(parent, path.name().c_str(), kDirMode) != 0) return errno_error(errno, call);
    ++w.usage->entries;
    if (int err = sync_directory(parent)) return errno_error(err, call);
    return bus::OkReply{};
  }

  // Recursive: walk down one component at a time from the root, creating what is missing; each
  // step opens the next directory beneath the previous one, so a symlink anywhere is refused.
  Impl::MutationLock held(w);
  if (auto e = w.acquire(call)) return *e;
  UniqueFd current;
  int dir = w.root.get();
  const auto& components = path.components();
  for (size_t i = 0; i < components.size(); ++i) {
    const char* component = components[i].c_str();
    UniqueFd next;
    int err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    if (err == ENOENT) {
      if (auto e = w.check_quota(call, w.usage->bytes, w.usage->entries + 1)) return *e;
      if (auto e = w.begin_change(call)) return *e;
      if (mkdirat(dir, component, kDirMode) != 0) return errno_error(errno, call);
      ++w.usage->entries;
      if (int sync_err = sync_directory(dir)) return errno_error(sync_err, call);
      err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    }
    if (err == ENOTDIR) {
      return fail(i + 1 == components.size() ? ErrorCode::AlreadyExists : ErrorCode::NotFound, call,
                  i + 1 == components.size() ? "already exists and is not a directory"
                                             : "a component of the path is not a directory");
    }
    if (err) return errno_error(err, call);
    current = std::move(next);
    dir = current.get();
  }
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRemoveRequest& r) {
  Impl& w = *impl_;
  const Call call{"remove", r.path};
  if (auto e = w.allow(Access::write, call)) return *e;
  auto parsed = parse_workspace_path(call.op, r.path);
  if (auto* e = std::get_if<ErrorReply>(&parsed)) return std::move(*e);
  const WorkspacePath& path = std::get<WorkspacePath>(parsed);
  if (path.is_root()) {
    return fail(ErrorCode::InvalidArgument, call, "the workspace root cannot be removed; remove its entries");
  }
  if (auto e = w.open(call)) return *e;
  auto parent_or = w.open_parent(path, call);
  if (auto* e = std::get_if<ErrorReply>(&parent_or)) return std::move(*e);
  const int parent = std::get<Directory>(parent_or).fd;
  const std::string& name = path.name();

  Impl::MutationLock held(w);
  if (auto e = w.acquire(call)) return *e;
  struct stat st {};
  if (int err = Impl::lstat_at(parent, name, st)) return errno_error(err, call);
  // Removing a symlink would not follow it, but every access through a name that is a symlink is
  // refused alike; a recursive remove of a directory deletes links inside it without following.
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);

  if (S_ISDIR(st.st_mode)) {
    if (r.recursive) {
      UniqueFd dir;
      if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_DIRECTORY, dir))
        return errno_error(err, call);
      if (auto e = w.begin_change(call)) return *e;
      // Recount at the next mutation rather than tracking every unlink: exact even when the walk
      // stops half-way.
      w.usage.reset();
      Impl::RemoveVisitor remover;
      if (int err = walk_tree(dir.get(), remover)) return errno_error(err, call);
    } else if (auto e = w.begin_change(call)) {
      return *e;
    }
    if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
      if (errno == ENOTEMPTY || errno == EEXIST) {
        return fail(ErrorCode::NotEmpty, call,
                    "the directory is not empty; pass {recursive: true} to remove it");
      }
      return errno_error(errno, call);
    }
  } else {
    if (auto e = w.begin_change(call)) return *e;
    if (unlinkat(parent, name.c_str(), 0) != 0) return errno_error(errno, call);
    if (S_ISREG(st.st_mode)) w.usage->bytes -= std::min(w.usage->bytes, static_cast<uint64_t>(st.st_size));
  }
  if (w.usage && w.usage->entries > 0) --w.usage->entries;
  if (int err = sync_directory(parent)) return errno_error(err, call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRenameRequest& r) {
  Impl& w = *impl_;
  const Call from_call{"rename", r.from};
  const Call to_call{"rename", r.to};
  if (auto e = w.allow(Access::write, from_call)) return *e;
  auto from_parsed = parse_workspace_path(from_call.op, r.from);
  if (auto* e = std::get_if<ErrorReply>(&from_parsed)) return std::move(*e);
  const WorkspacePath& from = std::get<WorkspacePath>(from_parsed);
  auto to_parsed = parse_workspace_path(to_call.op, r.to);
  if (auto* e = std::get_if<ErrorReply>(&to_parsed)) return std::move(*e);
  const WorkspacePath& to = std::get<WorkspacePath>(to_parsed);
  if (from.is_root())
    return fail(ErrorCode::InvalidArgument, from_call, "the workspace root cannot be renamed");
  if (to.is_root()) return fail(ErrorCode::InvalidArgument, to_call, "the workspace root cannot be replaced");
  if (auto e = w.open(from_call)) return *e;
  auto from_parent_or = w.open_parent(from, from_call);
  if (auto* e = std::get_if<ErrorReply>(&from_parent_or)) return std::move(*e);
  auto to_parent_or = w.open_parent(to, to_call);
  if (auto* e = std::get_if<ErrorReply>(&to_parent_or)) return std::move(*e);
  const int from_parent = std::get<Directory>(from_parent_or).fd;
  const int to_parent = std::get<Directory>(to_parent_or).fd;

  Impl::MutationLock held(w);
  if (auto e = w.acquire(from_call)) return *e;
  struct stat src {};
  if (int err = Impl::lstat_at(from_parent, from.name(), src)) return errno_error(err, from_call);
  if (S_ISLNK(src.st_mode)) return Impl::symlink_refused(from_call);
  struct stat dst {};
  const int dst_err = Impl::lstat_at(to_parent, to.name(), dst);
  if (dst_err && dst_err != ENOENT) return errno_error(dst_err, to_call);
  const bool replaces = dst_err == 0;
  if (replaces) {
    if (S_ISLNK(dst.st_mode)) return Impl::symlink_refused(to_call);
    // Same file under both names (also `a` -> `a`): POSIX rename does nothing.
    if (dst.st_dev == src.st_dev && dst.st_ino == src.st_ino) return bus::OkReply{};
    if (S_ISDIR(dst.st_mode) && !S_ISDIR(src.st_mode)) {
      return fail(ErrorCode::InvalidArgument, to_call, "is a directory; a file cannot replace it");
    }
    if (!S_ISDIR(dst.st_mode) && S_ISDIR(src.st_mode)) {
      return fail(ErrorCode::InvalidArgument, to_call, "is not a directory; a directory cannot replace it");
    }
  }
  if (auto e = w.begin_change(from_call)) return *e;
  if (renameat(from_parent, from.name().c_str(), to_parent, to.name().c_str()) != 0) {
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST)
      return fail(ErrorCode::NotEmpty, to_call, "is a directory that is not empty");
    if (err == EINVAL)
      return fail(ErrorCode::InvalidArgument, to_call, "a directory cannot move into itself");
    return errno_error(err, to_call);
  }
  if (replaces) {
    if (S_ISREG(dst.st_mode)) w.usage->bytes -= std::min(w.usage->bytes, static_cast<uint64_t>(dst.st_size));
    if (w.usage->entries > 0) --w.usage->entries;
  }
  int err = sync_directory(to_parent);
  if (!err && from_parent != to_parent) err = sync_directory(from_parent);
  if (err) return errno_error(err, to_call);
  return bus::OkReply{};
}

}  // namespace skillbox::capabilities
