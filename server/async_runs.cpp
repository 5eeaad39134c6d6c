// server/async_runs.cpp — see async_runs.h.
#include "server/async_runs.h"

#include <algorithm>
#include <thread>
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
  {
    base::MutexLock lock(mu_);
    claiming_ = false;
  }
  wake_.notify_all();
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
  const auto renew_every = std::chrono::milliseconds(config_.lease_ms / 3);
  auto next_renewal = Clock::now() + renew_every;
  for (;;) {
    {
      base::MutexLock lock(mu_);
      if (ending_ && held_.empty()) return;
    }
    // Renewals first: a claim round may wait on the ledger, and a lease must not lapse behind it.
    if (Clock::now() >= next_renewal) {
      next_renewal = Clock::now() + renew_every;
      renew_all();
    }
    stop_overdue();
    if (claim_round()) continue;
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
  }
  const auto lease = std::chrono::milliseconds(config_.lease_ms);
  bool any = false;
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& source = sources[(first + i) % sources.size()];
    const auto now = Clock::now();
    // A lane that refused a run a moment ago is left alone until the next poll.
    if (const auto full = lane_full_until_.find(source.tenant); full != lane_full_until_.end()) {
      if (now < full->second) continue;
      lane_full_until_.erase(full);
    }
    size_t room = 0;
    {
      base::MutexLock lock(mu_);
      if (!claiming_ || held_.size() >= capacity_) break;
      // A share of the room per tenant, so that the first tenant of the round does not take it all.
      room = std::max<size_t>(1, (capacity_ - held_.size()) / sources.size());
    }
    Result<std::vector<state::ClaimedRun>> got = source.ledger->claim(owner_, lease, room);
    if (!got) {
      // Once per failing spell, not at every poll: the next success says it ended.
      if (failing_.insert(source.tenant).second) {
        log_("async runs of tenant " + source.tenant + " cannot be claimed: " + got.error().message);
      }
      continue;
    }
    if (failing_.erase(source.tenant) > 0)
      log_("async runs of tenant " + source.tenant + " can be claimed again");
    for (const state::ClaimedRun& run : *got) {
      if (submit(source, run, now, lease)) {
        any = true;
        continue;
      }
      // The lane or the server is full (or the server stops): give it back, as if never claimed, and
      // leave the lane alone until the next poll.
      lane_full_until_[source.tenant] = Clock::now() + std::chrono::milliseconds(config_.poll_ms);
      (void)finish_with_retries(source, run, RunEnding::requeue(std::chrono::milliseconds(0), true));
    }
  }
  return any;
}

bool AsyncRuns::submit(const Source& source, const state::ClaimedRun& run, Clock::time_point claimed,
                       std::chrono::milliseconds lease) {
  // Submitted under mu_, after checking claiming_: once stop_claiming() returns, nothing more reaches the
  // queue (which the server is about to stop).
  base::MutexLock lock(mu_);
  if (!claiming_) return false;
  if (const auto mine = held_.find(run.id); mine != held_.end()) {
    // This replica's own claim had lapsed (its renewals failed, or its clock jumped) and it claimed the
    // run again: the older execution stops, the new claim's runs.
    mine->second.cancel.cancel();
    log_("async run " + run.id + " of tenant " + source.tenant +
         ": claimed again after its lease lapsed here; the earlier execution is stopped");
  }
  held_.insert_or_assign(run.id, Held{.source = source,
                                      .fence = run.fence,
                                      .cancel = CancelToken(),
                                      .lease_ok_until = claimed + lease - lease / 10});
  const RunQueue::Ticket ticket = queue_.submit(
      source.lane, [this, source, run](RunQueue::Clock::duration) { return run_one(source, run); });
  if (ticket.admission == RunQueue::Admission::queued) return true;
  held_.erase(run.id);
  return false;
}

RunQueue::Then AsyncRuns::run_one(const Source& source, const state::ClaimedRun& run) {
  CancelToken cancel;
  bool draining = false;
  {
    base::MutexLock lock(mu_);
    const auto it = held_.find(run.id);
    // Claimed again by this replica meanwhile (a lapsed lease): the newer claim's job runs it.
    if (it == held_.end() || it->second.fence != run.fence) return {};
    cancel = it->second.cancel;
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
  const Result<bool> kept = finish_with_retries(source, run, ending);
  if (!kept) {
    log_("async run " + run.id + " of tenant " + source.tenant + ": its end could not be stored (" +
         kept.error().message + "); once its lease runs out another claim runs it again");
  } else if (!*kept) {
    log_("async run " + run.id + " of tenant " + source.tenant +
         ": another claim took it over; this execution's result was not stored");
  }
  release(run.id, run.fence);
  return {};
}

Result<bool> AsyncRuns::finish_with_retries(const Source& source, const state::ClaimedRun& run,
                                            const RunEnding& ending) {
  Result<bool> kept = source.ledger->finish(run.id, run.fence, ending);
  for (int retry = 0; retry < 3 && !kept; ++retry) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kept = source.ledger->finish(run.id, run.fence, ending);
  }
  return kept;
}

CancelToken AsyncRuns::adopt(const Source& source, const state::ClaimedRun& run) {
  const auto lease = std::chrono::milliseconds(config_.lease_ms);
  base::MutexLock lock(mu_);
  Held& held = held_
                   .insert_or_assign(run.id, Held{.source = source,
                                                  .fence = run.fence,
                                                  .cancel = CancelToken(),
                                                  .lease_ok_until = Clock::now() + lease - lease / 10})
                   .first->second;
  return held.cancel;
}

void AsyncRuns::forget(const state::ClaimedRun& run) {
  release(run.id, run.fence);
}

void AsyncRuns::release(const std::string& id, int64_t fence) {
  {
    base::MutexLock lock(mu_);
    if (const auto it = held_.find(id); it != held_.end() && it->second.fence == fence) held_.erase(it);
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
  const auto lease = std::chrono::milliseconds(config_.lease_ms);
  for (const auto& [id, h] : held) {
    const auto asked = Clock::now();
    const Result<bool> renewed = h.source.ledger->renew(id, h.fence, lease);
    if (renewed && *renewed) {
      base::MutexLock lock(mu_);
      if (const auto it = held_.find(id); it != held_.end() && it->second.fence == h.fence) {
        it->second.lease_ok_until = asked + lease - lease / 10;
      }
    } else if (renewed) {
      log_("async run " + id + " of tenant " + h.source.tenant +
           ": another replica claimed it after its lease ran out; stopping it here");
      h.cancel.cancel();
    } else {
      log_("async run " + id + " of tenant " + h.source.tenant + ": its lease could not be renewed (" +
           renewed.error().message + "); trying again, and stopping it if the lease runs out first");
    }
  }
}

void AsyncRuns::stop_overdue() {
  const auto now = Clock::now();
  base::MutexLock lock(mu_);
  for (auto& [id, h] : held_) {
    if (now < h.lease_ok_until || h.cancel.cancelled()) continue;
    // No renewal went through for a whole lease: another replica may have taken the run over, and two
    // executions must not go on side by side.
    log_("async run " + id + " of tenant " + h.source.tenant +
         ": its lease could not be renewed in time; stopping it here (another claim runs it again)");
    h.cancel.cancel();
  }
}

}  // namespace skillbox::server
