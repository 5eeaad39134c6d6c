// worker/zygote.h — the zygote: the single-threaded process that forks one worker per invocation.
//
// A WorkerRunner starts it once, lazily, by exec of `skillbox-worker --zygote 3` (never a bare fork of
// the threaded host: locks held by other threads, the host's secrets in its environment and heap, and
// every descriptor it has would all be inherited). The zygote:
//   1. keeps only stdin/out/err and the control socket (fd 3), raises its soft stack limit so the
//      engine's largest JS stack plus its native reserve fits, and runs prepare_sandbox() once
//      (fail closed: the hello message carries the reason, and the zygote exits);
//   2. answers each `spawn` message: a socketpair, fork, pidfd_open of the child right after the fork
//      (the child cannot be reaped before the zygote waits for it, so the pid cannot be reused), and
//      the supervisor's end of the socketpair plus the pidfd back in a `spawned` message (SCM_RIGHTS);
//   3. reaps every child (SIGCHLD via signalfd) and reports its wait status in an `exited` message;
//   4. at EOF on the control socket (the supervisor closed it or died) kills and reaps every child,
//      then exits.
// The child sets PR_SET_PDEATHSIG (it dies with the zygote), moves its socket to fd 3, runs
// isolation::sandbox_self() and only then reads its invocation (worker/worker_child.h).
#pragma once

#include <functional>

struct JSContext;

namespace skillbox::worker {

/// Runs the zygote on control socket `control_fd` until the supervisor goes away. Returns the exit
/// status of the zygote process. `extra_api` is handed to every worker (tests only).
int zygote_main(int control_fd, const std::function<void(JSContext*)>& extra_api);

}  // namespace skillbox::worker
