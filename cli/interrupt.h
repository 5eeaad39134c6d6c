// cli/interrupt.h — Ctrl-C, SIGTERM, SIGHUP and SIGQUIT during a run cancel it (outcome `cancelled`, exit
// 130), so the report and the log lines still come out; a second Ctrl-C ends the process at once.
#pragma once

#include <atomic>
#include <csignal>
#include <string>
#include <thread>

#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// While it lives, SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked in the calling thread and in every thread
/// started after it (the runner's threads inherit the mask), and one watcher thread takes them with
/// sigtimedwait: the first writes `note` to stderr and cancels `token`, the second exits with 130
/// without waiting. Construct it before the runner, so no runner thread can receive the signal.
/// Destruction restores the mask.
class InterruptWatch {
 public:
  InterruptWatch(CancelToken token, std::string note);
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

 private:
  CancelToken token_;
  std::string note_;
  sigset_t old_mask_{};
  std::atomic<bool> stop_{false};
  std::thread watcher_;
};

}  // namespace skillbox::cli
