// pg/schema.cpp — the migrations, migrate() and the check at open.
#include "pg/schema.h"

#include <array>
#include <chrono>
#include <string>
#include <utility>

namespace skillbox::pg {
namespace {

// Append only: a released migration is never edited (databases already ran it). A new one gets the
// next version, and docs/scale-out.md's schema section says what it added.
constexpr std::array kMigrations = {
    Migration{1, "store: entries and per-skill usage", R"sql(
-- One row per (tenant, skill, key). COLLATE "C": keys sort and compare by their UTF-8 bytes, as the
-- local store's do.
CREATE TABLE store_entries (
  tenant text NOT NULL,
  skill  text NOT NULL,
  key    text COLLATE "C" NOT NULL,
  value  text NOT NULL,  -- JSON text, exactly as the skill stored it
  PRIMARY KEY (tenant, skill, key)
);
-- Per-skill totals for the quotas. Every write of a skill locks its row first, so writes of one skill
-- are serialized and parallel writers cannot jointly pass a quota. bytes = key bytes + value bytes;
-- the per-entry overhead (kStoreEntryOverheadBytes) is added in C++, as locally.
CREATE TABLE store_usage (
  tenant text NOT NULL,
  skill  text NOT NULL,
  keys   bigint NOT NULL DEFAULT 0 CHECK (keys >= 0),
  bytes  bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
  PRIMARY KEY (tenant, skill)
);
)sql"},
    Migration{2, "skill bindings: which folder owns a skill id", R"sql(
-- One row per (tenant, id): the canonical absolute path of the folder that owns the id
-- (state/binding_registry.h). Ids sort by bytes, as the local registry lists them.
CREATE TABLE skill_bindings (
  tenant   text NOT NULL,
  id       text COLLATE "C" NOT NULL,
  dir      text NOT NULL,
  bound_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
);
)sql"},
    Migration{3, "workspace: entries and per-skill usage", R"sql(
-- One row per file or directory of a skill's workspace (state/workspace_backend.h). Paths are bytea:
-- they compare and sort by their bytes, as the local backend's names do. An entry's parent is always
-- a directory row ('.' for the workspace's root, which has no row).
CREATE TABLE workspace_entries (
  tenant   text NOT NULL,
  skill    text NOT NULL,
  path     bytea NOT NULL,   -- '/'-separated, normalized (is_workspace_path)
  parent   bytea NOT NULL,   -- path without its last component, or '.'
  name     bytea NOT NULL,   -- the last component
  is_dir   boolean NOT NULL,
  data     bytea,            -- a file's content; NULL for a directory
  size     bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
  mtime_ms double precision NOT NULL,
  PRIMARY KEY (tenant, skill, path),
  CHECK (is_dir = (data IS NULL))
);
CREATE INDEX workspace_entries_by_parent ON workspace_entries (tenant, skill, parent, name);
-- Per-skill totals for the quotas: bytes of files, and entries. Every mutation of a skill's workspace
-- locks its row first (as store_usage), so mutations are serialized and quota checks exact.
CREATE TABLE workspace_usage (
  tenant  text NOT NULL,
  skill   text NOT NULL,
  bytes   bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0),
  entries bigint NOT NULL DEFAULT 0 CHECK (entries >= 0),
  PRIMARY KEY (tenant, skill)
);
)sql"},
    Migration{4, "bundle databases: images and their fencing tokens", R"sql(
-- One row per OpenHuman bundle's database (state/db_backend.h): the SQLite image as bytes ('' for no
-- database yet). The lease is a session advisory lock (released when its connection ends, also when
-- the holder dies); fence counts the leases granted, and a write must carry the fence of its lease.
CREATE TABLE bundle_databases (
  tenant     text NOT NULL,
  skill      text NOT NULL,
  image      bytea NOT NULL DEFAULT '\x'::bytea,
  size       bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
  fence      bigint NOT NULL DEFAULT 0 CHECK (fence >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, skill)
);
)sql"},
    Migration{5, "credentials: sealed with the operator's vault key", R"sql(
-- One row per (tenant, skill): the skill's credentials document sealed with XChaCha20-Poly1305 under
-- the operator's vault key (pg/credential_vault.h), which never reaches the database. key_id names the
-- key that sealed the row (not secret); tenant and skill are its associated data.
CREATE TABLE credentials (
  tenant     text NOT NULL,
  skill      text NOT NULL,
  key_id     text NOT NULL,
  nonce      bytea NOT NULL,
  sealed     bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, skill)
);
)sql"},
    Migration{6, "audit: one row per request of skillbox serve", R"sql(
-- The request audit (docs/server.md "Audit") when a server's audit = "database": the JSON line as the
-- file sink writes it, with its time, request id and tenant apart for queries. Rows are only ever
-- inserted.
CREATE TABLE audit_log (
  id         bigserial PRIMARY KEY,
  at         timestamptz NOT NULL,
  request_id text NOT NULL,
  tenant     text,             -- NULL: the request named no tenant (no or a wrong key)
  line       jsonb NOT NULL
);
CREATE INDEX audit_log_by_tenant ON audit_log (tenant, at);
)sql"},
    Migration{7, "async runs: the queue, leases and results", R"sql(
-- Async runs of skillbox serve (state/run_ledger.h): one row per run. A claim takes a due row with
-- FOR UPDATE SKIP LOCKED and raises its fence; renew and finish name the fence they hold. Times are
-- the database server's clock, so that replicas with drifting clocks agree on every lease.
CREATE TABLE async_runs (
  id              text PRIMARY KEY,
  tenant          text NOT NULL,
  skill           text NOT NULL,
  body            text NOT NULL,
  idempotency_key text,
  state           text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'dead')),
  attempts        integer NOT NULL DEFAULT 0,
  max_attempts    integer NOT NULL CHECK (max_attempts >= 1),
  fence           bigint NOT NULL DEFAULT 0,
  owner           text,
  lease_until     timestamptz,
  not_before      timestamptz NOT NULL DEFAULT now(),
  created_at      timestamptz NOT NULL DEFAULT now(),
  started_at      timestamptz,
  ended_at        timestamptz,
  status          integer NOT NULL DEFAULT 0,
  result          text NOT NULL DEFAULT '',
  UNIQUE (tenant, idempotency_key)
);
CREATE INDEX async_runs_due ON async_runs (tenant, not_before) WHERE state IN ('queued', 'running');
)sql"},
};

const std::string kCreateMigrationsTable =
    "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
    "applied_at timestamptz NOT NULL DEFAULT now())";

// The schema version of the database: 0 when it has no schema_migrations table.
PgResult<int> schema_version(Connection& conn) {
  auto exists = conn.exec("looking for the schema_migrations table",
                          "SELECT to_regclass('schema_migrations') IS NOT NULL");
  if (!exists) return exists.error();
  if (exists->at(0, 0) != "t") return 0;
  auto v = conn.exec("reading the schema version", "SELECT coalesce(max(version), 0) FROM schema_migrations");
  if (!v) return v.error();
  return std::stoi(v->at(0, 0).value_or("0"));
}

PgError newer_schema_error(const Connection& conn, int found) {
  return PgError{"",
                 "the database " + conn.shown_url() + " has skillbox schema version " +
                     std::to_string(found) + ", newer than this skillbox knows (" +
                     std::to_string(known_schema_version()) +
                     "): a newer skillbox migrated it. Run that version (or newer) of skillbox against it; "
                     "this one would misread it, and a schema is never migrated back",
                 false};
}

// Releases the session's advisory lock on every path out of migrate().
class MigrationLock {
 public:
  explicit MigrationLock(Connection& conn) : conn_(conn) {}
  PgResult<void> take() {
    auto r = conn_.exec("waiting for the migration lock (another replica may be migrating)",
                        "SELECT pg_advisory_lock($1)", {std::to_string(kMigrationLockKey)});
    if (!r) return r.error();
    held_ = true;
    return {};
  }
  ~MigrationLock() {
    if (held_ && !conn_.broken())
      (void)conn_.exec("releasing the migration lock", "SELECT pg_advisory_unlock($1)",
                       {std::to_string(kMigrationLockKey)});
  }
  MigrationLock(const MigrationLock&) = delete;
  MigrationLock& operator=(const MigrationLock&) = delete;

 private:
  Connection& conn_;
  bool held_ = false;
};

}  // namespace

std::span<const Migration> migrations() {
  return kMigrations;
}

int known_schema_version() {
  return kMigrations.back().version;
}

PgResult<MigrateReport> migrate(Connection& conn) {
  MigrationLock lock(conn);
  // lock_timeout does not apply to advisory locks taken by a function; the wait is as long as another
  // replica's migration takes, which is what we want.
  if (auto r = lock.take(); !r) return r.error();
  if (auto r = conn.exec("creating the schema_migrations table", kCreateMigrationsTable); !r)
    return r.error();
  auto found = schema_version(conn);
  if (!found) return found.error();
  MigrateReport report;
  report.from = *found;
  report.to = *found;
  if (*found > known_schema_version()) return newer_schema_error(conn, *found);
  for (const Migration& m : kMigrations) {
    if (m.version <= *found) continue;
    const std::string doing =
        "applying migration " + std::to_string(m.version) + " (" + std::string(m.name) + ")";
    auto step = [&]() -> PgResult<void> {
      if (auto r = conn.exec_script(doing, "BEGIN"); !r) return r;
      if (auto r = conn.exec_script(doing, std::string(m.sql)); !r) return r;
      if (auto r = conn.exec(doing, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                             {std::to_string(m.version), m.name});
          !r)
        return r.error();
      return conn.exec_script(doing, "COMMIT");
    };
    if (auto r = step(); !r) {
      (void)conn.exec_script("rolling back", "ROLLBACK");
      return r.error();
    }
    report.applied.push_back(m.version);
    report.to = m.version;
  }
  return report;
}

PgResult<int> check_schema(Connection& conn) {
  auto found = schema_version(conn);
  if (!found) return found.error();
  if (*found > known_schema_version()) return newer_schema_error(conn, *found);
  if (*found < known_schema_version())
    return PgError{"",
                   "the database " + conn.shown_url() +
                       (*found == 0 ? std::string(" has no skillbox schema yet")
                                    : " has skillbox schema version " + std::to_string(*found) +
                                          ", older than " + std::to_string(known_schema_version())) +
                       ": run `skillbox db migrate --database URL` first (docs/scale-out.md)",
                   false};
  return *found;
}

PgResult<std::shared_ptr<Pool>> open_database(const std::string& url, PoolOptions options) {
  auto pool = Pool::create(url, options);
  auto lease =
      pool->acquire(std::chrono::steady_clock::now() + options.connect_timeout + std::chrono::seconds(1));
  if (!lease) return lease.error();
  if (auto v = check_schema(**lease); !v) return v.error();
  return pool;
}

}  // namespace skillbox::pg
