// pg/schema.h — the skillbox schema in PostgreSQL: versioned migrations compiled into the binary.
//
// Migration N takes a database from schema version N - 1 to N. The table schema_migrations holds one
// row per applied migration (version, name, applied_at); the schema version of a database is its
// highest version there. migrate() applies what is missing, each migration in its own transaction
// together with its schema_migrations row, all under one advisory lock (kMigrationLockKey), so that
// replicas starting at once apply each migration exactly once. A migration never drops or rewrites
// data it cannot carry forward ("never lose a row"). docs/scale-out.md lists the tables.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pg/connection.h"
#include "pg/error.h"
#include "pg/pool.h"

namespace skillbox::pg {

struct Migration {
  int version;
  std::string_view name;  // what it adds, for `skillbox db migrate` and schema_migrations.name
  std::string_view sql;   // constant SQL, no values
};

/// Every migration this build knows, in order (versions 1, 2, ...).
[[nodiscard]] std::span<const Migration> migrations();
/// The schema version this build writes and reads: the last migration's.
[[nodiscard]] int known_schema_version();

/// The advisory lock key migrate() holds ("SkBx" in its low bytes, as the local store's
/// application_id).
inline constexpr int64_t kMigrationLockKey = 0x536B4278'00000001;

struct MigrateReport {
  int from = 0;              // the schema version found (0: none)
  int to = 0;                // the schema version now
  std::vector<int> applied;  // the migrations this call applied (empty: it was up to date)
};

/// Brings the database of `conn` to known_schema_version(). Refuses (and changes nothing) when the
/// database is newer than this build. A failing migration is rolled back whole and named in the error;
/// those before it stay applied.
PgResult<MigrateReport> migrate(Connection& conn);

/// The schema version of the database of `conn` when it is the one this build knows; otherwise an
/// error that says what to do: no schema or an older one -> run `skillbox db migrate --database URL`;
/// a newer one -> upgrade skillbox (this build would misread it), and never migrate it back.
PgResult<int> check_schema(Connection& conn);

/// A pool for `url` whose database has this build's schema (check_schema on a first connection).
/// Errors: the server cannot be reached (`unavailable`), or check_schema's.
PgResult<std::shared_ptr<Pool>> open_database(const std::string& url, PoolOptions options = {});

}  // namespace skillbox::pg
