// server/database.h — `skillbox serve --database URL`: the PostgreSQL that holds the tenants' state,
// and whether this replica can use it now (docs/scale-out.md "Serving from PostgreSQL").
//
// The server starts whatever the database's state: a replica that cannot reach it, or finds a schema
// it does not know, listens but is not ready (GET /readyz answers 503 and says why, and so does one log
// line), so that a load balancer sends it nothing. A thread probes the database every second: one
// pooled connection, the schema's version. The first probe that passes makes the replica ready; a
// probe that fails makes it unready again (PostgreSQL restarted, the network went) and closes the
// pool's idle connections, which a restarted server no longer knows.
//
// Thread-safety: problem() from any thread; tenant_state() from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/config.h"
#include "skillbox/result.h"
#include "state/backends.h"
#include "state/run_ledger.h"

namespace skillbox::pg {
class Pool;
class VaultKey;
}  // namespace skillbox::pg

namespace skillbox::server {

class Database {
 public:
  /// How often the database is probed.
  static constexpr std::chrono::milliseconds kProbeInterval{1000};

  /// A pool for `config.url` (connecting to nothing yet) and the thread that probes it; the first
  /// probe runs at once. `log` gets one line each time the replica turns ready or unready, from the
  /// probing thread. `config.url` is a postgres:// URL (config_problems checked it). Errors: the vault
  /// key file cannot be used (pg::VaultKey::load says why).
  static Result<std::unique_ptr<Database>> open(const DatabaseConfig& config,
                                                std::function<void(const std::string&)> log);
  /// Stops the probing thread.
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  /// Why the database cannot be used now ("the database postgres://u:***@127.0.0.1:5432/db cannot be
  /// reached: ..."), or std::nullopt when the last probe passed. Before the first probe ends: "not
  /// checked yet".
  [[nodiscard]] std::optional<std::string> problem() const;

  /// `local` (a tenant's backends in its data directory) with the store, the workspace, the skill
  /// bindings and the bundle databases of `tenant` in the database instead; with a vault key, the
  /// credentials are the config's (local.credentials) and, for a skill the config has none for, the
  /// database's. The audit stays local for now (docs/scale-out.md "Not yet").
  [[nodiscard]] state::Backends tenant_state(const std::string& tenant, const state::Backends& local) const;

  /// The async runs of `tenant` (pg/run_ledger.h).
  [[nodiscard]] std::shared_ptr<state::RunLedger> run_ledger(const std::string& tenant) const;

  /// Stores audit lines (JSON objects, one per text, each ending in a newline) as rows of audit_log, in
  /// one statement: all or none (server/audit.h AuditBatchWriter).
  [[nodiscard]] Result<void> store_audit(const std::vector<std::string>& lines) const;

  /// The URL without its password, for messages.
  [[nodiscard]] std::string shown_url() const;

 private:
  Database(const DatabaseConfig& config, std::shared_ptr<const pg::VaultKey> key,
           std::function<void(const std::string&)> log);
  void probe_loop();
  /// One probe: std::nullopt when the database answers with this build's schema.
  [[nodiscard]] std::optional<std::string> probe_once() const;

  const std::shared_ptr<pg::Pool> pool_;
  const std::shared_ptr<const pg::VaultKey> vault_key_;  // null: no vault in the database
  const std::function<void(const std::string&)> log_;
  mutable base::Mutex mu_;
  std::condition_variable wake_;
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::optional<std::string> problem_ SKILLBOX_GUARDED_BY(mu_) = "not checked yet";
  std::thread prober_;
};

}  // namespace skillbox::server
