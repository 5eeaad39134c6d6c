// server/database.cpp — see database.h.
#include "server/database.h"

#include "pg/binding_registry.h"
#include "pg/db_backend.h"
#include "pg/pool.h"
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

Database::Database(const DatabaseConfig& config, std::function<void(const std::string&)> log)
    : pool_(make_pool(config)), log_(std::move(log)) {
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
  if (!lease) return one_line(lease.error().message);
  pg::PgResult<int> schema = pg::check_schema(**lease);
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
    if (lock.wait_for(wake_, kProbeInterval, [this]() SKILLBOX_REQUIRES(mu_) { return stopping_; })) return;
  }
}

state::Backends Database::tenant_state(const std::string& tenant, const state::Backends& local) const {
  state::Backends out = local;
  out.store = pg::make_pg_store_backend(pool_, tenant);
  out.workspace = pg::make_pg_workspace_backend(pool_, tenant);
  out.bindings = pg::make_pg_binding_registry(pool_, tenant);
  out.db = pg::make_pg_db_backend(pool_, tenant);
  return out;
}

}  // namespace skillbox::server
