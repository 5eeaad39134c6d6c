// pg/pool.h — a bounded pool of connections to one database.
//
// At most `max_connections` are open at once; a caller that finds them all in use waits for one to come
// back, never past its deadline. A connection comes back when its Lease ends, and is closed rather than
// reused when it broke or still has a transaction open. Connections open lazily, on demand.
//
// Thread-safety: acquire() from any thread. A pool belongs to the process that made it: a forked child
// must make its own (a child using its parent's sockets would garble both sides' conversations), and
// acquire() in a child refuses.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pg/connection.h"
#include "pg/error.h"

namespace skillbox::pg {

struct PoolOptions {
  /// Most connections open at once. PostgreSQL's default max_connections is 100 for every replica
  /// together, so a replica keeps a small share.
  size_t max_connections = 8;
  std::chrono::seconds connect_timeout = kDefaultConnectTimeout;
  /// Longest wait of a statement for a lock another transaction holds (Connection::open).
  std::chrono::milliseconds lock_timeout{5000};
};

class Pool : public std::enable_shared_from_this<Pool> {
 public:
  /// A pool for `url`; connects to nothing yet.
  static std::shared_ptr<Pool> create(std::string url, PoolOptions options = {});

  /// One connection, for one thread, until the Lease ends.
  class Lease {
   public:
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    /// Closes the connection now instead of giving it back: for one whose session state cannot be
    /// trusted (an advisory lock that would not unlock). The Lease is empty afterwards.
    void close();
    Connection& operator*() { return *conn_; }
    Connection* operator->() { return conn_.get(); }

   private:
    friend class Pool;
    Lease(std::shared_ptr<Pool> pool, std::unique_ptr<Connection> conn);
    std::shared_ptr<Pool> pool_;
    std::unique_ptr<Connection> conn_;
  };

  /// A connection: an idle one, a new one when fewer than max_connections are open, else the first
  /// returned before `deadline`. Errors (`unavailable` set): the server cannot be reached or refused
  /// the login; every connection stayed in use until the deadline (the message names the pool size);
  /// called in a forked child of the process that made the pool.
  PgResult<Lease> acquire(std::chrono::steady_clock::time_point deadline);

  /// Closes every idle connection: after the server restarted, each of them is dead, and would fail
  /// its next user once. The next acquire() opens a fresh one. Connections in use are left alone (their
  /// users find out, and give them back broken).
  void discard_idle();

  /// The URL without its password.
  [[nodiscard]] const std::string& shown_url() const { return shown_url_; }
  [[nodiscard]] const PoolOptions& options() const { return options_; }

 private:
  Pool(std::string url, PoolOptions options);
  void give_back(std::unique_ptr<Connection> conn, bool reusable = true);

  const std::string url_;
  const std::string shown_url_;
  const PoolOptions options_;
  const pid_t owner_;
  std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
  size_t open_ = 0;                                // guarded by mu_: idle + leased + being opened
};

}  // namespace skillbox::pg
