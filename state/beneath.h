// state/beneath.h — system calls that stay beneath a directory file descriptor.
//
// Every function here resolves names relative to a directory fd and never follows a symbolic link,
// never crosses a mount point and never climbs above that fd. They return 0 or an errno value (no
// exceptions, no global state) so callers can map each failure to the error a skill should see.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace skillbox::state {

/// openat2(2) `resolve` flags used for every skill path:
///  - RESOLVE_BENEATH: `..` and absolute paths cannot leave `dirfd` (EXDEV);
///  - RESOLVE_NO_SYMLINKS: any symlink on the way, the last component included, is ELOOP, so a
///    symlink planted in the workspace (`l1 -> /etc`) is refused rather than followed, and a
///    symlink swapped in between a check and an open cannot redirect it (there is no later open);
///  - RESOLVE_NO_MAGICLINKS: /proc-style links are refused too (implied, stated for clarity);
///  - RESOLVE_NO_XDEV: a mount point inside the workspace is not crossed.
inline constexpr unsigned long long kResolveBeneath = 0x08 | 0x04 | 0x02 | 0x01;

/// Opens `path` relative to `dirfd` with openat2(`flags` | O_CLOEXEC, kResolveBeneath),
/// retrying the EAGAIN the kernel returns when a concurrent rename races with `..` resolution.
/// Returns 0 and sets `out`, or an errno value (ENOSYS on kernels older than 5.6: fail closed).
int open_beneath(int dirfd, const char* path, int flags, base::UniqueFd& out);

/// One directory entry as getdents64(2) reports it.
struct DirectoryEntry {
  std::string name;
  unsigned char type = 0;  // DT_* (DT_UNKNOWN on file systems that do not report types)
};

/// Reads every entry of the directory open as `fd` (from its start) except `.` and `..`.
int list_directory(int fd, std::vector<DirectoryEntry>& out);

/// Callbacks of walk_tree. Returning non-zero (an errno value) stops the walk with that value.
class TreeVisitor {
 public:
  virtual ~TreeVisitor() = default;
  /// Every entry below the start directory, parents before their contents. `dir` is the directory
  /// holding `name`, `st` its lstat. Set `descend` to visit a directory's contents.
  virtual int entry(int dir, const std::string& name, const struct stat& st, bool& descend) = 0;
  /// After the contents of a directory entered through `descend` were visited; `dir` holds `name`.
  virtual int leave(int dir, const std::string& name, const struct stat& st) = 0;
};

/// Walks the tree below `start` depth first without following symlinks, at any depth, holding at
/// most two descriptors at a time: a skill can nest directories deeper than the process has
/// descriptors (rename builds depth without a path limit), so levels are not kept open. Climbing back
/// opens `..` of the current directory and checks it is the same (st_dev, st_ino) as the directory
/// descended from; a mismatch (something moved the tree meanwhile) stops the walk with ESTALE.
int walk_tree(int start, TreeVisitor& visitor);

}  // namespace skillbox::state
