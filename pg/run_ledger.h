// pg/run_ledger.h — async runs (state::RunLedger) in PostgreSQL: table async_runs (migration 7).
//
// Every operation is one statement on a pooled connection, so that a replica that dies mid-way leaves
// nothing half done. A claim picks the oldest due row of the tenant with FOR UPDATE SKIP LOCKED (claims
// of other replicas skip the rows it holds instead of waiting for them) and, in the same statement,
// raises its fence and sets its lease; a row claimed past its max_attempts is ended as dead instead.
// Leases and every time are the database server's clock (now()), never a replica's.
// Waits: each operation waits at most 5 s for a pooled connection, then fails saying so.
#pragma once

#include <memory>
#include <string>

#include "pg/pool.h"
#include "state/run_ledger.h"

namespace skillbox::pg {

/// The async runs of `tenant` in the database of `pool` (which must have this build's schema).
/// Tenants share the table and never see each other's rows, ids included.
[[nodiscard]] std::shared_ptr<state::RunLedger> make_pg_run_ledger(std::shared_ptr<Pool> pool,
                                                                   std::string tenant);

}  // namespace skillbox::pg
