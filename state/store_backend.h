// state/store_backend.h — the key-value store of a tenant's skills (`store.*`), behind an interface.
//
// The store capability (capabilities/store/) enforces what a skill may ask and maps errors to replies;
// a StoreBackend does storage. Quotas are the exception that proves the rule: the capability passes the
// skill's StorePolicy, and the backend checks it in the same transaction as the write, because a check
// made before the write would let parallel writers jointly pass a quota.
//
// Every backend keeps the contract of skillbox/store.h's SkillStore (key and value rules, quota
// accounting with kStoreEntryOverheadBytes per entry, error codes, "a failed operation changed
// nothing", "durable when it returns"); tests/state/store_contract_test.cpp checks it for each one.
//
// Local backend (make_local_store_backend): the SQLite file DataLayout::store_database(), one
// connection per session (skillbox/store.h, state/sqlite_store.cpp). A PostgreSQL backend would run
// each operation as one transaction on a pooled connection, with rows keyed by (tenant, skill, key).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/policy.h"
#include "skillbox/store.h"
#include "state/data_layout.h"

namespace skillbox::state {

/// One skill's entries with one StorePolicy, for one invocation (or one command). Each method is one
/// atomic operation with the contract of the SkillStore method of the same name (skillbox/store.h):
/// shapes, errors, quotas. A session is used from one thread at a time; sessions of the same skill in
/// other threads or processes may run at once, and increment() and compare_and_set() are atomic
/// against all of them.
class StoreSession {
 public:
  virtual ~StoreSession() = default;

  /// JSON text of `key`'s value; nullopt when the key does not exist.
  [[nodiscard]] virtual StoreResult<std::optional<std::string>> get(std::string_view key) = 0;
  /// Stores `value_json` under `key` (quotas checked in the write's transaction).
  virtual StoreResult<StoreOk> set(std::string_view key, std::string_view value_json) = 0;
  /// Deletes `key`; whether it existed.
  virtual StoreResult<bool> remove(std::string_view key) = 0;
  /// Keys starting with `prefix`, sorted by UTF-8 bytes.
  [[nodiscard]] virtual StoreResult<std::vector<std::string>> keys(std::string_view prefix) = 0;
  /// Adds `delta` to the number under `key` (0 when missing); the new value.
  virtual StoreResult<double> increment(std::string_view key, double delta) = 0;
  /// Writes `value_json` (nullopt: deletes) when `key` holds `expected_json` (nullopt: is missing);
  /// whether it wrote.
  virtual StoreResult<bool> compare_and_set(std::string_view key,
                                            const std::optional<std::string>& expected_json,
                                            const std::optional<std::string>& value_json) = 0;
};

/// The store of one tenant. open_skill() is safe from many threads at once.
class StoreBackend {
 public:
  virtual ~StoreBackend() = default;

  /// A session over `skill_id`'s entries with `policy`'s quotas. `options` bounds every wait of the
  /// session for a lock held elsewhere (busy_timeout, wait_until, stop_requested: StoreErrc::busy when
  /// one runs out) and says whether missing storage is created. Errors: invalid_argument (the id does not
  /// follow the skill-id rule), corrupt and newer_schema (the storage was left untouched), busy, io_error.
  [[nodiscard]] virtual StoreResult<std::unique_ptr<StoreSession>> open_skill(
      std::string_view skill_id, const StorePolicy& policy, const StoreOpenOptions& options) = 0;
};

/// The store of the data directory `layout`: DataLayout::store_database(), created on the first
/// open_skill() (skillbox/store.h StoreDatabase::open). An empty layout gives a backend whose every
/// open_skill() fails with io_error saying to set a data directory.
[[nodiscard]] std::shared_ptr<StoreBackend> make_local_store_backend(const DataLayout& layout);

}  // namespace skillbox::state
