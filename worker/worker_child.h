// worker/worker_child.h — the life of one sandboxed worker process after sandbox_self().
//
// The worker reads its one invocation frame from its socket, runs the engine with a bus::Endpoint
// that turns every host call into a request frame (and waits for the reply of a synchronous one),
// sends the result frame and exits. It is single-threaded: replies of asynchronous requests (http)
// are read from the socket by the engine's ReplyInbox pump while the event loop waits.
#pragma once

#include <functional>

#include "isolation/rlimits.h"

struct JSContext;

namespace skillbox::worker {

/// Runs the invocation that arrives on `socket_fd` (blocking). Once the invocation frame is read, and
/// before anything of it runs, lowers RLIMIT_AS/DATA/CPU to the invocation's limits (planned on top of
/// `baseline`, the zygote's footprint when it forked this process): the worker may have been forked
/// for any invocation, with the host's ceilings. Returns the process exit status: 0 after the result
/// frame was sent, kWorkerExitBadFrame when the supervisor's frames are unusable or the socket closed,
/// kWorkerExitOutOfMemory when a native allocation failed, isolation::kSandboxExitBase + Step::rlimits
/// when the limits could not be lowered. `extra_api`, when set, adds test-only globals (the wall-test
/// worker; never in the installed one).
int run_worker_child(int socket_fd, const isolation::MemoryBaseline& baseline,
                     const std::function<void(JSContext*)>& extra_api);

}  // namespace skillbox::worker
