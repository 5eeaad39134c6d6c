// server/held_answer.h — the answer of a queued job, held until the job's run thread counts as free.
//
// A client that reads its answer and at once sends its next request must find the thread that served
// the last one free again; otherwise a server without a queue (queue_limit = 0) or a tenant at its
// running cap would refuse a strictly sequential client (503 or 429). So a job answers through a
// HeldAnswer: a plain answer is kept, and a streamed answer's lines go out as they are written but its
// end (the last chunk, which tells an HTTP client the response is complete) is kept, until the queue
// runs the job's RunQueue::Then, which the job takes from then(). Whatever is answered after that (an
// answer given later from another thread) goes out at once.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "base/mutex.h"
#include "server/http_types.h"
#include "server/run_queue.h"

namespace skillbox::server {

class HeldAnswer : public std::enable_shared_from_this<HeldAnswer> {
 public:
  /// The Respond and RespondStream to give the job: the same contract as those given to make().
  [[nodiscard]] Respond respond();
  [[nodiscard]] RespondStream stream();
  /// What the job returns to its queue: sends what was held, in the order it was given.
  [[nodiscard]] RunQueue::Then then();

  /// Holds what goes through `respond` and the end of what goes through `stream` (either may be empty).
  /// Made with std::make_shared: respond(), stream() and then() share it.
  HeldAnswer(Respond respond, RespondStream stream);

 private:
  class HeldEnd;
  /// Runs `send` now once released, else keeps it for then().
  void send_or_hold(std::function<void()> send);

  const Respond respond_;
  const RespondStream stream_;
  base::Mutex mu_;
  bool released_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::vector<std::function<void()>> held_ SKILLBOX_GUARDED_BY(mu_);
};

}  // namespace skillbox::server
