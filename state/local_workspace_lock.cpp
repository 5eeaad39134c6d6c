// state/local_workspace_lock.cpp — opening a local workspace, its mutation lock, usage and change token
// (local_workspace.h), and make_local_workspace_backend().
#include <fcntl.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "base/skill_id.h"
#include "state/beneath.h"
#include "state/file_io.h"
#include "state/local_workspace.h"

namespace skillbox::state {
namespace {

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
    if (name.starts_with(kWorkspaceReservedPrefix)) {
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

class LocalWorkspaceBackend final : public WorkspaceBackend {
 public:
  explicit LocalWorkspaceBackend(DataLayout layout) : layout_(std::move(layout)) {}

  WorkspaceResult<std::unique_ptr<WorkspaceSession>> open(std::string_view skill_id, bool writable,
                                                          const bus::StopToken& stop) override {
    // The manifest's rule, checked again in case a caller skipped it: an id must never name another
    // folder ("..", "a/b").
    if (!base::is_valid_skill_id(skill_id)) return WorkspaceError{WorkspaceErrc::invalid_skill_id};
    const std::string id(skill_id);
    base::UniqueFd data;
    base::UniqueFd skills;
    base::UniqueFd skill;
    base::UniqueFd workspace;
    base::UniqueFd lock;
    int err = file_io::open_data_directory(layout_.root(), data);
    if (!err) err = file_io::ensure_directory(data.get(), DataLayout::kSkillsFolder, skills);
    if (!err) err = file_io::ensure_directory(skills.get(), id.c_str(), skill);
    if (!err) err = file_io::ensure_directory(skill.get(), DataLayout::kWorkspaceFolder, workspace);
    if (!err && writable) {
      lock.reset(openat(skill.get(), DataLayout::kWorkspaceLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                        file_io::kFileMode));
      if (!lock) err = errno;
    }
    if (err) return WorkspaceError{WorkspaceErrc::unavailable, 0, err};
    return std::unique_ptr<WorkspaceSession>(
        std::make_unique<LocalWorkspaceSession>(std::move(workspace), std::move(lock), stop));
  }

 private:
  const DataLayout layout_;
};

}  // namespace

std::shared_ptr<WorkspaceBackend> make_local_workspace_backend(const DataLayout& layout) {
  return std::make_shared<LocalWorkspaceBackend>(layout);
}

WorkspaceError errno_to_workspace_error(int err, bool second) {
  WorkspaceErrc code = WorkspaceErrc::io;
  switch (err) {
    case ENOENT:
      code = WorkspaceErrc::not_found;
      break;
    case ENOTDIR:
      code = WorkspaceErrc::not_a_directory;
      break;
    case ELOOP:
      code = WorkspaceErrc::symlink;
      break;
    case EXDEV:
      code = WorkspaceErrc::outside;
      break;
    case EACCES:
    case EPERM:
      code = WorkspaceErrc::denied;
      break;
    case EISDIR:
      code = WorkspaceErrc::is_directory;
      break;
    case ENOTEMPTY:
      code = WorkspaceErrc::not_empty;
      break;
    case EEXIST:
      code = WorkspaceErrc::exists;
      break;
    case ENAMETOOLONG:
      code = WorkspaceErrc::name_too_long;
      break;
    case ENOSPC:
    case EDQUOT:
      code = WorkspaceErrc::no_space;
      break;
    case EFBIG:
      code = WorkspaceErrc::too_big;
      break;
    case ECANCELED:
      code = WorkspaceErrc::stopped;
      break;
    default:
      break;
  }
  WorkspaceError e{code, 0, err};
  e.second = second;
  return e;
}

// ---- the mutation lock and usage ---------------------------------------------------------------------

WorkspaceResult<void> LocalWorkspaceSession::writable() const {
  if (!lock_) return WorkspaceError{WorkspaceErrc::denied};
  return {};
}

WorkspaceResult<void> LocalWorkspaceSession::acquire() {
  // The wait ends at kLockWaitMs or at the invocation's deadline, whichever comes first: a lock held
  // elsewhere must not keep a run past its deadline (SECURITY-CASES "Waits are bounded by the deadline").
  const auto started = std::chrono::steady_clock::now();
  const auto give_up =
      std::min(stop_.deadline() - started, std::chrono::steady_clock::duration(
                                               std::chrono::milliseconds(WorkspaceBackend::kLockWaitMs))) +
      started;
  for (int step_us = 100;; step_us = std::min(step_us * 2, 20'000)) {
    if (flock(lock_.get(), LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return errno_to_workspace_error(errno);
    const auto now = std::chrono::steady_clock::now();
    if (stop_.stop_requested()) return WorkspaceError{WorkspaceErrc::stopped_waiting};
    if (now >= give_up) return WorkspaceError{WorkspaceErrc::busy, WorkspaceBackend::kLockWaitMs};
    const auto pause_ns = std::min<int64_t>(
        int64_t{step_us} * 1000, std::chrono::duration_cast<std::chrono::nanoseconds>(give_up - now).count());
    const timespec pause{0, static_cast<long>(std::max<int64_t>(pause_ns, 1000))};
    nanosleep(&pause, nullptr);
  }
  locked_ = true;
  token_written_ = false;
  uint64_t current = 0;
  if (pread(lock_.get(), &current, sizeof current, 0) != static_cast<ssize_t>(sizeof current)) current = 0;
  if (!usage_ || current == 0 || current != token_) {
    ScanVisitor scan(stop_);
    if (int err = walk_tree(root_.get(), scan)) {
      release();
      if (err == ECANCELED) return WorkspaceError{WorkspaceErrc::stopped_counting};
      return WorkspaceError{WorkspaceErrc::scan_failed, 0, err};
    }
    usage_ = Usage{scan.bytes, scan.entries};
    token_ = current;
  }
  return {};
}

void LocalWorkspaceSession::release() {
  if (!locked_) return;
  flock(lock_.get(), LOCK_UN);
  locked_ = false;
}

WorkspaceResult<void> LocalWorkspaceSession::begin_change() {
  if (token_written_) return {};
  uint64_t next = 0;
  while (next == 0 || next == token_) next = file_io::random_u64();
  if (pwrite(lock_.get(), &next, sizeof next, 0) != static_cast<ssize_t>(sizeof next)) {
    return errno_to_workspace_error(errno);
  }
  token_ = next;
  token_written_ = true;
  return {};
}

WorkspaceResult<void> LocalWorkspaceSession::check_quota(const WorkspaceQuota& quota, uint64_t bytes,
                                                         uint64_t entries) const {
  if (bytes > usage_->bytes && bytes > quota.quota_bytes)
    return WorkspaceError{WorkspaceErrc::quota_bytes, bytes};
  if (entries > usage_->entries && entries > quota.max_files)
    return WorkspaceError{WorkspaceErrc::quota_entries, entries};
  return {};
}

// ---- resolving ---------------------------------------------------------------------------------------

WorkspaceResult<LocalWorkspaceSession::Directory> LocalWorkspaceSession::open_parent(std::string_view path,
                                                                                     bool second) {
  Directory dir;
  const size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    dir.fd = root_.get();
    return dir;
  }
  const std::string parent(path.substr(0, slash));
  const int err = open_beneath(root_.get(), parent.c_str(), O_RDONLY | O_DIRECTORY, dir.owned);
  if (err == ENOENT) {
    WorkspaceError e{WorkspaceErrc::parent_missing};
    e.second = second;
    return e;
  }
  if (err) return errno_to_workspace_error(err, second);
  dir.fd = dir.owned.get();
  return dir;
}

int LocalWorkspaceSession::lstat_at(int dir, const std::string& name, struct stat& st) {
  return fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

}  // namespace skillbox::state
