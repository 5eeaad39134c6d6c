// isolation/landlock.h — a Landlock domain that grants the worker no file-system rights.
//
// Landlock (landlock(7), Linux 5.13+) lets an unprivileged process drop access rights for itself and
// every process it could later create. The worker handles every right the kernel's ABI knows and
// adds no rule, so each open, create, rename, truncate, ... of any path is refused with EACCES, even
// through a descriptor or syscall that seccomp would let through by mistake. It is the second lock on
// the same door as seccomp's open/openat rules, and the only one on file-existence probes that are
// not opens (Landlock does not cover stat; seccomp refuses those).
//
// ABI versions and what each adds (handled here when the running kernel has them):
//   1 (5.13)  fs: execute, read/write file, read dir, remove, make char/dir/reg/sock/fifo/block/sym
//   2 (5.19)  fs: refer (link/rename across directories)
//   3 (6.2)   fs: truncate
//   4 (6.7)   net: bind_tcp, connect_tcp
//   5 (6.10)  fs: ioctl_dev (ioctls on device files)
//   6 (6.12)  scoped: abstract unix sockets, signals (to processes outside the domain)
//   7 (6.15)  audit logging flags only; no new right
// A kernel newer than kNewestKnownLandlockAbi may know rights this code does not: those stay
// allowed by Landlock (seccomp still stands in front of them) until the table below grows.
#pragma once

#include <cstdint>

#include "isolation/status.h"

namespace skillbox::isolation {

/// The newest Landlock ABI whose rights this file knows.
inline constexpr int kNewestKnownLandlockAbi = 7;

/// The access rights a ruleset handles, per kind (landlock_ruleset_attr's three fields).
struct LandlockRights {
  uint64_t fs = 0;      // handled_access_fs
  uint64_t net = 0;     // handled_access_net (ABI 4+)
  uint64_t scoped = 0;  // scoped (ABI 6+)
};

/// The Landlock ABI version of the running kernel (landlock_create_ruleset with
/// LANDLOCK_CREATE_RULESET_VERSION), >= 1. Error (step landlock, missing_feature) when the kernel was
/// built without Landlock (ENOSYS) or boots with it disabled (EOPNOTSUPP: not in `lsm=`). Cheap and
/// allocation-free; the zygote probes once.
Result<int> probe_landlock_abi();

/// Every right Landlock ABI `abi` knows (rights of ABIs above kNewestKnownLandlockAbi are unknown
/// here, so `abi` is clamped to it). All zero for abi < 1. Pure function.
[[nodiscard]] LandlockRights landlock_rights_for_abi(int abi);

/// Restricts the calling thread (and its future children) to a Landlock domain that handles
/// landlock_rights_for_abi(abi) and grants none of them: no path can be opened afterwards. `abi` must
/// come from probe_landlock_abi. Requires PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN). Applies to the
/// calling thread only: call it single-threaded. Needs one free descriptor slot for the ruleset fd,
/// closed before returning. Never allocates. Errors (step landlock) name the failing call.
Status landlock_restrict_self_no_rights(int abi);

}  // namespace skillbox::isolation
