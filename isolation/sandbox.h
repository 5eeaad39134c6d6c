// isolation/sandbox.h — the ordered sequence that turns a freshly forked child into a worker.
//
// prepare_sandbox() runs once in the zygote: it checks that the kernel has what process isolation
// needs (fail closed otherwise) and compiles the seccomp filter. sandbox_self() runs in each child
// right after fork, before it reads any invocation input, and performs, in this order:
//
//   1. close_fds     every descriptor but the socket. First, so nothing inherited survives a later
//                    failure, and before Landlock (the fallback lists /proc/self/fd) and before the
//                    RLIMIT_NOFILE that is sized from the kept descriptor.
//   2. new_session   setsid(): out of the supervisor's session and process group, so no controlling
//                    terminal (no TIOCSTI / terminal signals) and no group-wide signal reaches it.
//   2b. drop_privileges  no capability survives: a child of a root caller empties its bounding set,
//                    drops its groups and takes uid/gid 65534 (the kernel then clears its capability
//                    sets); any other child clears its sets with capset. Before the rlimits (a uid
//                    change under RLIMIT_NPROC 0) and before seccomp, which denies these calls.
//   3. rlimits       memory, CPU, open files, file size 0, processes 0, core 0. After the privilege
//                    drop: without CAP_SYS_RESOURCE they can only go down from here (a pooled worker
//                    lowers memory and CPU once more to its invocation's, lower_invocation_rlimits).
//   4. no_new_privs  PR_SET_NO_NEW_PRIVS: required by Landlock and by an unprivileged seccomp filter;
//                    no exec could gain privileges (setuid) even if exec were allowed. Also clears
//                    READ_IMPLIES_EXEC from the personality, which would make PROT_READ executable.
//   5. landlock      a domain with every known right handled and none granted. Before seccomp, which
//                    denies the landlock_* calls.
//   6. seccomp       last: it denies every call the steps above use (close_range, setsid, prctl,
//                    landlock_*) but prlimit64 on the process itself, and is the one step after which nothing
//                    can be undone.
//
// The child path never allocates, so it is also safe after fork from a multi-threaded process.
#pragma once

#include "isolation/rlimits.h"
#include "isolation/seccomp.h"
#include "isolation/status.h"

namespace skillbox::isolation {

/// What the zygote computes once and every child reuses.
struct PreparedSandbox {
  int landlock_abi = 0;  // from probe_landlock_abi, >= 1
  SeccompProgram seccomp;
};

/// Probes Landlock and seccomp and compiles worker_syscall_policy(). Error with missing_feature set
/// when the kernel lacks either (the caller fails closed: describe() names what is missing and
/// `--isolation=inprocess`); other errors are internal. Allocates: zygote only.
Result<PreparedSandbox> prepare_sandbox();

/// Runs steps 1–6 (and 2b) above on the calling process, keeping only `socket_fd` open and applying `rlimits`
/// (plan_worker_rlimits with highest_kept_fd = socket_fd). `diagnostics_fd`, when not -1 and below
/// `socket_fd`, is kept too: the sanitizer builds keep stderr there, so that a sanitizer's report
/// from inside a worker reaches the test that ran it instead of a closed descriptor; release
/// builds keep nothing. Precondition: single-threaded (a freshly
/// forked child is). Returns the Error of the first step that failed; the process is then partly
/// sandboxed and must exit without running skill code. Never allocates.
Status sandbox_self(const PreparedSandbox& prepared, int socket_fd, const RlimitPlan& rlimits,
                    int diagnostics_fd = -1);

/// Exit status base a failed child may use: kSandboxExitBase + static_cast<int>(step).
inline constexpr int kSandboxExitBase = 80;

}  // namespace skillbox::isolation
