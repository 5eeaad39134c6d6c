// server/async_runs.cpp — see async_runs.h.
#include "server/async_runs.h"

#include <algorithm>
#include <utility>

namespace skillbox::server {

using state::RunEnding;
using state::RunState;

AsyncRuns::AsyncRuns(RunQueue& queue, AsyncConfig config, std::string owner, size_t capacity, Sources sources,
                     Execute execute, Log log)
    : queue_(queue),
      config_(config),
      owner_(std::move(owner)),
      capacity_(std::max<size_t>(capacity, 1)),
      sources_(std::move(sources)),
      execute_(std::move(execute)),
      log_(std::move(log)),
      thread_([this] { loop(); }) {}

AsyncRuns::~AsyncRuns() {
  stop_claiming();
  {
    base::MutexLock lock(mu_);
    ending_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void AsyncRuns::wake() {
  {
    base::MutexLock lock(mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void AsyncRuns::stop_claiming() {
  base::MutexLock lock(mu_);
  claiming_ = false;
  wake_.notify_all();
  // A round in progress may be about to submit to the queue, which the caller is about to stop.
  lock.wait(wake_, [this] {
    mu_.assert_held();
    return !in_round_;
  });
}

RunEnding AsyncRuns::end_of(const HttpResponse& answer, uint32_t attempt, uint32_t max_attempts,
                            bool draining) {
  const bool cancelled = answer.outcome == to_string(Outcome::cancelled);
  if (cancelled && draining) {
    return RunEnding::requeue(std::chrono::milliseconds(0), true);
  }
  const bool retryable = answer.status >= 500 || answer.outcome == to_string(Outcome::crashed) ||
                         answer.outcome == to_string(Outcome::internal);
  if (retryable && attempt < max_attempts) {
    const uint32_t doublings = std::min<uint32_t>(attempt - 1, 6);
    const auto wait =
        std::min(std::chrono::milliseconds(1000) * (1u << doublings), std::chrono::milliseconds(60'000));
    return RunEnding::requeue(wait, false);
  }
  RunState state = RunState::completed;
  if (retryable) {
    state = RunState::dead;
  } else if (answer.status != 200) {
    state = RunState::failed;
  }
  return RunEnding::end(state, static_cast<int>(answer.status), answer.body);
}

void AsyncRuns::loop() {
  using Clock = std::chrono::steady_clock;
  const auto renew_every = std::chrono::milliseconds(config_.lease_ms / 3);
  auto next_renewal = Clock::now() + renew_every;
  for (;;) {
    bool claimed = false;
    {
      base::MutexLock lock(mu_);
      if (ending_ && held_.empty()) return;
    }
    claimed = claim_round();
    if (Clock::now() >= next_renewal) {
      renew_all();
      next_renewal = Clock::now() + renew_every;
    }
    if (claimed) continue;
    base::MutexLock lock(mu_);
    const auto until = std::min(next_renewal, Clock::now() + std::chrono::milliseconds(config_.poll_ms));
    lock.wait_until(wake_, until, [this] {
      mu_.assert_held();
      return woken_ || (ending_ && held_.empty());
    });
    woken_ = false;
  }
}

bool AsyncRuns::claim_round() {
  const std::vector<Source> sources = sources_();
  if (sources.empty()) return false;
  size_t first = 0;
  {
    base::MutexLock lock(mu_);
    if (!claiming_ || held_.size() >= capacity_) return false;
    first = rotation_++ % sources.size();
    in_round_ = true;
  }
  const auto end_round = [this] {
    {
      base::MutexLock lock(mu_);
      in_round_ = false;
    }
    wake_.notify_all();
  };
  bool any = false;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& source = sources[(first + i) % sources.size()];
    {
      base::MutexLock lock(mu_);
      if (!claiming_ || held_.size() >= capacity_) break;
    }
    Result<std::optional<state::ClaimedRun>> got =
        source.ledger->claim(owner_, std::chrono::milliseconds(config_.lease_ms));
    if (!got) {
      // Once per failing spell, not at every poll: the next success says it ended.
      if (failing_.insert(source.tenant).second) {
        log_("async runs of tenant " + source.tenant + " cannot be claimed: " + got.error().message);
      }
      continue;
    }
    if (failing_.erase(source.tenant) > 0)
      log_("async runs of tenant " + source.tenant + " can be claimed again");
    if (!*got) continue;
    const state::ClaimedRun run = std::move(**got);
    {
      base::MutexLock lock(mu_);
      held_.emplace(run.id, Held{.source = source, .fence = run.fence, .cancel = CancelToken()});
    }
    const RunQueue::Ticket ticket = queue_.submit(
        source.lane, [this, source, run](RunQueue::Clock::duration) { return run_one(source, run); });
    if (ticket.admission != RunQueue::Admission::queued) {
      // The lane or the server is full (or stopping): give it back for a moment, as if never claimed.
      (void)source.ledger->finish(run.id, run.fence,
                                  RunEnding::requeue(std::chrono::milliseconds(config_.poll_ms), true));
      release(run.id);
      continue;
    }
    any = true;
  }
  end_round();
  return any;
}

RunQueue::Then AsyncRuns::run_one(const Source& source, const state::ClaimedRun& run) {
  CancelToken cancel;
  bool draining = false;
  {
    base::MutexLock lock(mu_);
    const auto it = held_.find(run.id);
    if (it != held_.end()) cancel = it->second.cancel;
    draining = !claiming_;
  }
  RunEnding ending;
  if (draining) {
    // Claimed, not started, and the server stops: another replica takes it.
    ending = RunEnding::requeue(std::chrono::milliseconds(0), true);
  } else {
    HttpResponse answer;
    try {
      answer = execute_(source, run, cancel);
    } catch (const std::exception& e) {
      answer = error_response(500, "internal", std::string("internal error: ") + e.what());
    }
    bool stopping = false;
    {
      base::MutexLock lock(mu_);
      stopping = !claiming_;
    }
    ending = end_of(answer, run.attempt, run.max_attempts, stopping);
  }
  Result<bool> kept = source.ledger->finish(run.id, run.fence, ending);
  if (!kept) {
    log_("async run " + run.id + " of tenant " + source.tenant + ": its end could not be stored (" +
         kept.error().message + "); its lease runs out and another claim runs it again");
  } else if (!*kept) {
    log_("async run " + run.id + " of tenant " + source.tenant +
         ": its lease was lost (another replica claimed it); this replica's result was not stored");
  }
  release(run.id);
  return {};
}

void AsyncRuns::release(const std::string& id) {
  {
    base::MutexLock lock(mu_);
    held_.erase(id);
    woken_ = true;  // room for another claim
  }
  wake_.notify_all();
}

void AsyncRuns::renew_all() {
  std::vector<std::pair<std::string, Held>> held;
  {
    base::MutexLock lock(mu_);
    held.assign(held_.begin(), held_.end());
  }
  for (const auto& [id, h] : held) {
    Result<bool> renewed = h.source.ledger->renew(id, h.fence, std::chrono::milliseconds(config_.lease_ms));
    if (renewed && !*renewed) {
      log_("async run " + id + " of tenant " + h.source.tenant +
           ": its lease ran out and another replica claimed it; stopping it here");
      h.cancel.cancel();
    } else if (!renewed) {
      log_("async run " + id + " of tenant " + h.source.tenant + ": its lease could not be renewed (" +
           renewed.error().message + "); trying again");
    }
  }
}

}  // namespace skillbox::server
