// isolation/fd_hygiene.h — a worker holds no descriptor but its socket.
//
// A forked child inherits every descriptor of its zygote that lacks O_CLOEXEC-at-fork semantics
// (there is no such flag: fork copies them all). Any one of them — a log file, a listening socket, a
// workspace directory fd, the other end of another worker's socket — would let a compromised worker
// reach past its walls, since Landlock and seccomp check opens, not descriptors already held.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <span>
#include <vector>

#include "isolation/status.h"

namespace skillbox::isolation {

/// Most descriptors close_fds_except keeps. A worker keeps one (its socket); the bound lets the
/// child sort the set on its stack instead of allocating.
inline constexpr std::size_t kMaxKeptFds = 8;

/// Closes every open descriptor of the calling process except those in `keep` (any order,
/// duplicates allowed). Uses close_range(2) (Linux 5.9+); where the kernel answers ENOSYS it falls
/// back to close_fds_except_by_listing (also where an outer seccomp profile answers EPERM). Never allocates,
/// so it is safe in a child forked from a threaded process. Run it before Landlock: the fallback reads
/// /proc/self/fd, which a Landlock domain without rights cannot open. Errors (step close_fds): more than
/// kMaxKeptFds or a negative fd in `keep` (EINVAL); close_range failing otherwise; the fallback's errors.
Status close_fds_except(std::span<const int> keep);

/// The fallback of close_fds_except, exposed for tests: lists /proc/self/fd with getdents64 into a
/// stack buffer and closes each entry not in `keep`. Fails (step close_fds) when /proc/self/fd cannot
/// be opened — /proc not mounted, or already inside Landlock — rather than guessing a range.
Status close_fds_except_by_listing(std::span<const int> keep);

/// The open descriptors of process `pid` (0 = the caller), ascending, read from /proc/PID/fd; for
/// the caller, the descriptor used to read the directory is left out. For tests and diagnostics:
/// allocates, and needs /proc (so not inside a sandboxed worker). Error (step close_fds) when the
/// directory cannot be read.
Result<std::vector<int>> list_open_fds(pid_t pid = 0);

}  // namespace skillbox::isolation
