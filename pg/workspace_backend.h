// pg/workspace_backend.h — a skill's workspace (state::WorkspaceBackend) in PostgreSQL.
//
// One row per entry in workspace_entries (pg/schema.cpp migration 3): a file's bytes in the row, a
// directory a row without data; per-skill totals (bytes of files, entries) in workspace_usage. Paths
// are bytea, so they compare and sort by their bytes as the local backend's names do, whatever they
// hold. Every mutation is one transaction that first locks its skill's workspace_usage row: mutations
// of one workspace are serialized across threads, processes and replicas, their quota checks see
// exact totals, and each is atomic (a write or a rename is all or nothing, durable at COMMIT).
// Readers run in one REPEATABLE READ snapshot per operation, so they see every file whole.
//
// The invariant every mutation keeps: an entry's parent exists and is a directory. So one lookup of
// the parent stands for the whole chain; the ancestors are walked only to say why a path is missing
// (a component that is a file: not_a_directory).
//
// Waits: a mutation waits for the row lock at most the pool's lock_timeout, then fails `busy`
// (value WorkspaceBackend::kLockWaitMs). The stop token is asked before each operation: a stopped
// session changes, reads and lists nothing. There are no symlinks, special files or temporaries.
#pragma once

#include <memory>
#include <string>

#include "pg/pool.h"
#include "state/workspace_backend.h"

namespace skillbox::pg {

/// The workspaces of `tenant` in the database of `pool` (which must have this build's schema:
/// open_database()). Tenants share the tables and never see each other's rows.
[[nodiscard]] std::shared_ptr<state::WorkspaceBackend> make_pg_workspace_backend(std::shared_ptr<Pool> pool,
                                                                                 std::string tenant);

}  // namespace skillbox::pg
