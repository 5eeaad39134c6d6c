#include "cli/interrupt.h"

#include <pthread.h>
#include <unistd.h>

#include <ctime>

namespace skillbox::cli {
namespace {

sigset_t interrupt_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);   // the terminal went away: clean up as for Ctrl-C
  sigaddset(&set, SIGQUIT);  // Ctrl-\ : the same (no core dump of a process holding skill data)
  return set;
}

/// How often the watcher looks at its stop flag: the longest a finished run waits for it to end.
constexpr long kPollNs = 50'000'000;

}  // namespace

InterruptWatch::InterruptWatch(CancelToken token, std::string note)
    : token_(std::move(token)), note_(std::move(note)) {
  const sigset_t set = interrupt_signals();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  watcher_ = std::thread([this, set] {
    int seen = 0;
    const timespec poll{0, kPollNs};
    while (!stop_.load(std::memory_order_acquire)) {
      if (sigtimedwait(&set, nullptr, &poll) < 0) continue;  // timeout or EINTR: look at stop_
      if (++seen == 1) {
        (void)!write(STDERR_FILENO, note_.data(), note_.size());  // a thread, not a signal handler
        token_.cancel();
      } else {
        _exit(exit_code(Outcome::cancelled));
      }
    }
  });
}

InterruptWatch::~InterruptWatch() {
  stop_.store(true, std::memory_order_release);
  watcher_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace skillbox::cli
