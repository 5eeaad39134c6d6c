// runner/relay_sink.h — replies of a worker's asynchronous requests, on their way to its supervisor.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

#include "base/mutex.h"
#include "base/unique_fd.h"
#include "bus/endpoint.h"

namespace skillbox::runner {

/// Replies completed on the http capability's I/O thread wait here for the supervising thread, whose
/// poll wakes on the eventfd. complete() and wake() may be called from any thread; take() and fd() only
/// from the supervising thread.
class RelaySink final : public bus::CompletionSink {
 public:
  RelaySink() : wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

  void complete(uint64_t request_id, bus::Reply reply) override {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      replies_.emplace_back(request_id, std::move(reply));
    } catch (const std::bad_alloc&) {
      return;  // the request stays pending until the deadline
    }
    wake();
  }

  /// Every reply completed so far, oldest first; clears the wake-up.
  std::deque<std::pair<uint64_t, bus::Reply>> take() {
    taker_.assert_entered();
    uint64_t count = 0;
    (void)!::read(wake_.get(), &count, sizeof(count));
    std::lock_guard<std::mutex> lock(mutex_);
    std::deque<std::pair<uint64_t, bus::Reply>> out;
    out.swap(replies_);
    return out;
  }

  /// Wakes the supervising thread without a reply (a cancellation). Only a write(2): safe under the
  /// cancel token's lock.
  void wake() const {
    const uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
  }

  [[nodiscard]] int fd() const { return wake_.get(); }
  [[nodiscard]] bool valid() const { return wake_.valid(); }

 private:
  base::UniqueFd wake_;
  base::OneThread taker_;  // the supervising thread
  std::mutex mutex_;
  std::deque<std::pair<uint64_t, bus::Reply>> replies_;
};

}  // namespace skillbox::runner
