// pg/db_backend.h — OpenHuman bundles' databases in PostgreSQL (state/db_backend.h's contract):
// table bundle_databases, one row per (tenant, skill) holding the SQLite image as bytea.
//
// The lease is a session-level advisory lock on a key hashed from (tenant, skill), taken with
// pg_try_advisory_lock on a pooled connection that the lease keeps until it ends: PostgreSQL releases
// it when that connection closes, so a holder that dies (a replica killed, a network gone) frees the
// database as soon as the server notices, with no expiry to wait for. Each lease granted increments the
// row's `fence` (the fencing token) and remembers it; a read or a write carries it, and one whose fence
// is no longer the row's (the lease was lost and granted again) is refused with IoError, nothing
// written. An image is written back only when it differs from the stored one, in one statement: whole
// or not at all, durable at commit.
//
// Ceiling: an image of more than kMaxImageBytes is refused (IoError "too large"). Waits: a waiter asks
// for the lock every 1 to 20 ms until its stop token; pool waits end at the token's deadline.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "pg/pool.h"
#include "state/db_backend.h"

namespace skillbox::pg {

/// The largest image stored: 256 MiB (far above what an invocation's memory lets it hold, and a
/// quarter of what one bytea value may hold).
inline constexpr uint64_t kMaxImageBytes = uint64_t{256} << 20;

/// The bundle databases of `tenant` in the database of `pool` (which must have this build's schema).
[[nodiscard]] std::shared_ptr<state::DbBackend> make_pg_db_backend(std::shared_ptr<Pool> pool,
                                                                   std::string tenant);

}  // namespace skillbox::pg
