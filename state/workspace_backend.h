// state/workspace_backend.h — the storage behind a skill's workspace (openhuman.fs, docs/fs.md).
//
// The fs capability (capabilities/fs/workspace.h) enforces policy: the mode first, path syntax
// (capabilities/fs/workspace_path.h), the memory budget, quotas' values and every message a skill
// reads. A WorkspaceBackend does storage: files and directories of one skill, mutations made atomic
// and serialised between invocations, and the usage its quotas are measured against. Errors are typed
// (WorkspaceError): the capability words them.
//
// Paths. Every operation takes a workspace path: relative, normalized, '/'-separated components, "."
// for the workspace itself (is_workspace_path). A backend refuses anything else with invalid_path,
// whatever the capability checked before: it never interprets "..", an absolute path, an empty
// component or a reserved name (kWorkspaceReservedPrefix, the backend's own temporaries).
//
// Local implementation (make_local_workspace_backend): DataLayout::workspace_dir(id) on disk, every
// path resolved by openat2 beneath the workspace's directory fd (state/beneath.h); the lock is
// flock(2) on DataLayout's workspace.lock. docs/architecture.md "The workspace lock and usage-token
// protocol" describes it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/result.h"
#include "state/data_layout.h"

namespace skillbox::state {

/// Names starting with this belong to the backend (temporaries of atomic writes): never listed, never
/// accepted in a path.
inline constexpr std::string_view kWorkspaceReservedPrefix = ".skillbox-";

/// Longest component of a workspace path, in bytes (Linux NAME_MAX).
inline constexpr size_t kMaxWorkspaceNameBytes = 255;

/// True if `path` is "." or one or more components joined by single '/': none empty, ".", "..",
/// longer than kMaxWorkspaceNameBytes, containing NUL or starting with kWorkspaceReservedPrefix; no
/// leading or trailing '/'. (UTF-8 and the total length are the capability's rules, not storage's.)
[[nodiscard]] bool is_workspace_path(std::string_view path);

/// Why a workspace operation failed. The capability maps each to an error code and a message.
enum class WorkspaceErrc : uint8_t {
  invalid_path,         // not a workspace path (is_workspace_path), or the root where it has no meaning
  invalid_skill_id,     // the skill id is not a valid folder name (base/skill_id.h)
  unavailable,          // the workspace could not be opened (sys: the errno)
  not_found,            // the path does not exist
  parent_missing,       // the parent of the path does not exist
  not_a_directory,      // a component of the path (not the last) is not a directory
  not_directory,        // the path exists but is not a directory (readdir, recursive mkdir)
  is_directory,         // the path is a directory where a file was expected
  not_regular,          // neither a regular file nor a directory
  symlink,              // the path goes through a symbolic link (refused, never followed)
  outside,              // resolution would leave the workspace
  denied,               // the storage denied access
  exists,               // the path already exists
  not_empty,            // a directory that is not empty
  name_too_long,        // the storage refused the name's length
  file_over_directory,  // rename: a file cannot replace a directory
  directory_over_file,  // rename: a directory cannot replace a non-directory
  into_itself,          // rename: a directory cannot move into itself
  quota_bytes,          // value: the bytes the workspace would hold (WorkspaceQuota::quota_bytes)
  quota_entries,        // value: the entries the workspace would hold (WorkspaceQuota::max_files)
  file_too_large,       // value: the bytes the file would hold (WorkspaceQuota::max_file_bytes)
  refused,              // read_file: the caller's admit() said no
  busy,                 // another invocation held the lock for more than `value` milliseconds
  stopped_waiting,      // the stop token was requested while waiting for the lock; nothing changed
  stopped_counting,     // the stop token was requested while counting usage; nothing changed
  stopped,              // the stop token was requested; nothing was changed (or read, or listed)
  stopped_partway,      // remove: stopped part-way; what is left is a valid, partly removed tree
  stopped_emptied,      // remove: stopped after emptying the directory, before removing it
  scan_failed,          // usage could not be counted (sys: the errno)
  no_space,             // the storage is full (ENOSPC, EDQUOT)
  too_big,              // the storage refused the file's size (EFBIG)
  io,                   // anything else (sys: the errno when there is one, else `detail`)
};

struct WorkspaceError {
  WorkspaceError() = default;
  explicit WorkspaceError(WorkspaceErrc c, uint64_t v = 0, int s = 0) : code(c), value(v), sys(s) {}

  WorkspaceErrc code = WorkspaceErrc::io;
  uint64_t value = 0;   // see the codes above
  int sys = 0;          // errno of a file-system backend, 0 otherwise
  bool second = false;  // rename: the error concerns `to`, not `from`
  std::string detail;   // io of a backend without errno values: what failed
};

template <typename T>
using WorkspaceResult = Result<T, WorkspaceError>;

/// The limits of one mutation, from permissions.fs. A change that would grow a total above its limit
/// fails with quota_bytes / quota_entries / file_too_large and changes nothing; a change that does not
/// grow a total is allowed even above a limit (a lowered quota must not block cleaning up).
struct WorkspaceQuota {
  uint64_t quota_bytes = 0;     // sum of the sizes of regular files
  uint64_t max_files = 0;       // entries: files, directories and anything else
  uint64_t max_file_bytes = 0;  // one file
};

struct WorkspaceStat {
  bus::FsEntryType type = bus::FsEntryType::file;  // never `other`: stat refuses those (not_regular)
  uint64_t size = 0;                               // bytes of a file; 0 for a directory
  double mtime_ms = 0;                             // last modification, ms since the epoch
};

/// One invocation's view of one skill's workspace. Not thread-safe: an invocation's requests arrive in
/// order on one thread. Sessions of the same workspace, in any threads or processes, may run at once:
/// each mutation holds the workspace lock, so mutations and their quota checks are serialised, and
/// readers see every file whole (old or new content, never a mixture, never a temporary).
class WorkspaceSession {
 public:
  virtual ~WorkspaceSession() = default;

  /// The bytes of the regular file `path`. `admit(size)` is called once with the file's size before
  /// anything is read or allocated; false refuses the read (refused). Errors: is_directory,
  /// not_regular, symlink, not_found, stopped (nothing was read).
  [[nodiscard]] virtual WorkspaceResult<void> read_file(std::string_view path,
                                                        const std::function<bool(uint64_t)>& admit,
                                                        bus::Bytes& out) = 0;

  /// Replaces (or with `append` extends) the file `path` atomically: on any failure or a crash the
  /// file has its old content, after success the new one, durably. The parent must exist
  /// (parent_missing). Errors: is_directory, not_regular, symlink, the quotas, no_space, too_big,
  /// stopped (the file was not changed).
  [[nodiscard]] virtual WorkspaceResult<void> write_file(std::string_view path, std::span<const uint8_t> data,
                                                         bool append, const WorkspaceQuota& quota) = 0;

  /// The entries of the directory `path` sorted by name (bytewise), the backend's reserved names
  /// left out. Errors: not_directory, not_found, symlink, stopped (nothing was listed).
  [[nodiscard]] virtual WorkspaceResult<std::vector<bus::FsDirEntry>> list(std::string_view path) = 0;

  /// What `path` is. Errors: not_regular (neither file nor directory), symlink, not_found.
  [[nodiscard]] virtual WorkspaceResult<WorkspaceStat> stat(std::string_view path) = 0;

  /// Whether `path` exists (false also when a component is not a directory). A symlink or a path that
  /// leaves the workspace is an error (symlink, outside), not false.
  [[nodiscard]] virtual WorkspaceResult<bool> exists(std::string_view path) = 0;

  /// Creates the directory `path`; with `recursive` also its missing parents, and an existing
  /// directory is success. Each created directory counts as an entry. Errors: exists, parent_missing,
  /// not_directory (recursive: the path is something else), not_a_directory, quota_entries.
  [[nodiscard]] virtual WorkspaceResult<void> mkdir(std::string_view path, bool recursive,
                                                    const WorkspaceQuota& quota) = 0;

  /// Removes `path`; with `recursive` a directory and everything in it (symlinks inside are removed,
  /// never followed), checking the stop token before each step. Not the root (invalid_path). Errors:
  /// not_empty, not_found, symlink, stopped_partway, stopped_emptied.
  [[nodiscard]] virtual WorkspaceResult<void> remove(std::string_view path, bool recursive) = 0;

  /// Renames `from` to `to` atomically, replacing a file or an empty directory of the same kind. The
  /// same file under both names is success. Neither may be the root (invalid_path). Errors (`second`
  /// set when about `to`): not_found, symlink, file_over_directory, directory_over_file, not_empty,
  /// into_itself, parent_missing.
  [[nodiscard]] virtual WorkspaceResult<void> rename(std::string_view from, std::string_view to) = 0;
};

/// The workspaces of one tenant. Thread-safe.
class WorkspaceBackend {
 public:
  virtual ~WorkspaceBackend() = default;

  /// Opens the workspace of `skill_id`, creating it (empty) when missing. `writable`: the session may
  /// mutate (the lock is prepared); a read-only session's mutations fail with denied. `stop` (must
  /// outlive the session) ends the lock wait, the usage count, a listing, a long read or write and a
  /// recursive remove. The lock wait also ends after kLockWaitMs (busy). Errors: invalid_skill_id,
  /// unavailable.
  [[nodiscard]] virtual WorkspaceResult<std::unique_ptr<WorkspaceSession>> open(
      std::string_view skill_id, bool writable, const bus::StopToken& stop) = 0;

  /// How long a mutation waits for another invocation of the same skill to finish its own (a write
  /// of a maximal file with fsync takes well under this).
  static constexpr int kLockWaitMs = 5000;
};

/// The local backend: workspaces under `layout` (DataLayout::workspace_dir), created 0700 with their
/// parents on first use; files 0600.
[[nodiscard]] std::shared_ptr<WorkspaceBackend> make_local_workspace_backend(const DataLayout& layout);

}  // namespace skillbox::state
