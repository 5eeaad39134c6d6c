#include "runner/js_thread_pool.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>

#include "engine/session.h"
#include "skillbox/policy.h"

namespace skillbox::runner {

const size_t JsThreadPool::kStackBytes =
    static_cast<size_t>(Limits::kMaxStackBytes + engine::kNativeStackReserve);

struct JsThreadPool::State {
  std::mutex mutex;
  std::condition_variable work_cv;  // tasks queued or shutdown
  std::condition_variable exit_cv;  // an idle thread exited
  std::deque<std::function<void()>> queue;
  std::atomic<size_t> queued{0};  // queue.size(), for spinning threads to poll without the mutex
  size_t max_idle = 0;
  size_t idle = 0;      // threads asleep on work_cv
  size_t spinning = 0;  // threads polling `queued` before they sleep (see worker_main)
  bool shutdown = false;
};

namespace {

struct ThreadStart {
  std::shared_ptr<JsThreadPool::State> state;
};

// True on the threads started here, whose stack is JsThreadPool::kStackBytes.
thread_local bool t_js_stack = false;

bool start_thread(void* (*fn)(void*), void* arg, pthread_t* out, bool detached) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  bool ok = pthread_attr_setstacksize(&attr, JsThreadPool::kStackBytes) == 0 &&
            (!detached || pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0);
  pthread_t tid{};
  ok = ok && pthread_create(&tid, &attr, fn, arg) == 0;
  pthread_attr_destroy(&attr);
  if (ok && out != nullptr) *out = tid;
  return ok;
}

}  // namespace

namespace {

// Polls `queued` until work arrives or JsThreadPool::kSpin has passed, without the mutex (the caller
// looks at the queue under it afterwards either way).
void spin_for_work(const JsThreadPool::State& s) {
  const auto until = std::chrono::steady_clock::now() + JsThreadPool::kSpin;
  for (unsigned i = 0;; ++i) {
    if (s.queued.load(std::memory_order_acquire) != 0) return;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void* worker_main(void* arg) {
  t_js_stack = true;
  std::shared_ptr<JsThreadPool::State> s = static_cast<ThreadStart*>(arg)->state;
  delete static_cast<ThreadStart*>(arg);
  std::unique_lock<std::mutex> lock(s->mutex);
  bool spun = false;  // since the last task
  for (;;) {
    if (!s->queue.empty()) {
      std::function<void()> task = std::move(s->queue.front());
      s->queue.pop_front();
      s->queued.store(s->queue.size(), std::memory_order_release);
      lock.unlock();
      task();
      task = nullptr;
      lock.lock();
      spun = false;
      continue;
    }
    if (s->shutdown || s->idle >= s->max_idle) break;
    if (!spun) {
      // A caller that runs skills back to back submits its next task within microseconds: a thread
      // still polling takes it with no futex wake-up and no context switch on either side. The
      // submitter sees `spinning` under the mutex, and this thread looks at the queue under it
      // before it sleeps, so no task is left behind.
      spun = true;
      ++s->spinning;
      lock.unlock();
      spin_for_work(*s);
      lock.lock();
      --s->spinning;
      continue;
    }
    ++s->idle;
    const bool woken = s->work_cv.wait_for(lock, JsThreadPool::kIdleTimeout,
                                           [&] { return !s->queue.empty() || s->shutdown; });
    --s->idle;
    if (!woken || (s->shutdown && s->queue.empty())) break;
  }
  s->exit_cv.notify_all();
  return nullptr;
}

}  // namespace

JsThreadPool::JsThreadPool(size_t max_idle) : state_(std::make_shared<State>()) {
  state_->max_idle = max_idle;
}

JsThreadPool::~JsThreadPool() {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->shutdown = true;
  state_->work_cv.notify_all();
  state_->exit_cv.wait(lock, [&] { return state_->idle == 0 && state_->spinning == 0; });
}

bool JsThreadPool::submit(std::function<void()> task) {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->queue.push_back(std::move(task));
  const size_t waiting = state_->queue.size();
  state_->queued.store(waiting, std::memory_order_release);
  if (waiting <= state_->spinning) return true;  // a polling thread takes it
  if (waiting <= state_->spinning + state_->idle) {
    lock.unlock();  // the woken thread then finds the mutex free
    state_->work_cv.notify_one();
    return true;
  }
  auto* start = new ThreadStart{state_};
  if (!start_thread(&worker_main, start, nullptr, true)) {
    delete start;
    state_->queue.pop_back();
    state_->queued.store(state_->queue.size(), std::memory_order_release);
    return false;
  }
  return true;
}

bool JsThreadPool::run_on_fresh_thread(const std::function<void()>& task) {
  pthread_t tid{};
  auto trampoline = [](void* arg) -> void* {
    t_js_stack = true;
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  if (!start_thread(trampoline, const_cast<std::function<void()>*>(&task), &tid, false)) return false;
  pthread_join(tid, nullptr);
  return true;
}

bool JsThreadPool::run_with_js_stack(const std::function<void()>& task) {
  if (t_js_stack) {
    task();
    return true;
  }
  return run_on_fresh_thread(task);
}

}  // namespace skillbox::runner
