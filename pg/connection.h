// pg/connection.h — one libpq connection, owned (RAII), running parametrized statements only.
//
// Values never become part of SQL text: every statement with values goes through exec(sql, params),
// which sends them out of band (PQexecParams, text format). exec_script() runs constant SQL only (the
// migrations compiled into the binary) and takes no values at all.
//
// Thread-safety: one thread at a time (libpq's rule for a PGconn). Pool hands a connection to one
// thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pg/error.h"

struct pg_conn;  // libpq's PGconn; only connection.cpp includes libpq-fe.h

namespace skillbox::pg {

/// One parameter of a statement: its text ($1, $2, ... in order), or SQL NULL (nullopt).
using Param = std::optional<std::string_view>;

/// The rows of a statement, every column as text (NULL: nullopt), and how many rows it changed.
struct Rows {
  std::vector<std::vector<std::optional<std::string>>> rows;
  uint64_t affected = 0;  // PQcmdTuples: rows inserted, updated or deleted

  [[nodiscard]] bool empty() const { return rows.empty(); }
  /// Row `r`, column `c`. Precondition: both exist.
  [[nodiscard]] const std::optional<std::string>& at(size_t r, size_t c) const { return rows.at(r).at(c); }
};

/// How long to wait for the server to accept a connection (libpq's connect_timeout, whole seconds,
/// at least 2).
inline constexpr std::chrono::seconds kDefaultConnectTimeout{10};

class Connection {
 public:
  /// Connects to `url` (postgres://user:password@host:port/db?params, libpq's URI syntax) and sets
  /// `lock_timeout` (the longest wait for a row lock held by another transaction: lock_timeout_ms;
  /// then SQLSTATE 55P03). Errors name the URL without its password and say what libpq reported;
  /// `unavailable` is set.
  static PgResult<Connection> open(const std::string& url, std::chrono::seconds connect_timeout,
                                   std::chrono::milliseconds lock_timeout);

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  /// Runs one statement with `params` bound to $1, $2, ... `doing` names the step in errors
  /// ("reading a value"). A failure keeps the server's SQLSTATE.
  PgResult<Rows> exec(std::string_view doing, const std::string& sql,
                      std::initializer_list<Param> params = {});
  PgResult<Rows> exec(std::string_view doing, const std::string& sql, const std::vector<Param>& params);
  /// Runs constant SQL that may hold several statements (no values: PQexec). For migrations.
  PgResult<void> exec_script(std::string_view doing, const std::string& sql);

  /// True once the connection to the server is lost: the pool drops it instead of reusing it.
  [[nodiscard]] bool broken() const;
  /// True while a transaction is open or failed (BEGIN without COMMIT/ROLLBACK): the pool drops such
  /// a connection rather than hand a half-done transaction to the next user.
  [[nodiscard]] bool in_transaction() const;
  /// The URL without its password, for messages.
  [[nodiscard]] const std::string& shown_url() const { return shown_url_; }

 private:
  struct Closer {
    void operator()(pg_conn* c) const;
  };
  Connection(std::unique_ptr<pg_conn, Closer> conn, std::string shown_url, std::string url);
  PgError error(std::string_view doing, const char* sqlstate, std::string_view what) const;

  std::unique_ptr<pg_conn, Closer> conn_;
  std::string shown_url_;
  std::string url_;  // kept to scrub its password from libpq's messages; never shown
};

}  // namespace skillbox::pg
