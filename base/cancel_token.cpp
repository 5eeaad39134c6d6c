// base/cancel_token.cpp — skillbox::CancelToken: a shared flag plus the runners subscribed to it.
//
// In base/, not runner/, because every process that builds an Invocation needs it: the worker does too.
//
// cancel() runs the subscribed callbacks under the token's mutex, and Subscription::reset() takes the
// same mutex, so once reset() returns no callback of that subscription is running or will run: a
// runner can reset its subscription and then free what the callback touches.
#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include "skillbox/skillbox.h"

namespace skillbox {

struct CancelToken::State {
  std::mutex mutex;
  bool cancelled = false;          // guarded by mutex
  std::vector<Link*> subscribers;  // guarded by mutex; each Link is owned by its Subscription
};

struct CancelToken::Link {
  std::shared_ptr<State> state;
  std::function<void()> on_cancel;
};

CancelToken::CancelToken() : state_(std::make_shared<State>()) {}

void CancelToken::cancel() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->cancelled) return;
  state_->cancelled = true;
  for (Link* link : state_->subscribers) {
    try {
      link->on_cancel();
    } catch (...) {  // a runner's signal must not keep the others from hearing it
    }
  }
  state_->subscribers.clear();  // each callback runs once
}

bool CancelToken::cancelled() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->cancelled;
}

CancelToken::Subscription CancelToken::subscribe(std::function<void()> on_cancel) const {
  Subscription sub;
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->cancelled) {
    on_cancel();
    return sub;
  }
  sub.link_ = std::make_shared<Link>(Link{state_, std::move(on_cancel)});
  state_->subscribers.push_back(sub.link_.get());
  return sub;
}

CancelToken::Subscription& CancelToken::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    link_ = std::move(other.link_);
  }
  return *this;
}

void CancelToken::Subscription::reset() {
  if (!link_) return;
  {
    State& state = *link_->state;
    std::lock_guard<std::mutex> lock(state.mutex);
    auto& subs = state.subscribers;
    subs.erase(std::remove(subs.begin(), subs.end(), link_.get()), subs.end());
  }
  link_.reset();
}

}  // namespace skillbox
