// server/held_answer.cpp — see held_answer.h.
#include "server/held_answer.h"

#include <string>
#include <utility>

namespace skillbox::server {

/// A stream whose writes pass through and whose end waits for the HeldAnswer's release.
class HeldAnswer::HeldEnd final : public ResponseStream {
 public:
  HeldEnd(std::shared_ptr<ResponseStream> inner, std::shared_ptr<HeldAnswer> held)
      : inner_(std::move(inner)), held_(std::move(held)) {}
  void write(std::string bytes) override { inner_->write(std::move(bytes)); }
  void end() override {
    held_->send_or_hold([inner = inner_] { inner->end(); });
  }
  void end_with(std::string outcome, RequestFacts facts) override {
    held_->send_or_hold([inner = inner_, outcome = std::move(outcome), facts = std::move(facts)]() mutable {
      inner->end_with(std::move(outcome), std::move(facts));
    });
  }
  [[nodiscard]] bool gone() const override { return inner_->gone(); }

 private:
  const std::shared_ptr<ResponseStream> inner_;
  const std::shared_ptr<HeldAnswer> held_;
};

HeldAnswer::HeldAnswer(Respond respond, RespondStream stream)
    : respond_(std::move(respond)), stream_(std::move(stream)) {}

Respond HeldAnswer::respond() {
  if (!respond_) return {};
  return [self = shared_from_this()](HttpResponse r) {
    // The held step names `this`, not `self`: what is held keeps nothing alive (then() holds it).
    HeldAnswer* held = self.get();
    self->send_or_hold([held, r = std::move(r)]() mutable { held->respond_(std::move(r)); });
  };
}

RespondStream HeldAnswer::stream() {
  if (!stream_) return {};
  return [self = shared_from_this()](HttpResponse head) -> std::shared_ptr<ResponseStream> {
    return std::make_shared<HeldEnd>(self->stream_(std::move(head)), self);
  };
}

RunQueue::Then HeldAnswer::then() {
  return [self = shared_from_this()] {
    std::vector<std::function<void()>> held;
    {
      base::MutexLock lock(self->mu_);
      self->released_ = true;
      held.swap(self->held_);
    }
    for (std::function<void()>& send : held) send();
  };
}

void HeldAnswer::send_or_hold(std::function<void()> send) {
  {
    base::MutexLock lock(mu_);
    if (!released_) {
      held_.push_back(std::move(send));
      return;
    }
  }
  send();
}

}  // namespace skillbox::server
