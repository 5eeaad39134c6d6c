// capabilities/fs/workspace_lock.cpp — opening a workspace, its mutation lock, usage and change token.
#include "capabilities/fs/workspace_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/errno_text.h"
#include "base/skill_id.h"
#include "capabilities/fs/beneath.h"

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;
using workspace_io::Call;
using workspace_io::errno_error;
using workspace_io::fail;

constexpr const char* kWorkspaceDir = "workspace";
constexpr const char* kLockFile = "workspace.lock";

/// Counts entries and regular-file bytes; removes leftover temporaries (we hold the lock, so no
/// write is in progress: any temporary is from a writer that died before renaming it).
/// Stops with ECANCELED once the invocation must stop (checked every kStopCheckEvery entries): a scan
/// of a large workspace must not outlive the deadline. It changes nothing but deleting temporaries,
/// so stopping half-way leaves nothing to undo; the totals are simply not cached.
class ScanVisitor : public TreeVisitor {
 public:
  static constexpr uint64_t kStopCheckEvery = 256;
  explicit ScanVisitor(const bus::StopToken& stop) : stop_(stop) {}
  uint64_t bytes = 0;
  uint64_t entries = 0;
  int entry(int dir, const std::string& name, const struct stat& st, bool& descend) override {
    if (++seen_ % kStopCheckEvery == 0 && stop_.stop_requested()) return ECANCELED;
    if (name.starts_with(kReservedPrefix)) {
      if (!S_ISDIR(st.st_mode)) unlinkat(dir, name.c_str(), 0);
      return 0;
    }
    ++entries;
    if (S_ISREG(st.st_mode)) bytes += static_cast<uint64_t>(st.st_size);
    descend = S_ISDIR(st.st_mode);
    return 0;
  }
  int leave(int, const std::string&, const struct stat&) override { return 0; }

 private:
  const bus::StopToken& stop_;
  uint64_t seen_ = 0;
};

}  // namespace

// ---- permissions and setup -----------------------------------------------------------------------

Result<void, ErrorReply> Workspace::Impl::allow(Access access, const Call& call) const {
  const bool granted = access == Access::read
                           ? policy.mode == FsMode::read || policy.mode == FsMode::readwrite
                           : policy.mode == FsMode::write || policy.mode == FsMode::readwrite;
  if (granted) return {};
  std::string message = "permissions.fs.mode is \"";
  message += to_string(policy.mode);
  message += "\"; ";
  message += call.op;
  message +=
      access == Access::read ? " needs \"read\" or \"readwrite\"" : " needs \"write\" or \"readwrite\"";
  if (policy.mode_narrowed)
    message += " (the mode was narrowed for this run: --fs-mode, or Invocation::narrowing)";
  return ErrorReply{ErrorCode::PermissionDenied, std::move(message)};
}

Result<void, ErrorReply> Workspace::Impl::open(const Call& call) {
  if (root) return {};
  if (!open_failure) open_failure = try_open();
  if (!open_failure->empty()) return fail(ErrorCode::IoError, call, *open_failure);
  return {};
}

std::string Workspace::Impl::try_open() {
  // The manifest's rule, checked again in case a caller skipped it: an id must never name another
  // folder ("..", "a/b").
  if (!base::is_valid_skill_id(skill_id)) return "the skill id is not a valid folder name";
  base::UniqueFd data;
  base::UniqueFd skills;
  base::UniqueFd skill;
  base::UniqueFd workspace;
  int err = workspace_io::open_data_directory(data_dir, data);
  if (!err) err = workspace_io::ensure_directory(data.get(), "skills", skills);
  if (!err) err = workspace_io::ensure_directory(skills.get(), skill_id.c_str(), skill);
  if (!err) err = workspace_io::ensure_directory(skill.get(), kWorkspaceDir, workspace);
  if (!err && (policy.mode == FsMode::write || policy.mode == FsMode::readwrite)) {
    lock.reset(
        openat(skill.get(), kLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, workspace_io::kFileMode));
    if (!lock) err = errno;
  }
  if (err) return "the workspace could not be opened (" + base::errno_text(err) + ")";
  root = std::move(workspace);
  return "";
}

// ---- the mutation lock and usage ---------------------------------------------------------------------

Result<void, ErrorReply> Workspace::Impl::acquire(const Call& call) {
  // The wait ends at kLockWaitMs or at the invocation's deadline, whichever comes first: a lock held
  // elsewhere must not keep a run past its deadline (SECURITY-CASES "Waits are bounded by the deadline").
  const auto started = std::chrono::steady_clock::now();
  const auto give_up = std::min(stop->deadline() - started,
                                std::chrono::steady_clock::duration(std::chrono::milliseconds(kLockWaitMs))) +
                       started;
  for (int step_us = 100;; step_us = std::min(step_us * 2, 20'000)) {
    if (flock(lock.get(), LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return errno_error(errno, call);
    const auto now = std::chrono::steady_clock::now();
    if (stop->stop_requested())
      return fail(ErrorCode::Timeout, call,
                  "the workspace is busy (another invocation of this skill holds it) and this invocation "
                  "reached its deadline or a limit while waiting; nothing was changed");
    if (now >= give_up) {
      return fail(ErrorCode::Timeout, call,
                  "the workspace is busy: another invocation of this skill held it for more than " +
                      std::to_string(kLockWaitMs / 1000) + " s");
    }
    const auto pause_ns = std::min<int64_t>(
        int64_t{step_us} * 1000, std::chrono::duration_cast<std::chrono::nanoseconds>(give_up - now).count());
    const timespec pause{0, static_cast<long>(std::max<int64_t>(pause_ns, 1000))};
    nanosleep(&pause, nullptr);
  }
  locked = true;
  token_written = false;
  uint64_t current = 0;
  if (pread(lock.get(), &current, sizeof current, 0) != static_cast<ssize_t>(sizeof current)) current = 0;
  if (!usage || current == 0 || current != token) {
    ScanVisitor scan(*stop);
    if (int err = walk_tree(root.get(), scan)) {
      release();
      if (err == ECANCELED)
        return fail(
            ErrorCode::Timeout, call,
            "stopped: the invocation reached a limit while counting the workspace; nothing was changed");
      return fail(ErrorCode::IoError, call,
                  "the workspace could not be scanned (" + base::errno_text(err) + ")");
    }
    usage = Usage{scan.bytes, scan.entries};
    token = current;
  }
  return {};
}

void Workspace::Impl::release() {
  if (!locked) return;
  flock(lock.get(), LOCK_UN);
  locked = false;
}

Result<void, ErrorReply> Workspace::Impl::begin_change(const Call& call) {
  if (token_written) return {};
  uint64_t next = 0;
  while (next == 0 || next == token) next = workspace_io::random_u64();
  if (pwrite(lock.get(), &next, sizeof next, 0) != static_cast<ssize_t>(sizeof next)) {
    return errno_error(errno, call);
  }
  token = next;
  token_written = true;
  return {};
}

Result<void, ErrorReply> Workspace::Impl::check_quota(const Call& call, uint64_t bytes,
                                                      uint64_t entries) const {
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
  return {};
}

ErrorReply Workspace::Impl::file_too_large(const Call& call, uint64_t size) const {
  return fail(ErrorCode::QuotaExceeded, call,
              "the file would be " + std::to_string(size) + " bytes; permissions.fs.max_file_bytes is " +
                  std::to_string(policy.max_file_bytes));
}

// ---- resolving ---------------------------------------------------------------------------------------

Result<Directory, ErrorReply> Workspace::Impl::open_parent(const WorkspacePath& path, const Call& call) {
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

int Workspace::Impl::lstat_at(int dir, const std::string& name, struct stat& st) {
  return fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

ErrorReply Workspace::Impl::symlink_refused(const Call& call) {
  return errno_error(ELOOP, call);
}

}  // namespace skillbox::capabilities
