// state/local_workspace.h — the local WorkspaceSession: one skill's workspace directory on disk.
//
// Layout (DataLayout): ROOT/skills/<id>/workspace/ (0700) opened once as `root_`, and
// ROOT/skills/<id>/workspace.lock beside it. Every path is resolved by openat2 beneath `root_`
// (beneath.h) in the same call that opens it; operations that act on a name (mkdirat, unlinkat,
// renameat) first open the parent directory that way and then act on the single final component
// relative to that parent fd, so no path is ever checked by name and used again later.
//
// Lock and usage (docs/architecture.md "The workspace lock and usage-token protocol"): mutations of
// concurrent sessions are serialised by flock(2) on workspace.lock. The first mutation of a session
// scans the workspace under the lock (counting entries and regular-file bytes, deleting leftover
// temporaries of crashed writes), then keeps the totals up to date itself. Each mutation writes a
// fresh random token into the lock file before changing anything; a session whose cached token
// differs from the file's knows another session (or a crashed one) changed the workspace and
// rescans. Private to state/local_workspace*.cpp.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "base/unique_fd.h"
#include "state/workspace_backend.h"

namespace skillbox::state {

/// The WorkspaceError of an errno from resolving or acting on a path: ENOENT not_found, ENOTDIR
/// not_a_directory, ELOOP symlink, EXDEV outside, EACCES/EPERM denied, EISDIR is_directory,
/// ENOTEMPTY not_empty, EEXIST exists, ENAMETOOLONG name_too_long, ENOSPC/EDQUOT no_space, EFBIG
/// too_big, ECANCELED stopped, anything else io.
[[nodiscard]] WorkspaceError errno_to_workspace_error(int err, bool second = false);

class LocalWorkspaceSession final : public WorkspaceSession {
 public:
  /// `root`: the workspace directory; `lock`: workspace.lock, or none for a read-only session.
  LocalWorkspaceSession(base::UniqueFd root, base::UniqueFd lock, const bus::StopToken& stop)
      : root_(std::move(root)), lock_(std::move(lock)), stop_(stop) {}

  WorkspaceResult<void> read_file(std::string_view path, const std::function<bool(uint64_t)>& admit,
                                  bus::Bytes& out) override;
  WorkspaceResult<void> write_file(std::string_view path, std::span<const uint8_t> data, bool append,
                                   const WorkspaceQuota& quota) override;
  WorkspaceResult<std::vector<bus::FsDirEntry>> list(std::string_view path) override;
  WorkspaceResult<WorkspaceStat> stat(std::string_view path) override;
  WorkspaceResult<bool> exists(std::string_view path) override;
  WorkspaceResult<void> mkdir(std::string_view path, bool recursive, const WorkspaceQuota& quota) override;
  WorkspaceResult<void> remove(std::string_view path, bool recursive) override;
  WorkspaceResult<void> rename(std::string_view from, std::string_view to) override;

 private:
  struct Usage {
    uint64_t bytes = 0;    // sum of st_size of regular files
    uint64_t entries = 0;  // files, directories and anything else, temporaries excluded
  };

  /// A directory fd that is either the workspace root (borrowed) or a subdirectory (owned).
  struct Directory {
    base::UniqueFd owned;
    int fd = -1;
  };

  /// Holds the workspace lock for one mutation; released on every path.
  class MutationLock {
   public:
    explicit MutationLock(LocalWorkspaceSession& s) : s_(s) {}
    ~MutationLock() { s_.release(); }
    MutationLock(const MutationLock&) = delete;
    MutationLock& operator=(const MutationLock&) = delete;

   private:
    LocalWorkspaceSession& s_;
  };

  /// denied for a read-only session.
  [[nodiscard]] WorkspaceResult<void> writable() const;

  /// Takes the workspace lock (waiting at most kLockWaitMs: busy; ends at the stop token:
  /// stopped_waiting) and makes `usage_` current, rescanning when the lock file's token is not ours.
  [[nodiscard]] WorkspaceResult<void> acquire();

  /// Releases the lock if held.
  void release();

  /// Publishes a new token before the first change of this mutation, so that any other session (also
  /// after we crash half-way) sees the workspace changed and recounts.
  [[nodiscard]] WorkspaceResult<void> begin_change();

  /// quota_bytes / quota_entries unless the workspace may grow to `bytes` and `entries`.
  /// Precondition: acquire() succeeded (usage_ is set).
  [[nodiscard]] WorkspaceResult<void> check_quota(const WorkspaceQuota& quota, uint64_t bytes,
                                                  uint64_t entries) const;

  /// Opens the directory holding `path`'s last component (beneath the root). Not for the root.
  [[nodiscard]] WorkspaceResult<Directory> open_parent(std::string_view path, bool second = false);

  /// lstat of `name` in `dir`. Returns 0, ENOENT, or another errno.
  static int lstat_at(int dir, const std::string& name, struct stat& st);

  base::UniqueFd root_;
  base::UniqueFd lock_;
  const bus::StopToken& stop_;

  std::optional<Usage> usage_;  // valid while `token_` equals the lock file's token
  uint64_t token_ = 0;
  bool locked_ = false;
  bool token_written_ = false;  // during the current lock: this mutation has published its token
};

}  // namespace skillbox::state
