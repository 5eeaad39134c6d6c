// pg/pool.cpp — Pool.
#include "pg/pool.h"

#include <unistd.h>

#include <utility>

#include "pg/url.h"

namespace skillbox::pg {

std::shared_ptr<Pool> Pool::create(std::string url, PoolOptions options) {
  if (options.max_connections == 0) options.max_connections = 1;
  return std::shared_ptr<Pool>(new Pool(std::move(url), options));
}

Pool::Pool(std::string url, PoolOptions options)
    : url_(std::move(url)), shown_url_(redact_url(url_)), options_(options), owner_(::getpid()) {}

Pool::Lease::Lease(std::shared_ptr<Pool> pool, std::unique_ptr<Connection> conn)
    : pool_(std::move(pool)), conn_(std::move(conn)) {}

Pool::Lease::~Lease() {
  if (pool_ && conn_) pool_->give_back(std::move(conn_));
}

void Pool::Lease::close() {
  if (pool_ && conn_) pool_->give_back(std::move(conn_), /*reusable=*/false);
}

void Pool::give_back(std::unique_ptr<Connection> conn, bool reusable) {
  // A broken connection, or one left inside a transaction, is closed: the next user gets a clean one.
  const bool reuse = reusable && !conn->broken() && !conn->in_transaction() && ::getpid() == owner_;
  std::unique_ptr<Connection> closing;
  {
    std::lock_guard lock(mu_);
    if (reuse) {
      idle_.push_back(std::move(conn));
    } else {
      closing = std::move(conn);
      --open_;
    }
  }
  returned_.notify_one();
  // `closing` is closed here, outside the lock (PQfinish may write to the socket).
}

void Pool::discard_idle() {
  if (::getpid() != owner_) return;  // a forked child's PQfinish would end the parent's sessions
  std::vector<std::unique_ptr<Connection>> closing;
  {
    std::lock_guard lock(mu_);
    closing.swap(idle_);
    open_ -= closing.size();
  }
  returned_.notify_all();
  // `closing` is closed here, outside the lock.
}

PgResult<Pool::Lease> Pool::acquire(std::chrono::steady_clock::time_point deadline) {
  if (::getpid() != owner_)
    return PgError{
        "", "a connection pool to " + shown_url_ + " was used in a forked child; make a new one there", true};
  std::unique_lock lock(mu_);
  for (;;) {
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(shared_from_this(), std::move(conn));
    }
    if (open_ < options_.max_connections) break;
    if (returned_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
        open_ >= options_.max_connections)
      return PgError{"",
                     "all " + std::to_string(options_.max_connections) + " connections to the database " +
                         shown_url_ + " stayed in use until the deadline (the pool's limit)",
                     true, true};
  }
  ++open_;
  lock.unlock();
  auto conn = Connection::open(url_, options_.connect_timeout, options_.lock_timeout);
  if (!conn) {
    lock.lock();
    --open_;
    lock.unlock();
    returned_.notify_one();
    return conn.error();
  }
  return Lease(shared_from_this(), std::make_unique<Connection>(std::move(*conn)));
}

}  // namespace skillbox::pg
