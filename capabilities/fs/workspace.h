// capabilities/fs/workspace.h — a skill's confined workspace directory (`openhuman.fs`).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/memory_budget.h"
#include "bus/messages.h"
#include "bus/stop_token.h"
#include "skillbox/policy.h"
#include "state/workspace_backend.h"

namespace skillbox::capabilities {

/// Serves fs requests for one invocation: the policy half of openhuman.fs. Storage is the tenant's
/// state::WorkspaceBackend (state/workspace_backend.h; locally DATA/skills/<id>/workspace/, resolved
/// by openat2 beneath its directory fd). See docs/fs.md for the full contract; in short:
///
///  - Modes (FsPolicy::mode): `none` refuses everything; `read` allows readFile, readdir, stat,
///    exists; `write` allows writeFile, appendFile, mkdir, remove, rename; `readwrite` both. A refusal
///    is PermissionDenied naming `permissions.fs.mode`. The mode is checked before anything else.
///  - Paths (workspace_path.h): InvalidArgument when malformed, PermissionDenied when they would
///    leave the workspace or pass through a symlink. Messages quote the path as the skill gave it.
///  - Only regular files and directories are read, written or stat'ed; readdir lists other entries
///    with type `other`; names reserved for the host's temporaries are never listed or accepted.
///  - Quotas (FsPolicy): quota_bytes (sum of regular-file sizes), max_files (entries), max_file_bytes
///    (one file), enforced by the backend under its lock. A write that would exceed one is
///    QuotaExceeded and changes nothing.
///  - writeFile/appendFile are atomic: concurrent readers and writers see one complete content, a
///    failure leaves the old one.
///  - Mutations of concurrent invocations of the same skill are serialised by the backend's lock; one
///    waits at most 5 s (then Timeout).
///
/// Construction does no I/O: the workspace is opened by the first request, and not at all in mode
/// `none`. Not thread-safe (one invocation's requests arrive in order on one thread); distinct
/// Workspace objects, in any threads or processes, may share a workspace.
class Workspace {
 public:
  /// `stop` (must outlive the Workspace) is checked between the steps of a long mutation: a recursive
  /// remove stops before its next unlink, and a write or append stops before its rename (the
  /// temporary file is deleted, the target keeps its old content); either returns Timeout. The
  /// workspace lock wait and the quota scan also end at it, and a readdir stops listing.
  /// `memory` (may be null: nothing counted) is the invocation's memory budget: readFile reserves the
  /// file's size there before reading it (PayloadTooLarge when it does not fit), and the reply holds
  /// the reservation until it is freed.
  Workspace(std::shared_ptr<state::WorkspaceBackend> backend, std::string skill_id, FsPolicy policy,
            const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* memory = nullptr);
  /// The same on the local backend of the data directory `data_dir` (tests, the operator's view).
  Workspace(const std::filesystem::path& data_dir, std::string skill_id, FsPolicy policy,
            const bus::StopToken& stop = bus::StopToken::never(), bus::MemoryBudget* memory = nullptr);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// BytesReply with the file's bytes (`encoding` is the binding's business). InvalidArgument for a
  /// directory, PermissionDenied for anything not a regular file, PayloadTooLarge above
  /// max_file_bytes, NotFound.
  bus::Reply handle(const bus::FsReadFileRequest& r);
  /// OkReply. Replaces (or with `append` extends) the file atomically. The parent must exist
  /// (NotFound). InvalidArgument if the target is a directory. QuotaExceeded per the quotas.
  bus::Reply handle(const bus::FsWriteFileRequest& r);
  /// FsReaddirReply sorted by name (bytewise). InvalidArgument if not a directory.
  bus::Reply handle(const bus::FsReaddirRequest& r);
  /// FsStatReply; `size` is 0 for directories, `mtime_ms` from the file's mtime.
  bus::Reply handle(const bus::FsStatRequest& r);
  /// BoolReply: false when the path does not exist; PermissionDenied (not false) for a symlink or a
  /// path that leaves the workspace.
  bus::Reply handle(const bus::FsExistsRequest& r);
  /// OkReply. AlreadyExists if present (unless `recursive` and a directory); NotFound if the parent
  /// is missing and not `recursive`. Each created directory counts against max_files.
  bus::Reply handle(const bus::FsMkdirRequest& r);
  /// OkReply. NotEmpty for a non-empty directory without `recursive`. The root cannot be removed
  /// (InvalidArgument). A recursive remove deletes symlinks inside without following them.
  bus::Reply handle(const bus::FsRemoveRequest& r);
  /// OkReply. Both paths are checked. Replacing a directory with a file or a file with a directory is
  /// InvalidArgument; replacing a non-empty directory is NotEmpty; moving a directory into itself is
  /// InvalidArgument.
  bus::Reply handle(const bus::FsRenameRequest& r);

 private:
  struct Impl;  // workspace.cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
