// tests/isolation/child_process.h — run a test body in a forked child and collect what it reports.
//
// Sandboxing is irreversible, so every isolation test that applies a wall does it in a child. The
// child reports through its end of a socketpair (the one descriptor a worker keeps); the parent
// collects the bytes until EOF and reaps the child, killing it if it does not finish in time.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "isolation/sandbox.h"

namespace skillbox::isolation::testing {

/// How a child ended and what it wrote to its socket.
struct ChildOutcome {
  bool exited = false;  // exited normally (then exit_code), else killed by `signal`
  int exit_code = -1;
  int signal = 0;
  bool timed_out = false;  // the parent had to SIGKILL it
  std::string output;      // every byte the child wrote to its socket
};

/// Forks; the child runs body(its socket fd) and _exits with the returned code (it must not use
/// gtest assertions). If `while_running` is set, the parent calls it with the child's pid and the
/// parent's socket end before collecting output (for /proc inspection of a live child). The child
/// is SIGKILLed if it has not closed its socket within 10 s (slack for a loaded 2-core machine).
ChildOutcome run_in_child(const std::function<int(int socket_fd)>& body,
                          const std::function<void(pid_t pid, int parent_fd)>& while_running = {});

/// The sandbox prepared once per test process (Landlock probe + compiled filter). Aborts the test
/// binary with the fail-closed message if the kernel lacks seccomp or Landlock.
const PreparedSandbox& prepared_sandbox();

/// The rlimits a test worker gets: 64 MiB heap budget, 5 s deadline, measured baseline.
RlimitPlan test_rlimits(int socket_fd);

/// Writes all of `text` to `fd` (child side: no allocation beyond what the caller did).
void send_text(int fd, const std::string& text);

/// "SIGSYS", "SIGKILL", ... for messages.
std::string signal_name(int signal);

}  // namespace skillbox::isolation::testing
