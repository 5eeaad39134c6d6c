// worker/exe/wall_test_hooks.h — test-only globals of the wall-test copy of skillbox-worker.
//
// Compiled only into `skillbox-worker-wall-test` (tests/CMakeLists.txt, SKILLBOX_WORKER_WALL_TEST),
// never into the installed worker. They let a test make a sandboxed worker do what a skill that
// escaped the engine could do: each forbidden system call, a crash, a native loop that never polls,
// and arbitrary bytes on its socket.
#pragma once

struct JSContext;

namespace skillbox::worker {

/// Adds to the global object:
///   __wall(name)     makes system call `name` (open, openat, stat, socket, connect, execve, fork, clone,
///                    ptrace, io_uring_setup, memfd_create, mmap_exec, mprotect_exec); returns its
///                    result, or -errno when it was refused (a killed worker returns nothing).
///                    Probes of the worker's own limits: getpid, rlimit_as (hard RLIMIT_AS in MiB),
///                    raise_rlimit (setrlimit of RLIMIT_AS above its hard limit), mmap_1g (maps 1 GiB
///                    without touching it: 0, or -ENOMEM from RLIMIT_AS)
///   __crash()        writes through a null pointer (SIGSEGV)
///   __spin()         loops forever in native code without polling the engine
///   __garbage(kind)  writes bytes the protocol forbids to the socket (truncated, oversized, wrong_tag,
///                    wrong_id, reply, invocation, noise, crashed_result), then waits to be killed
///   __sources(names) sends a SourcesRequest for `names` (one per line, NUL bytes kept) and returns the
///                    answer: "files:a.js, refused:b.js," or "error:<message>"
void install_wall_test_hooks(JSContext* ctx);

}  // namespace skillbox::worker
