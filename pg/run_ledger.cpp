// pg/run_ledger.cpp — see run_ledger.h.
#include "pg/run_ledger.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skillbox::pg {
namespace {

using state::ClaimedRun;
using state::Enqueued;
using state::NewRun;
using state::RunEnding;
using state::RunRecord;
using state::RunState;

constexpr std::chrono::seconds kConnectionWait{5};

// Milliseconds since the epoch of the timestamptz column `column`.
std::string ms(const char* column) {
  return std::string("(extract(epoch FROM ") + column + ") * 1000)::bigint";
}

const std::string kGet = "SELECT id, skill, state, attempts, max_attempts, " + ms("created_at") + ", " +
                         ms("started_at") + ", " + ms("ended_at") +
                         ", status, result FROM async_runs WHERE tenant = $1 AND id = $2";

// Inserts unless the tenant has $7 runs queued or running already (a bound, not an exact count: two
// inserts at once may both pass it by one).
const std::string kInsert =
    "INSERT INTO async_runs (id, tenant, skill, body, idempotency_key, state, max_attempts, attempts, fence, "
    "owner, lease_until, started_at) "
    "SELECT $1, $2, $3, $4, $5, CASE WHEN $8::text IS NULL THEN 'queued' ELSE 'running' END, $6, "
    "CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END, $8, "
    "CASE WHEN $8::text IS NULL THEN NULL ELSE now() + $9::bigint * interval '1 millisecond' END, "
    "CASE WHEN $8::text IS NULL THEN NULL ELSE now() END "
    "WHERE (SELECT count(*) FROM async_runs WHERE tenant = $2 "
    "AND state IN ('queued', 'running')) < $7::bigint ON CONFLICT (tenant, idempotency_key) DO NOTHING "
    "RETURNING " +
    ms("created_at");

const std::string kByKey =
    "SELECT id, skill = $3 AND body = $4 FROM async_runs WHERE tenant = $1 AND idempotency_key = $2";

// One statement: pick, then take the row, or end it as dead when this claim would pass max_attempts.
const std::string kClaim = R"sql(
WITH picked AS (
  SELECT id FROM async_runs
   WHERE tenant = $1
     AND ((state = 'queued' AND not_before <= now()) OR (state = 'running' AND lease_until < now()))
   ORDER BY not_before, created_at
   LIMIT $5::integer
   FOR UPDATE SKIP LOCKED
)
UPDATE async_runs r SET
  state       = CASE WHEN r.attempts >= r.max_attempts THEN 'dead' ELSE 'running' END,
  attempts    = CASE WHEN r.attempts >= r.max_attempts THEN r.attempts ELSE r.attempts + 1 END,
  fence       = r.fence + 1,
  owner       = CASE WHEN r.attempts >= r.max_attempts THEN NULL ELSE $2 END,
  lease_until = CASE WHEN r.attempts >= r.max_attempts THEN NULL
                     ELSE now() + $3::bigint * interval '1 millisecond' END,
  started_at  = coalesce(r.started_at, now()),
  ended_at    = CASE WHEN r.attempts >= r.max_attempts THEN now() ELSE NULL END,
  status      = CASE WHEN r.attempts >= r.max_attempts THEN 500 ELSE 0 END,
  result      = CASE WHEN r.attempts >= r.max_attempts THEN replace($4, '%n', r.max_attempts::text) ELSE '' END
FROM picked WHERE r.id = picked.id
RETURNING r.id, r.skill, r.body, r.attempts, r.max_attempts, r.fence, r.state
)sql";

const std::string kHeld = " WHERE tenant = $1 AND id = $2 AND fence = $3 AND state = 'running'";

const std::string kRenew =
    "UPDATE async_runs SET lease_until = now() + $4::bigint * interval '1 millisecond'" + kHeld;

const std::string kRequeue =
    "UPDATE async_runs SET state = 'queued', owner = NULL, lease_until = NULL, "
    "not_before = now() + $4::bigint * interval '1 millisecond', attempts = attempts - $5::integer" +
    kHeld;

const std::string kEnd =
    "UPDATE async_runs SET state = $4, owner = NULL, lease_until = NULL, ended_at = now(), status = $5, "
    "result = $6" +
    kHeld;

std::optional<int64_t> to_i64(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::optional<RunState> parse_state(const std::optional<std::string>& text) {
  return text ? state::parse_run_state(*text) : std::nullopt;
}

class PgRunLedger final : public state::RunLedger {
 public:
  PgRunLedger(std::shared_ptr<Pool> pool, std::string tenant)
      : pool_(std::move(pool)), tenant_(std::move(tenant)) {}

  Result<Enqueued> enqueue(const NewRun& run) override {
    auto c = connection();
    if (!c) return fail(c.error());
    Connection& conn = **c;
    const std::string id = state::new_run_id();
    const std::string max_attempts = std::to_string(std::max<uint32_t>(run.max_attempts, 1));
    const Param key = run.idempotency_key.empty() ? Param() : Param(run.idempotency_key);
    auto inserted = conn.exec(
        "storing an async run", kInsert,
        {id, tenant_, run.skill_id, run.body, key, max_attempts, std::to_string(run.max_pending),
         run.claim_for.empty() ? Param() : Param(run.claim_for), std::to_string(run.claim_lease.count())});
    if (!inserted) return fail(inserted.error());
    if (!inserted->empty()) {
      const std::optional<int64_t> created = to_i64(inserted->at(0, 0));
      if (!created) return damaged("a new run's created_at");
      return state::created_run(id, run, *created);
    }
    // The key names a run stored before (perhaps a moment ago, by another replica), or the tenant has
    // kMaxPendingRuns pending.
    Enqueued full;
    full.full = true;
    if (run.idempotency_key.empty()) return full;
    auto found = conn.exec("finding the run of an idempotency key", kByKey,
                           {tenant_, run.idempotency_key, run.skill_id, run.body});
    if (!found) return fail(found.error());
    if (found->empty()) return full;
    if (!found->at(0, 0)) return damaged("the run of an idempotency key");
    auto record = read(conn, *found->at(0, 0));
    if (!record) return record.error();
    if (!*record) return damaged("the run of an idempotency key");
    Enqueued found_run;
    found_run.run = std::move(**record);
    found_run.conflict = found->at(0, 1) != "t";
    return found_run;
  }

  Result<std::optional<RunRecord>> get(std::string_view id) override {
    auto c = connection();
    if (!c) return fail(c.error());
    return read(**c, std::string(id));
  }

  Result<std::vector<ClaimedRun>> claim(std::string_view owner, std::chrono::milliseconds lease,
                                        size_t max) override {
    std::vector<ClaimedRun> runs;
    if (max == 0) return runs;
    auto c = connection();
    if (!c) return fail(c.error());
    auto r = (*c)->exec("claiming async runs", kClaim,
                        {tenant_, owner, std::to_string(lease.count()), state::kLostRunAnswer,
                         std::to_string(std::min<size_t>(max, 1000))});
    if (!r) return fail(r.error());
    for (size_t row = 0; row < r->rows.size(); ++row) {
      const auto attempts = to_i64(r->at(row, 3));
      const auto max_attempts = to_i64(r->at(row, 4));
      const auto fence = to_i64(r->at(row, 5));
      if (!r->at(row, 0) || !r->at(row, 1) || !r->at(row, 2) || !attempts || !max_attempts || !fence) {
        return damaged("a claimed run");
      }
      if (r->at(row, 6) == "dead") continue;  // ended on the way
      runs.push_back(ClaimedRun{.id = *r->at(row, 0),
                                .skill_id = *r->at(row, 1),
                                .body = *r->at(row, 2),
                                .attempt = static_cast<uint32_t>(*attempts),
                                .max_attempts = static_cast<uint32_t>(*max_attempts),
                                .fence = *fence});
    }
    return runs;
  }

  Result<bool> renew(std::string_view id, int64_t fence, std::chrono::milliseconds lease) override {
    auto c = connection();
    if (!c) return fail(c.error());
    auto r = (*c)->exec("renewing an async run's lease", kRenew,
                        {tenant_, id, std::to_string(fence), std::to_string(lease.count())});
    if (!r) return fail(r.error());
    return r->affected == 1;
  }

  Result<bool> finish(std::string_view id, int64_t fence, const RunEnding& ending) override {
    auto c = connection();
    if (!c) return fail(c.error());
    const std::string f = std::to_string(fence);
    const bool requeue = ending.state == RunState::queued || ending.state == RunState::running;
    auto r = requeue ? (*c)->exec("giving an async run back to the queue", kRequeue,
                                  {tenant_, id, f, std::to_string(ending.retry_after.count()),
                                   ending.give_back_attempt ? "1" : "0"})
                     : (*c)->exec("ending an async run", kEnd,
                                  {tenant_, id, f, state::to_string(ending.state),
                                   std::to_string(ending.status), ending.result});
    if (!r) return fail(r.error());
    return r->affected == 1;
  }

 private:
  PgResult<Pool::Lease> connection() {
    return pool_->acquire(std::chrono::steady_clock::now() + kConnectionWait);
  }

  static Error fail(const PgError& e) { return Error{"the async runs in the database: " + e.message}; }
  Error damaged(const std::string& what) const {
    return Error{"the async runs in the database: " + what + " of tenant " + tenant_ +
                 " is damaged (a column is missing or not a number); the row was left as it is"};
  }

  Result<std::optional<RunRecord>> read(Connection& conn, const std::string& id) const {
    auto r = conn.exec("reading an async run", kGet, {tenant_, id});
    if (!r) return fail(r.error());
    if (r->empty()) return std::optional<RunRecord>();
    const std::optional<RunState> state = parse_state(r->at(0, 2));
    const auto attempts = to_i64(r->at(0, 3));
    const auto max_attempts = to_i64(r->at(0, 4));
    const auto created = to_i64(r->at(0, 5));
    const auto status = to_i64(r->at(0, 8));
    if (!r->at(0, 0) || !r->at(0, 1) || !state || !attempts || !max_attempts || !created || !status ||
        !r->at(0, 9)) {
      return damaged("run " + id);
    }
    return std::optional<RunRecord>(RunRecord{.id = *r->at(0, 0),
                                              .skill_id = *r->at(0, 1),
                                              .state = *state,
                                              .attempts = static_cast<uint32_t>(*attempts),
                                              .max_attempts = static_cast<uint32_t>(*max_attempts),
                                              .created_ms = *created,
                                              .started_ms = to_i64(r->at(0, 6)),
                                              .ended_ms = to_i64(r->at(0, 7)),
                                              .status = static_cast<int>(*status),
                                              .result = *r->at(0, 9)});
  }

  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
};

}  // namespace

std::shared_ptr<state::RunLedger> make_pg_run_ledger(std::shared_ptr<Pool> pool, std::string tenant) {
  return std::make_shared<PgRunLedger>(std::move(pool), std::move(tenant));
}

}  // namespace skillbox::pg
