#include "engine/reply_inbox.h"

#include <new>

namespace skillbox::engine {

void ReplyInbox::complete(uint64_t request_id, bus::Reply reply) {
  // Notified under the lock: once the JS thread has taken this reply, complete() no longer touches
  // the inbox, so its owner may destroy it as soon as the invocation ends.
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    replies_.emplace_back(request_id, std::move(reply));
  } catch (const std::bad_alloc&) {
    return;  // the host is out of memory: the request stays pending until the deadline
  }
  cv_.notify_one();
}

std::deque<std::pair<uint64_t, bus::Reply>> ReplyInbox::take() {
  if (pump_) pump_(Clock::time_point::min());
  std::deque<std::pair<uint64_t, bus::Reply>> out;
  std::lock_guard<std::mutex> lock(mutex_);
  out.swap(replies_);
  return out;
}

void ReplyInbox::wait_until(Clock::time_point until) {
  if (pump_) {
    pump_(until);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait_until(lock, until, [this] { return woken_ || !replies_.empty(); });
}

void ReplyInbox::wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  woken_ = true;
  cv_.notify_one();
}

void ReplyInbox::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  replies_.clear();
}

}  // namespace skillbox::engine
