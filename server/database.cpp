// server/database.cpp — see database.h.
#include "server/database.h"

#include "pg/binding_registry.h"
#include "pg/credential_vault.h"
#include "pg/db_backend.h"
#include "pg/pool.h"
#include "pg/run_ledger.h"
#include "pg/schema.h"
#include "pg/store_backend.h"
#include "pg/url.h"
#include "pg/workspace_backend.h"

namespace skillbox::server {

namespace {

/// The pool of `config`: connections wait at most 5 s to be made (a probe gives up sooner than a
/// load balancer's health check), statements at most 5 s for a row lock.
std::shared_ptr<pg::Pool> make_pool(const DatabaseConfig& config) {
  pg::PoolOptions options;
  options.max_connections = config.max_connections;
  options.connect_timeout = std::chrono::seconds(5);
  return pg::Pool::create(config.url, options);
}

/// `text` on one line: libpq's messages hold newlines and tabs ("...failed: Connection refused\n\tIs the
/// server running..."); each run of white space becomes one space, and the ends are trimmed.
std::string one_line(const std::string& text) {
  std::string out;
  bool space = false;
  for (const char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

/// The config's credentials first; for a skill they have none for, the database's vault.
class LayeredVault final : public state::CredentialVault {
 public:
  LayeredVault(std::shared_ptr<state::CredentialVault> first, std::shared_ptr<state::CredentialVault> second)
      : first_(std::move(first)), second_(std::move(second)) {}
  Result<std::optional<SkillCredentials>> find(std::string_view skill_id) const override {
    if (first_) {
      Result<std::optional<SkillCredentials>> found = first_->find(skill_id);
      if (!found || found->has_value()) return found;
    }
    return second_->find(skill_id);
  }

 private:
  const std::shared_ptr<state::CredentialVault> first_;
  const std::shared_ptr<state::CredentialVault> second_;
};

Result<std::unique_ptr<Database>> Database::open(const DatabaseConfig& config,
                                                 std::function<void(const std::string&)> log) {
  std::shared_ptr<const pg::VaultKey> key;
  if (!config.vault_key_file.empty()) {
    Result<std::shared_ptr<const pg::VaultKey>> loaded = pg::VaultKey::load(config.vault_key_file);
    if (!loaded) return Error{"database.vault_key_file: " + loaded.error().message};
    key = std::move(*loaded);
  }
  return std::unique_ptr<Database>(new Database(config, std::move(key), std::move(log)));
}

Database::Database(const DatabaseConfig& config, std::shared_ptr<const pg::VaultKey> key,
                   std::function<void(const std::string&)> log)
    : pool_(make_pool(config)), vault_key_(std::move(key)), log_(std::move(log)) {
  prober_ = std::thread([this] { probe_loop(); });
}

Database::~Database() {
  {
    base::MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  prober_.join();
}

std::optional<std::string> Database::problem() const {
  base::MutexLock lock(mu_);
  return problem_;
}

std::string Database::shown_url() const {
  return pool_->shown_url();
}

std::optional<std::string> Database::probe_once() const {
  const auto deadline = std::chrono::steady_clock::now() + pool_->options().connect_timeout;
  pg::PgResult<pg::Pool::Lease> lease = pool_->acquire(deadline);
  // Every connection busy with runs is load, not a database gone: the runs' own work shows it works.
  if (!lease && lease.error().pool_exhausted) return std::nullopt;
  if (!lease) return one_line(lease.error().message);
  // A probe never waits long for an answer (a half-open connection is then closed as broken).
  auto timeout =
      (*lease)->exec("bounding the probe", "SELECT set_config('statement_timeout', '5000', false)");
  if (!timeout) return one_line(timeout.error().message);
  pg::PgResult<int> schema = pg::check_schema(**lease);
  (void)(*lease)->exec("ending the probe's bound", "SELECT set_config('statement_timeout', '0', false)");
  if (!schema) return one_line(schema.error().message);
  return std::nullopt;
}

void Database::probe_loop() {
  bool first = true;
  for (;;) {
    std::optional<std::string> found = probe_once();
    if (found) pool_->discard_idle();  // after a restart every idle connection is dead
    std::optional<std::string> before;
    {
      base::MutexLock lock(mu_);
      before = problem_;
      problem_ = found;
    }
    if (first || before.has_value() != found.has_value() || (found && before != found)) {
      log_(found ? "not ready: " + *found + " (checking again every second)"
                 : "ready: the database " + pool_->shown_url() + " has schema version " +
                       std::to_string(pg::known_schema_version()));
    }
    first = false;
    base::MutexLock lock(mu_);
    if (lock.wait_for(wake_, kProbeInterval, [this] {
          mu_.assert_held();
          return stopping_;
        }))
      return;
  }
}

Result<void> Database::store_audit(const std::vector<std::string>& lines) const {
  // One parameter, a JSON array of the lines, unpacked by the server: no value is ever SQL.
  std::string array = "[";
  for (const std::string& line : lines) {
    if (array.size() > 1) array += ',';
    array.append(line, 0, line.ends_with('\n') ? line.size() - 1 : line.size());
  }
  array += ']';
  static const std::string kInsert =
      "INSERT INTO audit_log (at, request_id, tenant, line) "
      "SELECT (l->>'time')::timestamptz, l->>'request_id', l->>'tenant', l FROM "
      "jsonb_array_elements($1::jsonb) AS l";
  pg::PgResult<pg::Pool::Lease> conn =
      pool_->acquire(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  if (!conn) return Error{one_line(conn.error().message)};
  auto stored = (*conn)->exec("storing the audit", kInsert, {array});
  if (!stored) return Error{one_line(stored.error().message)};
  return {};
}

state::Backends Database::tenant_state(const std::string& tenant, const state::Backends& local) const {
  state::Backends out = local;
  out.store = pg::make_pg_store_backend(pool_, tenant);
  out.workspace = pg::make_pg_workspace_backend(pool_, tenant);
  out.bindings = pg::make_pg_binding_registry(pool_, tenant);
  out.db = pg::make_pg_db_backend(pool_, tenant);
  if (vault_key_) {
    out.credentials = std::make_shared<LayeredVault>(local.credentials,
                                                     pg::make_pg_credential_vault(pool_, tenant, vault_key_));
  }
  return out;
}

std::shared_ptr<state::RunLedger> Database::run_ledger(const std::string& tenant) const {
  return pg::make_pg_run_ledger(pool_, tenant);
}

}  // namespace skillbox::server
