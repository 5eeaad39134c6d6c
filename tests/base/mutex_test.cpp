// base/mutex.h: the owner record behind Mutex::held() and assert_held(), across a condition-variable
// wait and from another thread.
#include "base/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <thread>

namespace skillbox::base {
namespace {

TEST(BaseMutex, HeldOnlyByTheLockingThreadAndOnlyWhileLocked) {
  Mutex mu;
  EXPECT_FALSE(mu.held());
  {
    MutexLock lock(mu);
    EXPECT_TRUE(mu.held());
    bool other_thread_sees_held = true;
    std::thread([&] { other_thread_sees_held = mu.held(); }).join();
    EXPECT_FALSE(other_thread_sees_held);
  }
  EXPECT_FALSE(mu.held());
}

TEST(BaseMutex, WaitKeepsTheRecordWhereTheLockIs) {
  Mutex mu;
  std::condition_variable cv;
  bool ready = false;
  bool held_in_predicate = false;
  std::thread setter([&] {
    MutexLock lock(mu);  // takes the lock while the waiter waits: the waiter released it
    EXPECT_TRUE(mu.held());
    ready = true;
    cv.notify_all();
  });
  {
    MutexLock lock(mu);
    EXPECT_TRUE(lock.wait_for(cv, std::chrono::seconds(10), [&] {
      held_in_predicate = mu.held();
      return ready;
    }));
    EXPECT_TRUE(held_in_predicate);
    EXPECT_TRUE(mu.held());
  }
  setter.join();
  EXPECT_FALSE(mu.held());
}

TEST(BaseOneThread, TheFirstThreadToEnterOwnsIt) {
  OneThread owner;
  std::promise<void> entered;
  std::promise<void> checked;
  bool first = false;
  bool again = false;
  std::thread t([&] {
    first = owner.enter();
    entered.set_value();
    checked.get_future().wait();
    again = owner.enter();
  });
  entered.get_future().wait();
  EXPECT_FALSE(owner.enter()) << "this thread entered second, while the owner is alive";
  checked.set_value();
  t.join();
  EXPECT_TRUE(first) << "the first caller becomes the owner";
  EXPECT_TRUE(again) << "the owner stays the owner";
}

}  // namespace
}  // namespace skillbox::base
