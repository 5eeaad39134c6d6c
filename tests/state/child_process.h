// tests/state/child_process.h — what the store's process tests share: a forked child that never returns
// into the test framework, and store options patient enough for a small shared CI machine.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>

#include "skillbox/store.h"

namespace skillbox::testing {

/// Generous: the CI machine is small and shared; a wait this long only happens when something is wrong.
inline StoreOpenOptions patient() {
  StoreOpenOptions o;
  o.busy_timeout = std::chrono::milliseconds(60'000);
  return o;
}

/// A child process running `body`; it never returns into the test framework: it exits with body's
/// result (99 if body threw). A child still running when the Child object dies (after a failed
/// assertion) is killed and reaped, so no test leaves processes behind. Fork before starting threads:
/// a child forked while another thread holds a lock (malloc's) can hang on it.
class Child {
 public:
  explicit Child(const std::function<int()>& body) : pid_(::fork()) {
    if (pid_ == 0) {
      int rc = 99;
      try {
        rc = body();
      } catch (...) {
      }
      ::_exit(rc);
    }
  }
  ~Child() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      (void)wait();
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept : pid_(other.pid_), reaped_(other.reaped_) { other.pid_ = -1; }
  Child& operator=(Child&&) = delete;

  [[nodiscard]] bool started() const { return pid_ > 0; }
  void kill() const { ::kill(pid_, SIGKILL); }
  /// Waits for the child: its exit status, or 1000 + the signal number when a signal ended it.
  int wait() {
    int status = 0;
    if (::waitpid(pid_, &status, 0) != pid_) return -1;
    reaped_ = true;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 1000 + WTERMSIG(status);
    return -2;
  }

 private:
  pid_t pid_;
  bool reaped_ = false;
};

}  // namespace skillbox::testing
