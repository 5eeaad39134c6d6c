// tests/state/child_process.h — what the state layer's process tests share: a forked child that never
// returns into the test framework (and one that says when it got somewhere), a file-size limit that
// plays a full disk, and store options patient enough for a small shared CI machine.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdint>
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

/// A Child that tells its parent when it got somewhere (an acknowledged write, a lease taken): `body`
/// calls its argument once then. The parent's wait_ready() returns true when it did, false when the
/// child ended without calling it.
class ReadyChild {
 public:
  explicit ReadyChild(const std::function<int(const std::function<void()>& ready)>& body)
      : pipe_(open_pipe()), child_([&] {
          ::close(pipe_[0]);
          return body([this] {
            const char ready = 1;
            (void)!::write(pipe_[1], &ready, 1);
          });
        }) {
    ::close(pipe_[1]);
  }
  ~ReadyChild() { ::close(pipe_[0]); }
  ReadyChild(const ReadyChild&) = delete;
  ReadyChild& operator=(const ReadyChild&) = delete;

  [[nodiscard]] bool started() const { return child_.started(); }
  [[nodiscard]] bool wait_ready() const {
    char got = 0;
    return ::read(pipe_[0], &got, 1) == 1;
  }
  void kill() const { child_.kill(); }
  /// As Child::wait.
  int wait() { return child_.wait(); }

 private:
  static std::array<int, 2> open_pipe() {
    std::array<int, 2> fds{-1, -1};
    if (::pipe(fds.data()) != 0) fds = {-1, -1};
    return fds;
  }
  std::array<int, 2> pipe_;
  Child child_;
};

/// In a child: files cannot grow past `bytes` any more; a write that would is refused with EFBIG
/// (SIGXFSZ ignored), as a full disk refuses one with ENOSPC. False when the limit could not be set.
inline bool limit_file_size(uint64_t bytes) {
  ::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{bytes, bytes};
  return ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
}

}  // namespace skillbox::testing
