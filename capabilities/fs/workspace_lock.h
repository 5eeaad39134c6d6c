// capabilities/fs/workspace_lock.h — the state of one Workspace and its lock/usage-token protocol.
//
// Mutations of concurrent invocations of the same skill are serialised by flock(2) on
// DATA/skills/<id>/workspace.lock. Quota accounting (docs/fs.md "Quotas"): the first mutation of an
// invocation scans the workspace under the lock (counting entries and regular-file bytes, deleting
// leftover temporaries of crashed writes), then keeps the totals up to date itself. Each mutation
// writes a fresh random token into the lock file before changing anything; an invocation whose
// cached token differs from the file's knows another invocation (or a crashed one) changed the
// workspace and rescans. Private to capabilities/fs/workspace*.cpp.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "base/unique_fd.h"
#include "bus/messages.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/fs/workspace_io.h"
#include "capabilities/fs/workspace_path.h"
#include "skillbox/result.h"

namespace skillbox::capabilities {

/// What an operation needs from permissions.fs.mode.
enum class Access : uint8_t { read, write };

/// A directory fd that is either the workspace root (borrowed) or a subdirectory (owned).
struct Directory {
  base::UniqueFd owned;
  int fd = -1;
};

struct Workspace::Impl {
  /// How long a mutation waits for another invocation of the same skill to finish its own (a write
  /// of a maximal file with fsync takes well under this). Beyond it the call fails (Timeout) instead
  /// of hanging.
  static constexpr int kLockWaitMs = 5000;

  struct Usage {
    uint64_t bytes = 0;    // sum of st_size of regular files
    uint64_t entries = 0;  // files, directories and anything else, temporaries excluded
  };

  std::filesystem::path data_dir;
  std::string skill_id;
  FsPolicy policy;
  const bus::StopToken* stop = &bus::StopToken::never();  // the invocation's (Workspace's constructor)
  bus::MemoryBudget* memory = nullptr;                    // the invocation's; null: nothing counted

  base::UniqueFd root;                      // the workspace directory, opened once
  base::UniqueFd lock;                      // workspace.lock, when the mode permits writing
  std::optional<std::string> open_failure;  // why opening failed (sticky for the invocation)

  std::optional<Usage> usage;  // valid while `token` equals the lock file's token
  uint64_t token = 0;
  bool locked = false;
  bool token_written = false;  // during the current lock: this mutation has published its token

  // ---- permissions and setup ---------------------------------------------------------------------

  /// PermissionDenied naming permissions.fs.mode unless the mode grants `access`.
  [[nodiscard]] Result<void, bus::ErrorReply> allow(Access access, const workspace_io::Call& call) const;

  /// Opens the workspace (and the lock file when the mode permits writing) on first use; IoError
  /// when that fails, then and for every later call of this invocation.
  [[nodiscard]] Result<void, bus::ErrorReply> open(const workspace_io::Call& call);

  // ---- the mutation lock and usage ---------------------------------------------------------------

  /// Takes the workspace lock (waiting at most kLockWaitMs: Timeout) and makes `usage` current,
  /// rescanning when the lock file's token is not ours.
  [[nodiscard]] Result<void, bus::ErrorReply> acquire(const workspace_io::Call& call);

  /// Releases the lock if held.
  void release();

  /// Publishes a new token before the first change of this mutation, so that any other invocation
  /// (also after we crash half-way) sees the workspace changed and recounts.
  [[nodiscard]] Result<void, bus::ErrorReply> begin_change(const workspace_io::Call& call);

  /// QuotaExceeded unless the workspace may grow to `bytes` and `entries`. A change that does not
  /// grow a total is allowed even above a quota (a lowered quota must not block cleaning up).
  /// Precondition: acquire() succeeded (usage is set).
  [[nodiscard]] Result<void, bus::ErrorReply> check_quota(const workspace_io::Call& call, uint64_t bytes,
                                                          uint64_t entries) const;

  /// QuotaExceeded naming permissions.fs.max_file_bytes for a file that would be `size` bytes.
  [[nodiscard]] bus::ErrorReply file_too_large(const workspace_io::Call& call, uint64_t size) const;

  // ---- resolving ---------------------------------------------------------------------------------

  /// Opens the directory holding `path`'s last component (beneath the root). Not for the root.
  [[nodiscard]] Result<Directory, bus::ErrorReply> open_parent(const WorkspacePath& path,
                                                               const workspace_io::Call& call);

  /// lstat of `name` in `dir`. Returns 0, ENOENT, or another errno.
  static int lstat_at(int dir, const std::string& name, struct stat& st);

  /// The error of every access through a symbolic link.
  static bus::ErrorReply symlink_refused(const workspace_io::Call& call);

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

 private:
  // Returns "" on success, else what went wrong (without host paths).
  std::string try_open();
};

}  // namespace skillbox::capabilities
