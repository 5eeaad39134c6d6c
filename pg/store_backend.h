// pg/store_backend.h — the store (state::StoreBackend) in PostgreSQL.
//
// Rows per (tenant, skill, key) in store_entries; per-skill totals in store_usage (pg/schema.cpp).
// Every operation is one transaction on a pooled connection. A write first locks its skill's
// store_usage row, then reads, checks the quotas (skillbox/store.h's accounting, state/store_values.h's
// rules) and writes, all in that transaction: writes of one skill are serialized across threads,
// processes and replicas, so increment() and compare_and_set() are atomic and parallel writers cannot
// jointly pass a quota. Reads are single statements and take no lock.
//
// Waits: a session's operations wait for a pooled connection until min(now + busy_timeout,
// wait_until), then fail with StoreErrc::busy; a row lock held elsewhere longer than the pool's
// lock_timeout fails the same way. StoreOpenOptions::stop_requested is not asked yet: a wait of a
// stopped invocation still ends at its deadline, not at once.
#pragma once

#include <memory>
#include <string>

#include "pg/pool.h"
#include "state/store_backend.h"

namespace skillbox::pg {

/// The store of `tenant` in the database of `pool` (which must have this build's schema:
/// open_database()). Tenants share the tables and never see each other's rows.
[[nodiscard]] std::shared_ptr<state::StoreBackend> make_pg_store_backend(std::shared_ptr<Pool> pool,
                                                                         std::string tenant);

}  // namespace skillbox::pg
