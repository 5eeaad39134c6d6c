// base/mutex.h — a mutex whose "held by this thread" contract is checked rather than commented.
//
// SQLite asserts sqlite3_mutex_held() at the top of every function that needs its lock; this is the same
// for skillbox's supervisor code, in two ways:
//   - clang's thread-safety analysis (-Wthread-safety, on in clang builds: the `asan` preset): members
//     marked SKILLBOX_GUARDED_BY(mu) and functions marked SKILLBOX_REQUIRES(mu) fail to compile when
//     reached without the lock;
//   - at run time, in debug builds (any compiler; gcc ignores the annotations): Mutex records the
//     thread that holds it, so `mu.assert_held()` at the top of a "mu held" function aborts a caller
//     that does not hold it. Release builds keep the record (one relaxed store per lock and unlock) but
//     do not check it.
// OneThread does the same for "only this thread" contracts without a lock (a reader thread's state).
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#if defined(__clang__)
#define SKILLBOX_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SKILLBOX_THREAD_ANNOTATION(x)
#endif
#define SKILLBOX_CAPABILITY(x) SKILLBOX_THREAD_ANNOTATION(capability(x))
#define SKILLBOX_SCOPED_CAPABILITY SKILLBOX_THREAD_ANNOTATION(scoped_lockable)
#define SKILLBOX_GUARDED_BY(x) SKILLBOX_THREAD_ANNOTATION(guarded_by(x))
#define SKILLBOX_REQUIRES(...) SKILLBOX_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define SKILLBOX_EXCLUDES(...) SKILLBOX_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define SKILLBOX_ACQUIRE(...) SKILLBOX_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define SKILLBOX_RELEASE(...) SKILLBOX_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define SKILLBOX_ASSERT_CAPABILITY(x) SKILLBOX_THREAD_ANNOTATION(assert_capability(x))

namespace skillbox::base {

/// std::mutex plus the id of the thread holding it. Not recursive.
class SKILLBOX_CAPABILITY("mutex") Mutex {
 public:
  void lock() SKILLBOX_ACQUIRE() {
    mu_.lock();
    mark_owned();
  }
  void unlock() SKILLBOX_RELEASE() {
    mark_free();
    mu_.unlock();
  }
  /// True when the calling thread holds the mutex. Exact for the caller's own thread: no other thread
  /// can store the caller's id.
  [[nodiscard]] bool held() const {
    return owner_.load(std::memory_order_relaxed) == std::this_thread::get_id();
  }
  /// Debug builds: aborts unless the calling thread holds the mutex. Tells the analysis it is held.
  void assert_held() const SKILLBOX_ASSERT_CAPABILITY(this) { assert(held()); }

 private:
  friend class MutexLock;
  void mark_owned() { owner_.store(std::this_thread::get_id(), std::memory_order_relaxed); }
  void mark_free() { owner_.store(std::thread::id(), std::memory_order_relaxed); }

  std::mutex mu_;
  std::atomic<std::thread::id> owner_{};
};

/// Holds a Mutex for its scope; waits on a condition variable without losing the owner record.
class SKILLBOX_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) SKILLBOX_ACQUIRE(mu) : mu_(mu), lock_(mu.mu_) { mu_.mark_owned(); }
  ~MutexLock() SKILLBOX_RELEASE() { mu_.mark_free(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  /// cv.wait_for with `ready` evaluated under the lock (as std::condition_variable does). True when
  /// `ready` held, false on timeout.
  template <class Rep, class Period, class Ready>
  bool wait_for(std::condition_variable& cv, std::chrono::duration<Rep, Period> timeout, Ready ready) {
    return waiting(ready, [&](auto checked) { return cv.wait_for(lock_, timeout, checked); });
  }
  /// cv.wait_until, the same way: true when `ready` held, false when `until` passed first.
  template <class Clock, class Duration, class Ready>
  bool wait_until(std::condition_variable& cv, std::chrono::time_point<Clock, Duration> until, Ready ready) {
    return waiting(ready, [&](auto checked) { return cv.wait_until(lock_, until, checked); });
  }
  /// cv.wait, the same way: returns once `ready` holds.
  template <class Ready>
  void wait(std::condition_variable& cv, Ready ready) {
    waiting(ready, [&](auto checked) {
      cv.wait(lock_, checked);
      return true;
    });
  }

 private:
  // Runs `wait` (one of std::condition_variable's waits on lock_) with `ready` wrapped so that the owner
  // record is right whenever `ready` runs and after the wait returns.
  template <class Ready, class Wait>
  bool waiting(Ready& ready, Wait wait) {
    mu_.mark_free();
    const bool ok = wait([&] {
      mu_.mark_owned();
      const bool done = ready();
      if (!done) mu_.mark_free();
      return done;
    });
    mu_.mark_owned();
    return ok;
  }

  Mutex& mu_;
  std::unique_lock<std::mutex> lock_;
};

/// "Only one thread does this", for state a single thread owns without a lock (a HostEndpoint's, which
/// only its sending thread touches; a RelaySink's taking side). The first enter() makes its caller the
/// owner; every later one checks it is called there.
class OneThread {
 public:
  /// True when the calling thread is the owner, or the first caller (which becomes the owner).
  [[nodiscard]] bool enter() {
    std::thread::id seen{};
    const std::thread::id me = std::this_thread::get_id();
    return owner_.compare_exchange_strong(seen, me, std::memory_order_relaxed) || seen == me;
  }
  /// Debug builds: aborts unless enter() is true.
  void assert_entered() { assert(enter()); }

 private:
  std::atomic<std::thread::id> owner_{};
};

}  // namespace skillbox::base
