// state/run_ledger.h — the async runs one tenant is owed (`POST /v1/skills/{id}/run?async=true` of
// `skillbox serve`, docs/scale-out.md "Async runs"): a queue and the record of each run, in storage that
// outlives the server that accepted them.
//
// A run's life:
//
//   enqueue  -> queued --claim--> running --finish--> completed | failed | dead
//                  ^                 |
//                  +---- finish -----+   (a retry after a crash, or a run given back by a draining server)
//
// A claim takes one run for `lease` and returns a fencing token: the run's `fence`, raised by every
// claim. renew() and finish() succeed only with the token of the latest claim, so a replica that stopped
// answering (its lease expired, another replica claimed the run) has its renew refused and its finish
// refused: it writes nothing. (A holder whose lease expired but whom nobody replaced still renews and
// finishes: its token is still the latest.) A run whose lease expired is claimed again as a new
// attempt; one past its max_attempts is ended as `dead` instead of run again.
//
// Idempotency: a run enqueued with an idempotency key is stored once per (tenant, key). The same key
// with the same skill and body returns that run; with another skill or body it is refused (`conflict`,
// nothing stored): a key names one request.
//
// Local implementation (make_local_run_ledger): DataLayout::run_ledger(), ROOT/runs.sqlite (SQLite,
// WAL), its clock the machine's. PostgreSQL: pg/run_ledger.h, its clock the database server's.
//
// Thread-safety: every member from any thread; several processes may share one ledger.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/result.h"
#include "state/data_layout.h"

namespace skillbox::state {

enum class RunState : uint8_t {
  queued,     // waiting for a claim (or for its retry's time)
  running,    // claimed; its lease may have expired (then the next claim takes it over)
  completed,  // the run ended and `result` is its run result (whatever its outcome)
  failed,     // the request could not run (no such skill, bad input): `result` is the error answer
  dead,       // given up after max_attempts (crashes, lost replicas): `result` says the last failure
};

/// "queued", "running", ... (the API's `state`).
[[nodiscard]] std::string_view to_string(RunState state);
/// The state to_string() names `text`; std::nullopt for any other text (a damaged row).
[[nodiscard]] std::optional<RunState> parse_run_state(std::string_view text);

/// The answer a claim stores when it ends a run as dead because its claimers kept stopping; "%n" stands
/// for its max_attempts (the PostgreSQL ledger fills it in SQL).
inline constexpr std::string_view kLostRunAnswer =
    R"({"error":{"code":"run_lost","message":"the run was claimed %n times and each time its server )"
    R"(stopped before it ended (max_attempts); it is not tried again"}})";

/// Runs a tenant may have queued or running at once; enqueue() beyond it stores nothing (`full`).
inline constexpr uint64_t kMaxPendingRuns = 10'000;

/// What enqueue() stores.
struct NewRun {
  std::string skill_id;
  /// The request body (JSON text), run as a synchronous run's body would be.
  std::string body;
  /// Empty: no key (every enqueue is a new run).
  std::string idempotency_key;
  /// Claims a run may have (the first included) before it is `dead`. At least 1.
  uint32_t max_attempts = 3;
  /// Runs the tenant may have queued or running, this one not counted; beyond, nothing is stored.
  uint64_t max_pending = kMaxPendingRuns;
  /// Not empty: a new run is stored already claimed by this owner for `claim_lease` (a synchronous run
  /// with an idempotency key, run at once by the server that stored it), and Enqueued::claimed says so.
  std::string claim_for;
  std::chrono::milliseconds claim_lease{0};
};

/// One run as stored. Times are milliseconds since the Unix epoch, on the ledger's clock.
struct RunRecord {
  std::string id;  // "run_" and 32 hex digits, unguessable
  std::string skill_id;
  RunState state = RunState::queued;
  uint32_t attempts = 0;  // claims so far
  uint32_t max_attempts = 0;
  int64_t created_ms = 0;
  std::optional<int64_t> started_ms;  // the first claim
  std::optional<int64_t> ended_ms;
  /// completed, failed, dead: the HTTP status the answer had (200 for a run result) and the answer
  /// (JSON text); otherwise 0 and empty.
  int status = 0;
  std::string result;
};

/// A run a claim took: what to run, and the fencing token for renew() and finish().
struct ClaimedRun {
  std::string id;
  std::string skill_id;
  std::string body;
  uint32_t attempt = 0;  // 1 for the first claim
  uint32_t max_attempts = 0;
  int64_t fence = 0;
};

struct Enqueued {
  RunRecord run;
  bool created = false;   // false: the key named a run stored before, returned as it is now
  bool conflict = false;  // the key names a run of another skill or body: nothing stored, `run` is it
  bool full = false;      // the tenant has kMaxPendingRuns queued or running: nothing stored, `run` empty
  /// With NewRun::claim_for, when the run was created: it is stored already claimed (attempt 1).
  std::optional<ClaimedRun> claimed;
};

/// How a claimed run ends, or goes back to the queue.
struct RunEnding {
  /// completed, failed, dead; or queued: back in the queue, claimable after `retry_after`.
  RunState state = RunState::completed;
  int status = 0;
  std::string result;
  std::chrono::milliseconds retry_after{0};
  /// With state queued: the claim does not count as an attempt (a draining server gave the run back
  /// before or while running it; the run never failed).
  bool give_back_attempt = false;

  /// Back to the queue, claimable after `after`; `give_back` as give_back_attempt.
  static RunEnding requeue(std::chrono::milliseconds after, bool give_back) {
    RunEnding e;
    e.state = RunState::queued;
    e.retry_after = after;
    e.give_back_attempt = give_back;
    return e;
  }
  /// Ended as `state` with the answer `status` and `result`.
  static RunEnding end(RunState state, int status, std::string result) {
    RunEnding e;
    e.state = state;
    e.status = status;
    e.result = std::move(result);
    return e;
  }
};

class RunLedger {
 public:
  virtual ~RunLedger() = default;

  /// Stores `run` as queued (or finds the run its idempotency key names, or stores nothing when the
  /// tenant has kMaxPendingRuns pending). Errors: storage.
  [[nodiscard]] virtual Result<Enqueued> enqueue(const NewRun& run) = 0;

  /// The run `id`, or std::nullopt when this tenant has none of that id.
  [[nodiscard]] virtual Result<std::optional<RunRecord>> get(std::string_view id) = 0;

  /// Claims up to `max` (at most 1000) of the oldest runs that are queued and due, or running with an
  /// expired lease, for `lease` (`owner` names the claimer in the record, for operators), in one
  /// transaction. A run past its max_attempts is ended as dead on the way (and not returned). Empty
  /// when none is claimable.
  [[nodiscard]] virtual Result<std::vector<ClaimedRun>> claim(std::string_view owner,
                                                              std::chrono::milliseconds lease,
                                                              size_t max) = 0;

  /// Extends the lease of run `id` to now + `lease`; false when `fence` is no longer its latest claim's
  /// (then the run is not this claimer's any more: stop it), or the run already ended.
  [[nodiscard]] virtual Result<bool> renew(std::string_view id, int64_t fence,
                                           std::chrono::milliseconds lease) = 0;

  /// Ends (or requeues) run `id` as `ending` says; false, and nothing written, when `fence` is no
  /// longer its latest claim's (a late write) or the run already ended.
  [[nodiscard]] virtual Result<bool> finish(std::string_view id, int64_t fence, const RunEnding& ending) = 0;
};

/// A fresh run id: "run_" and 32 hex digits from the system's random source.
[[nodiscard]] std::string new_run_id();

/// What enqueue() returns for `run` stored now as `id` at `created_ms` on the ledger's clock: queued, or
/// claimed (attempt 1, fence 1) when run.claim_for is set. For the implementations.
[[nodiscard]] Enqueued created_run(const std::string& id, const NewRun& run, int64_t created_ms);

/// True for text new_run_id() could have made (what GET /v1/runs/{id} accepts).
[[nodiscard]] bool is_run_id(std::string_view text);

/// The local ledger of `layout` (ROOT/runs.sqlite; created 0600 on first use, in a folder made 0700).
[[nodiscard]] std::shared_ptr<RunLedger> make_local_run_ledger(const DataLayout& layout);

}  // namespace skillbox::state
