// server/async_runs.h — the replica's side of async runs (docs/scale-out.md "Async runs"): it claims
// runs from the tenants' ledgers (state/run_ledger.h), runs each on the RunQueue like any request, keeps
// their leases, and records how each ended.
//
// One thread claims and renews. It claims while this replica holds fewer runs than `capacity`,
// a round over the tenants at a time (one claim per tenant per round, so one tenant's backlog does not
// starve another's), and hands each claimed run to its tenant's lane on the RunQueue; a lane or queue
// that is full gives the run back at once, its attempt not counted, and is left alone until the next
// poll. When nothing is due it sleeps for poll_ms, or until wake() says this replica queued a run. Every
// third of a lease it renews the lease of every run it holds. A run is stopped here (cancelled) when a
// renewal is refused (another claim took it over) or when no renewal went through for nine tenths of a
// lease (the ledger cannot be reached: another replica may take it over any moment), so that two
// executions of one run do not go on side by side; the stopped execution's finish is refused and
// writes nothing. A run this replica claims again while it still holds it (its own lease lapsed) stops
// the older execution the same way.
//
// How a claimed run ends (end_of):
//   - the run ran: `completed`, whatever its outcome, with the run result; except
//   - outcome `crashed` or `internal`, or a 5xx answer: queued again after 1 s, 2 s, 4 s, ... (at most
//     60 s) while attempts remain, else `dead` with that answer;
//   - cancelled while the server drains: queued again at once, the attempt not counted (another
//     replica takes it);
//   - any other answer (no such skill, a bad body: 4xx): `failed`, with that answer.
//
// Thread-safety: wake() and stop_claiming() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/config.h"
#include "server/http_types.h"
#include "server/run_queue.h"
#include "skillbox/skillbox.h"
#include "state/run_ledger.h"

namespace skillbox::server {

class AsyncRuns {
 public:
  /// One tenant's ledger and its lane on the RunQueue.
  struct Source {
    size_t lane = 0;
    std::string tenant;
    std::shared_ptr<state::RunLedger> ledger;
  };
  /// The tenants served now (the API's, which a reload changes).
  using Sources = std::function<std::vector<Source>()>;
  /// Runs `run` of `source` on the calling run thread, its cancellation `cancel`, and returns the answer
  /// a synchronous run of the same body would have had (status, body, outcome).
  using Execute = std::function<HttpResponse(const Source& source, const state::ClaimedRun& run,
                                             const CancelToken& cancel)>;
  using Log = std::function<void(const std::string&)>;

  /// Starts the claiming thread. `owner` names this replica in the ledgers; `capacity` is how many runs
  /// it holds at once, running or waiting in their lanes. `queue` must outlive stop_claiming().
  AsyncRuns(RunQueue& queue, AsyncConfig config, std::string owner, size_t capacity, Sources sources,
            Execute execute, Log log);
  /// stop_claiming(), then waits until every run it holds has ended.
  ~AsyncRuns();
  AsyncRuns(const AsyncRuns&) = delete;
  AsyncRuns& operator=(const AsyncRuns&) = delete;

  /// This replica queued a run: look for it now rather than at the next poll.
  void wake();
  /// Claims nothing more, and gives back the runs claimed but not started (the server drains). Leases
  /// of the runs still going on keep being renewed until they end. Does not wait: once it returns,
  /// nothing more is submitted to the queue.
  void stop_claiming();

  /// Holds `run`, which this replica stored already claimed (a synchronous run with an idempotency key,
  /// run on the request's own thread): its lease is renewed, and it is stopped as a claimed run is
  /// (the returned token is cancelled), until forget(run).
  [[nodiscard]] CancelToken adopt(const Source& source, const state::ClaimedRun& run);
  void forget(const state::ClaimedRun& run);
  /// This replica's name in the ledgers, and the lease of its claims.
  [[nodiscard]] const std::string& owner() const { return owner_; }
  [[nodiscard]] std::chrono::milliseconds lease() const {
    return std::chrono::milliseconds(config_.lease_ms);
  }

  /// How a run that answered `answer` on attempt `attempt` of `max_attempts` ends; `draining`: the
  /// server was stopping when it ended. Pure (for tests).
  [[nodiscard]] static state::RunEnding end_of(const HttpResponse& answer, uint32_t attempt,
                                               uint32_t max_attempts, bool draining);

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    Source source;
    int64_t fence = 0;
    CancelToken cancel;
    /// Past this, with no renewal since, the run is stopped here: its lease may have ended in the ledger
    /// (a tenth of the lease early, as the ledger's clock is not this one).
    Clock::time_point lease_ok_until;
  };

  void loop();
  /// One round of claims; true when it claimed anything.
  bool claim_round();
  void renew_all();
  /// Cancels the runs whose lease_ok_until passed.
  void stop_overdue();
  /// Holds `run` (claimed at `claimed`) and queues its job; false, holding nothing, when the queue
  /// refused it or the server stops claiming.
  bool submit(const Source& source, const state::ClaimedRun& run, Clock::time_point claimed,
              std::chrono::milliseconds lease);
  /// The RunQueue job of a claimed run.
  RunQueue::Then run_one(const Source& source, const state::ClaimedRun& run);
  /// finish(), tried again up to 3 times 200 ms apart when the ledger cannot be reached.
  static Result<bool> finish_with_retries(const Source& source, const state::ClaimedRun& run,
                                          const state::RunEnding& ending);
  /// Forgets run `id` if its entry is still the claim of `fence`.
  void release(const std::string& id, int64_t fence);

  RunQueue& queue_;
  const AsyncConfig config_;
  const std::string owner_;
  const size_t capacity_;
  const Sources sources_;
  const Execute execute_;
  const Log log_;
  base::Mutex mu_;  // taken before the RunQueue's own lock (submit), never after it
  std::condition_variable wake_;
  std::map<std::string, Held> held_ SKILLBOX_GUARDED_BY(mu_);
  bool claiming_ SKILLBOX_GUARDED_BY(mu_) = true;
  bool woken_ SKILLBOX_GUARDED_BY(mu_) = false;
  bool ending_ SKILLBOX_GUARDED_BY(mu_) = false;
  size_t rotation_ SKILLBOX_GUARDED_BY(mu_) = 0;
  // The claiming thread's own:
  std::set<std::string> failing_;                             // tenants whose last claim failed
  std::map<std::string, Clock::time_point> lane_full_until_;  // tenants whose lane refused a run
  std::thread thread_;
};

}  // namespace skillbox::server
