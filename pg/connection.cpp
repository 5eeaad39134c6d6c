// pg/connection.cpp — Connection over libpq.
#include "pg/connection.h"

#include <libpq-fe.h>

#include <algorithm>
#include <utility>

#include "pg/url.h"

namespace skillbox::pg {
namespace {

std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

void Connection::Closer::operator()(pg_conn* c) const {
  PQfinish(c);
}

Connection::Connection(std::unique_ptr<pg_conn, Closer> conn, std::string shown_url, std::string url)
    : conn_(std::move(conn)), shown_url_(std::move(shown_url)), url_(std::move(url)) {}
Connection::Connection(Connection&&) noexcept = default;
Connection& Connection::operator=(Connection&&) noexcept = default;
Connection::~Connection() = default;

PgResult<Connection> Connection::open(const std::string& url, std::chrono::seconds connect_timeout,
                                      std::chrono::milliseconds lock_timeout) {
  const std::string shown = redact_url(url);
  if (!is_postgres_url(url))
    return PgError{"", "the database must be a postgres:// or postgresql:// URL (got " + shown + ")", true};
  const std::string timeout = std::to_string(std::max<int64_t>(2, connect_timeout.count()));
  // The URL last: what it says overrides these defaults (expand_dbname).
  // Keepalives and tcp_user_timeout: a server that vanished (a partition, a frozen host) is noticed
  // within about 30 s instead of TCP's default two hours.
  const char* keywords[] = {"connect_timeout",
                            "application_name",
                            "keepalives",
                            "keepalives_idle",
                            "keepalives_interval",
                            "keepalives_count",
                            "tcp_user_timeout",
                            "dbname",
                            nullptr};
  const char* values[] = {timeout.c_str(), "skillbox", "1", "10", "5", "3", "30000", url.c_str(), nullptr};
  std::unique_ptr<pg_conn, Closer> conn(PQconnectdbParams(keywords, values, 1));
  if (!conn) return PgError{"", "connecting to " + shown + ": out of memory", true};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    return PgError{"",
                   "cannot connect to the database " + shown + ": " +
                       without_password(trimmed(PQerrorMessage(conn.get())), url),
                   true};
  // Server notices (WARNING, NOTICE) would otherwise go to stderr, into a command's output.
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  Connection c(std::move(conn), shown, url);
  // lock_timeout: no statement waits for another transaction's lock longer than this.
  auto set = c.exec("setting lock_timeout", "SELECT set_config('lock_timeout', $1, false)",
                    {std::to_string(lock_timeout.count()) + "ms"});
  if (!set) return set.error();
  // The server's side of the same: a client that vanished (a replica killed with its host, cut off)
  // has its session ended within about 30 s, and with it what the session held (a bundle database's
  // lease). Ordinary users may set these.
  auto keepalive = c.exec("setting keepalives",
                          "SELECT set_config('tcp_keepalives_idle', '10', false), "
                          "set_config('tcp_keepalives_interval', '5', false), "
                          "set_config('tcp_keepalives_count', '3', false), "
                          "set_config('tcp_user_timeout', '30000', false)");
  if (!keepalive) return keepalive.error();
  return c;
}

PgError Connection::error(std::string_view doing, const char* sqlstate, std::string_view what) const {
  PgError e;
  e.sqlstate = sqlstate ? sqlstate : "";
  e.message = std::string(doing) + " in the database " + shown_url_ + ": " +
              without_password(std::string(what), url_);
  e.unavailable = broken();
  return e;
}

PgResult<Rows> Connection::exec(std::string_view doing, const std::string& sql,
                                std::initializer_list<Param> params) {
  return exec(doing, sql, std::vector<Param>(params));
}

PgResult<Rows> Connection::exec(std::string_view doing, const std::string& sql,
                                const std::vector<Param>& params) {
  // Text parameters must end in NUL for libpq: copies, since a string_view need not.
  std::vector<std::string> texts;
  texts.reserve(params.size());
  std::vector<const char*> values(params.size(), nullptr);
  std::vector<int> lengths(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i]) continue;
    texts.emplace_back(*params[i]);
    values[i] = texts.back().c_str();
    lengths[i] = static_cast<int>(texts.back().size());
  }
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(
      PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                   lengths.data(), nullptr, 0),
      PQclear);
  if (!res) return error(doing, nullptr, trimmed(PQerrorMessage(conn_.get())));
  const ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    return error(doing, PQresultErrorField(res.get(), PG_DIAG_SQLSTATE),
                 trimmed(PQresultErrorMessage(res.get())));
  Rows out;
  const int nrows = PQntuples(res.get());
  const int ncols = PQnfields(res.get());
  out.rows.reserve(static_cast<size_t>(nrows));
  for (int r = 0; r < nrows; ++r) {
    auto& row = out.rows.emplace_back();
    row.reserve(static_cast<size_t>(ncols));
    for (int c = 0; c < ncols; ++c) {
      if (PQgetisnull(res.get(), r, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(
            std::string(PQgetvalue(res.get(), r, c), static_cast<size_t>(PQgetlength(res.get(), r, c))));
      }
    }
  }
  const char* affected = PQcmdTuples(res.get());
  if (affected && *affected) out.affected = std::stoull(affected);
  return out;
}

PgResult<void> Connection::exec_script(std::string_view doing, const std::string& sql) {
  std::unique_ptr<PGresult, void (*)(PGresult*)> res(PQexec(conn_.get(), sql.c_str()), PQclear);
  if (!res) return error(doing, nullptr, trimmed(PQerrorMessage(conn_.get())));
  const ExecStatusType status = PQresultStatus(res.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    return error(doing, PQresultErrorField(res.get(), PG_DIAG_SQLSTATE),
                 trimmed(PQresultErrorMessage(res.get())));
  return {};
}

bool Connection::broken() const {
  return !conn_ || PQstatus(conn_.get()) != CONNECTION_OK;
}

bool Connection::in_transaction() const {
  return conn_ && PQtransactionStatus(conn_.get()) != PQTRANS_IDLE;
}

}  // namespace skillbox::pg
