// pg/store_backend.cpp — the PostgreSQL StoreBackend.
#include "pg/store_backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/skill_id.h"
#include "pg/transaction.h"
#include "state/store_values.h"

namespace skillbox::pg {
namespace {

using state::check_key;
using state::check_quota;
using state::check_value;
using state::entry_cost;

const std::string kLockUsage =
    "INSERT INTO store_usage (tenant, skill) VALUES ($1, $2) ON CONFLICT (tenant, skill) "
    "DO UPDATE SET keys = store_usage.keys RETURNING keys, bytes";
const std::string kValue = "SELECT value FROM store_entries WHERE tenant = $1 AND skill = $2 AND key = $3";
const std::string kValueBytes =
    "SELECT octet_length(value) FROM store_entries WHERE tenant = $1 AND skill = $2 AND key = $3";
const std::string kUpsert =
    "INSERT INTO store_entries (tenant, skill, key, value) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (tenant, skill, key) DO UPDATE SET value = EXCLUDED.value";
const std::string kDelete =
    "DELETE FROM store_entries WHERE tenant = $1 AND skill = $2 AND key = $3 RETURNING octet_length(value)";
const std::string kAddUsage =
    "UPDATE store_usage SET keys = keys + $3, bytes = bytes + $4 WHERE tenant = $1 AND skill = $2";
const std::string kKeys =
    "SELECT key FROM store_entries WHERE tenant = $1 AND skill = $2 AND starts_with(key, $3) ORDER BY key";

StoreError store_error(StoreErrc code, std::string message) {
  return StoreError{code, std::move(message)};
}

// A failure of PostgreSQL as the store reports it: waits that ran out are `busy`, the rest io_error.
StoreError from_pg(const PgError& e) {
  const bool waited =
      e.sqlstate == kLockNotAvailable || e.sqlstate == kQueryCanceled || e.pool_exhausted || is_retryable(e);
  return store_error(waited ? StoreErrc::busy : StoreErrc::io_error, "store: " + e.message);
}

template <typename R>
struct Unwrap;
template <typename T>
struct Unwrap<PgResult<T>> {
  using type = T;
};

uint64_t to_u64(const std::optional<std::string>& text) {
  return text ? std::stoull(*text) : 0;
}

class PgStoreSession final : public state::StoreSession {
 public:
  PgStoreSession(std::shared_ptr<Pool> pool, std::string tenant, std::string skill, StorePolicy policy,
                 StoreOpenOptions options)
      : pool_(std::move(pool)),
        tenant_(std::move(tenant)),
        skill_(std::move(skill)),
        policy_(policy),
        options_(std::move(options)) {}

  StoreResult<std::optional<std::string>> get(std::string_view key) override {
    if (auto ok = check_key(key, "key", false, false); !ok) return ok.error();
    auto lease = pool_->acquire(deadline());
    if (!lease) return from_pg(lease.error());
    auto rows = (*lease)->exec("reading a value", kValue, {tenant_, skill_, key});
    if (!rows) return from_pg(rows.error());
    if (rows->empty()) return std::optional<std::string>();
    std::string value = rows->at(0, 0).value_or("");
    // Never trust storage: what is read back must be JSON before a binding parses it.
    if (!base::json_text::check(value, base::json_text::kMaxDepth).ok())
      return store_error(StoreErrc::corrupt, "store: the value of a key in the database is not JSON text");
    return std::optional<std::string>(std::move(value));
  }

  StoreResult<StoreOk> set(std::string_view key, std::string_view value_json) override {
    if (auto ok = check_key(key, "key", false, true); !ok) return ok.error();
    if (auto ok = check_value(value_json, policy_); !ok) return ok.error();
    return write([&](Connection& c, const StoreUsage& usage) -> PgResult<StoreResult<StoreOk>> {
      auto old = c.exec("reading a value's size", kValueBytes, {tenant_, skill_, key});
      if (!old) return old.error();
      if (old->empty()) return write_checked(c, usage, key, value_json, std::nullopt);
      return write_checked(c, usage, key, value_json, to_u64(old->at(0, 0)));
    });
  }

  StoreResult<bool> remove(std::string_view key) override {
    if (auto ok = check_key(key, "key", false, false); !ok) return ok.error();
    return write([&](Connection& c, const StoreUsage&) -> PgResult<StoreResult<bool>> {
      auto gone = c.exec("deleting a value", kDelete, {tenant_, skill_, key});
      if (!gone) return gone.error();
      if (gone->empty()) return StoreResult<bool>(false);
      const uint64_t bytes = key.size() + to_u64(gone->at(0, 0));
      if (auto r = add_usage(c, -1, -static_cast<int64_t>(bytes)); !r) return r.error();
      return StoreResult<bool>(true);
    });
  }

  StoreResult<std::vector<std::string>> keys(std::string_view prefix) override {
    if (auto ok = check_key(prefix, "prefix", true, false); !ok) return ok.error();
    auto lease = pool_->acquire(deadline());
    if (!lease) return from_pg(lease.error());
    auto rows = (*lease)->exec("listing keys", kKeys, {tenant_, skill_, prefix});
    if (!rows) return from_pg(rows.error());
    std::vector<std::string> out;
    out.reserve(rows->rows.size());
    for (auto& row : rows->rows) out.push_back(row.at(0).value_or(""));
    return out;
  }

  StoreResult<double> increment(std::string_view key, double delta) override {
    if (auto ok = check_key(key, "key", false, true); !ok) return ok.error();
    if (!std::isfinite(delta))
      return store_error(StoreErrc::invalid_argument, "store.increment: delta must be a finite number");
    return write([&](Connection& c, const StoreUsage& usage) -> PgResult<StoreResult<double>> {
      auto old = c.exec("reading a value", kValue, {tenant_, skill_, key});
      if (!old) return old.error();
      double sum = delta;
      std::optional<uint64_t> old_bytes;
      if (!old->empty()) {
        const std::string& text = *old->at(0, 0);
        old_bytes = text.size();
        const std::optional<double> current = state::json_number_value(text);
        if (!current)
          return StoreResult<double>(store_error(
              StoreErrc::invalid_argument,
              "store.increment: key \"" + base::escape_text_capped(key, 160, "...") + "\" holds " +
                  state::describe_json(text) + ", not a number; nothing was changed"));
        sum = *current + delta;
      }
      if (!std::isfinite(sum))
        return StoreResult<double>(
            store_error(StoreErrc::invalid_argument,
                        "store.increment: the sum is beyond the range of a double; nothing was changed"));
      const std::string text = state::json_number_text(sum);
      if (auto ok = check_value(text, policy_); !ok) return StoreResult<double>(ok.error());
      auto wrote = write_checked(c, usage, key, text, old_bytes);
      if (!wrote) return wrote.error();
      if (!*wrote) return StoreResult<double>(wrote->error());
      return StoreResult<double>(sum == 0 ? 0.0 : sum);  // -0 is stored as "0": return what get() reads
    });
  }

  StoreResult<bool> compare_and_set(std::string_view key, const std::optional<std::string>& expected_json,
                                    const std::optional<std::string>& value_json) override {
    if (auto ok = check_key(key, "key", false, value_json.has_value()); !ok) return ok.error();
    if (expected_json && !base::json_text::check(*expected_json).ok())
      return store_error(StoreErrc::invalid_argument, "store expected value is not valid JSON text");
    if (value_json) {
      if (auto ok = check_value(*value_json, policy_); !ok) return ok.error();
    }
    return write([&](Connection& c, const StoreUsage& usage) -> PgResult<StoreResult<bool>> {
      auto old = c.exec("reading a value", kValue, {tenant_, skill_, key});
      if (!old) return old.error();
      const bool exists = !old->empty();
      const bool matches =
          expected_json ? exists && state::json_values_equal(*old->at(0, 0), *expected_json) : !exists;
      if (!matches) return StoreResult<bool>(false);
      const std::optional<uint64_t> old_bytes =
          exists ? std::optional<uint64_t>(old->at(0, 0)->size()) : std::nullopt;
      if (value_json) {
        auto wrote = write_checked(c, usage, key, *value_json, old_bytes);
        if (!wrote) return wrote.error();
        if (!*wrote) return StoreResult<bool>(wrote->error());
      } else if (exists) {
        if (auto r = c.exec("deleting a value", kDelete, {tenant_, skill_, key}); !r) return r.error();
        if (auto r = add_usage(c, -1, -static_cast<int64_t>(key.size() + *old_bytes)); !r) return r.error();
      }
      return StoreResult<bool>(true);
    });
  }

 private:
  std::chrono::steady_clock::time_point deadline() const {
    return std::min(std::chrono::steady_clock::now() + options_.busy_timeout, options_.wait_until);
  }

  // One write transaction: locks the skill's usage row (creating it), then runs `body` with the
  // current totals. A StoreResult error from `body` rolls the transaction back.
  template <typename Body>
  auto write(Body&& body) ->
      typename Unwrap<std::invoke_result_t<Body&, Connection&, const StoreUsage&>>::type {
    using Inner = typename Unwrap<std::invoke_result_t<Body&, Connection&, const StoreUsage&>>::type;
    auto r = transact(*pool_, deadline(), [&](Connection& c) -> decltype(body(c, StoreUsage{})) {
      auto row = c.exec("locking the skill's usage row", kLockUsage, {tenant_, skill_});
      if (!row) return row.error();
      StoreUsage usage;
      usage.keys = to_u64(row->at(0, 0));
      usage.bytes = to_u64(row->at(0, 1)) + usage.keys * kStoreEntryOverheadBytes;
      return body(c, usage);
    });
    if (!r) return Inner(from_pg(r.error()));
    return std::move(*r);
  }

  // Writes `value_json` under `key` after checking the quotas against `before` (old value, if any,
  // no longer counted), and updates the totals.
  PgResult<StoreResult<StoreOk>> write_checked(Connection& c, const StoreUsage& before, std::string_view key,
                                               std::string_view value_json,
                                               std::optional<uint64_t> old_value_bytes) {
    StoreUsage after = before;
    int64_t added_keys = 0;
    int64_t added_bytes = static_cast<int64_t>(key.size() + value_json.size());
    if (old_value_bytes) {
      after.bytes -= std::min(after.bytes, entry_cost(key, *old_value_bytes));
      added_bytes -= static_cast<int64_t>(key.size() + *old_value_bytes);
    } else {
      after.keys += 1;
      added_keys = 1;
    }
    after.bytes += entry_cost(key, value_json.size());
    if (auto ok = check_quota(before, after, policy_); !ok) return StoreResult<StoreOk>(ok.error());
    if (auto r = c.exec("writing a value", kUpsert, {tenant_, skill_, key, value_json}); !r) return r.error();
    if (auto r = add_usage(c, added_keys, added_bytes); !r) return r.error();
    return StoreResult<StoreOk>(StoreOk{});
  }

  PgResult<void> add_usage(Connection& c, int64_t keys, int64_t bytes) {
    auto r = c.exec("updating the skill's usage", kAddUsage,
                    {tenant_, skill_, std::to_string(keys), std::to_string(bytes)});
    if (!r) return r.error();
    return {};
  }

  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
  const std::string skill_;
  const StorePolicy policy_;
  const StoreOpenOptions options_;
};

class PgStoreBackend final : public state::StoreBackend {
 public:
  PgStoreBackend(std::shared_ptr<Pool> pool, std::string tenant)
      : pool_(std::move(pool)), tenant_(std::move(tenant)) {}

  StoreResult<std::unique_ptr<state::StoreSession>> open_skill(std::string_view skill_id,
                                                               const StorePolicy& policy,
                                                               const StoreOpenOptions& options) override {
    if (!base::is_valid_skill_id(skill_id))
      return store_error(StoreErrc::invalid_argument, "skill id must be " + std::string(base::kSkillIdRule));
    return std::unique_ptr<state::StoreSession>(
        std::make_unique<PgStoreSession>(pool_, tenant_, std::string(skill_id), policy, options));
  }

 private:
  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
};

}  // namespace

std::shared_ptr<state::StoreBackend> make_pg_store_backend(std::shared_ptr<Pool> pool, std::string tenant) {
  return std::make_shared<PgStoreBackend>(std::move(pool), std::move(tenant));
}

}  // namespace skillbox::pg
