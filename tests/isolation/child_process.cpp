#include "isolation/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace skillbox::isolation::testing {

ChildOutcome run_in_child(const std::function<int(int)>& body,
                          const std::function<void(pid_t, int)>& while_running) {
  ChildOutcome outcome;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    outcome.output = "socketpair failed";
    return outcome;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    outcome.output = "fork failed";
    return outcome;
  }
  if (pid == 0) {
    close(fds[0]);
    _exit(body(fds[1]));
  }
  close(fds[1]);
  if (while_running) while_running(pid, fds[0]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  char buffer[4096];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      outcome.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    outcome.output.append(buffer, static_cast<size_t>(got));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    outcome.exited = true;
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

const PreparedSandbox& prepared_sandbox() {
  static const PreparedSandbox prepared = [] {
    Result<PreparedSandbox> result = prepare_sandbox();
    if (!result) {
      // About to abort: if stderr cannot take the reason, there is no better place to report it.
      (void)std::fprintf(stderr, "%s\n", describe(result.error()).c_str());
      std::abort();
    }
    return std::move(result.value());
  }();
  return prepared;
}

RlimitPlan test_rlimits(int socket_fd) {
  Result<MemoryBaseline> baseline = measure_memory_baseline();
  const MemoryBaseline measured = baseline ? baseline.value() : MemoryBaseline{};
  return plan_worker_rlimits(WorkerLimits{64ull * 1024 * 1024, 5000}, measured, socket_fd);
}

void send_text(int fd, const std::string& text) {
  size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = write(fd, text.data() + sent, text.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

}  // namespace skillbox::isolation::testing
