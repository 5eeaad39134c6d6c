// pg/error.h — what went wrong talking to PostgreSQL, for every function of the pg/ layer.
#pragma once

#include <string>
#include <string_view>

#include "skillbox/result.h"

namespace skillbox::pg {

/// A failure of the pg/ layer. `message` says what was being done and what PostgreSQL or libpq said
/// ("running migration 1 (store): ERROR: ..."); it never contains the password of a URL (pg/url.h).
struct PgError {
  /// The five-character SQLSTATE when the server reported one ("40001"); empty for a client-side
  /// failure (no connection, the pool's wait ran out, a malformed URL).
  std::string sqlstate;
  std::string message;
  /// True when the connection or the pool could not be had at all (the server is unreachable, it
  /// refused the login, every pooled connection stayed busy past the deadline).
  bool unavailable = false;
  /// True when the failure was a wait that ran out: every pooled connection stayed in use until the
  /// caller's deadline (then `unavailable` is set too).
  bool pool_exhausted = false;
};

template <typename T>
using PgResult = Result<T, PgError>;

/// SQLSTATEs the layer acts on (PostgreSQL 15 documentation, Appendix A).
inline constexpr std::string_view kSerializationFailure = "40001";
inline constexpr std::string_view kDeadlockDetected = "40P01";
inline constexpr std::string_view kLockNotAvailable = "55P03";  // lock_timeout ran out
inline constexpr std::string_view kQueryCanceled = "57014";     // statement_timeout ran out
inline constexpr std::string_view kUndefinedTable = "42P01";

/// Whether a transaction that failed with `e` may simply be run again (serialization failure, deadlock).
[[nodiscard]] inline bool is_retryable(const PgError& e) {
  return e.sqlstate == kSerializationFailure || e.sqlstate == kDeadlockDetected;
}

}  // namespace skillbox::pg
