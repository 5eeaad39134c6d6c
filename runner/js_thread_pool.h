// runner/js_thread_pool.h — OS threads with a known, large stack that run skill code.
//
// QuickJS checks its stack limit (Limits::stack_bytes) only at calls and in its parsers, so the real
// stack of a thread running skill code must be that limit plus room for native frames in between
// (engine::kNativeStackReserve). Threads are reused across invocations (a JS runtime never is): a warm
// thread saves the thread start-up on every call. A thread that finished a task polls for the next one
// for kSpin before it sleeps, so back-to-back calls skip the wake-up. Idle threads beyond `max_idle`
// exit at once, the others after kIdleTimeout.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace skillbox::runner {

class JsThreadPool {
 public:
  /// Stack of every pool thread: the largest JS stack limit plus the native reserve (8 MiB).
  static const size_t kStackBytes;
  static constexpr std::chrono::seconds kIdleTimeout{30};
  /// How long a thread that finished a task polls for the next one before it sleeps.
  static constexpr std::chrono::microseconds kSpin{100};

  explicit JsThreadPool(size_t max_idle);
  /// Lets idle threads exit and waits for them. Threads still running a task (an invocation abandoned
  /// at its deadline) finish it on their own and then exit.
  ~JsThreadPool();
  JsThreadPool(const JsThreadPool&) = delete;
  JsThreadPool& operator=(const JsThreadPool&) = delete;

  /// Runs `task` on an idle pool thread, or on a new one. False if no thread could be started.
  bool submit(std::function<void()> task);

  /// Runs `task` on a new thread of kStackBytes and waits for it (no pool; used by benchmarks).
  static bool run_on_fresh_thread(const std::function<void()>& task);

  /// Runs `task` on the calling thread when it is one of kStackBytes started here (a pool thread, or
  /// run_on_fresh_thread's), else on a fresh one, and waits for it: for host code that parses skill
  /// code (runner/skill_reader.h) wherever it is called from. False if no thread could be started.
  static bool run_with_js_stack(const std::function<void()>& task);

  struct State;  // shared with the pool threads (js_thread_pool.cpp)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace skillbox::runner
