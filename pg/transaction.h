// pg/transaction.h — run a function as one transaction, again when PostgreSQL asks for it.
//
// A transaction that fails with a serialization failure (40001) or a deadlock (40P01) changed nothing
// and may succeed if run again; transact() rolls it back and runs the whole body again, after a short
// random backoff, at most kMaxTransactionAttempts times and never past the deadline.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "pg/connection.h"
#include "pg/error.h"
#include "pg/pool.h"

namespace skillbox::pg {

/// Attempts of one transaction, first run included. Conflicts that persist past this are reported.
inline constexpr int kMaxTransactionAttempts = 12;

namespace detail {
/// Backoff after failed attempt `attempt` (1, 2, ...): random in [0, 4 * 2^attempt) ms, the range at
/// most 250 ms ("full jitter"), so that transactions that collided do not collide again in lockstep.
inline std::chrono::milliseconds backoff(int attempt) {
  thread_local std::minstd_rand rng(std::random_device{}());
  const int cap = std::min(250, 4 << std::min(attempt, 8));
  return std::chrono::milliseconds(std::uniform_int_distribution<int>(0, cap - 1)(rng));
}

template <typename T>
bool wants_rollback(const T& value) {
  if constexpr (requires { value.ok(); }) {
    return !value.ok();
  } else {
    return false;
  }
}
}  // namespace detail

/// Runs `body(Connection&)` between BEGIN and COMMIT on a connection of `pool` (`begin` is the BEGIN
/// statement, e.g. "BEGIN ISOLATION LEVEL SERIALIZABLE"). `body` returns PgResult<T>. When its T has
/// ok() and that is false (a refused write, e.g. a StoreResult error), the transaction is rolled back
/// and that T is returned: nothing it did is kept. Retries as the header says; other failures roll back
/// and are returned as they are.
template <typename Body>
auto transact(Pool& pool, std::chrono::steady_clock::time_point deadline, Body&& body,
              const std::string& begin = "BEGIN") -> decltype(body(std::declval<Connection&>())) {
  using R = decltype(body(std::declval<Connection&>()));
  for (int attempt = 1;; ++attempt) {
    auto lease = pool.acquire(deadline);
    if (!lease) return lease.error();
    Connection& conn = **lease;
    auto failed = [&](PgError e) -> std::optional<R> {
      (void)conn.exec_script("rolling back", "ROLLBACK");
      const auto pause = detail::backoff(attempt);
      if (is_retryable(e) && attempt < kMaxTransactionAttempts &&
          std::chrono::steady_clock::now() + pause < deadline) {
        std::this_thread::sleep_for(pause);
        return std::nullopt;  // run it again
      }
      if (is_retryable(e))
        e.message += " (gave up after " + std::to_string(attempt) + " attempts of the transaction)";
      return R(std::move(e));
    };
    if (auto b = conn.exec_script("starting a transaction", begin); !b) {
      if (auto r = failed(b.error())) return std::move(*r);
      continue;
    }
    R r = body(conn);
    if (!r) {
      if (auto out = failed(r.error())) return std::move(*out);
      continue;
    }
    if constexpr (requires { r.value(); }) {
      if (detail::wants_rollback(r.value())) {
        (void)conn.exec_script("rolling back", "ROLLBACK");
        return r;
      }
    }
    if (auto c = conn.exec_script("committing", "COMMIT"); !c) {
      if (auto out = failed(c.error())) return std::move(*out);
      continue;
    }
    return r;
  }
}

}  // namespace skillbox::pg
