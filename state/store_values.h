// state/store_values.h — what the store's atomic operations mean for values, shared by every backend.
//
// store.increment writes the sum as JSON.stringify would spell it, and store.compareAndSet compares as
// JSON values: both rules belong to the store's contract, not to one backend, so they live here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "skillbox/policy.h"
#include "skillbox/result.h"
#include "skillbox/store.h"

namespace skillbox::state {

/// `value` (finite) as ECMAScript's Number::toString spells it, which is what JSON.stringify writes:
/// the shortest digits that read back as the same double; integers below 1e21 in full ("100"), other
/// magnitudes below 1e-6 or from 1e21 up in exponent form ("1e+21", "1.5e-7"); -0 as "0".
[[nodiscard]] std::string json_number_text(double value);

/// The value of `json` when it is exactly one JSON number (whitespace around it allowed) that is
/// finite as a double; nullopt for anything else (another type, invalid text, "1e999").
[[nodiscard]] std::optional<double> json_number_value(std::string_view json);

/// Whether two JSON texts (each valid, base/json_text.h check()) hold equal values: the same type;
/// numbers equal as doubles (1 and 1.0 and 1e0 are equal); strings with the same characters (escapes
/// decoded); arrays element by element; objects with the same member names and equal values, in any
/// order. Texts that are byte-identical are equal without being parsed.
[[nodiscard]] bool json_values_equal(std::string_view a, std::string_view b);

// ---- the rules every backend checks the same way (skillbox/store.h) ----

/// A key (`what` = "key") or a prefix (`what` = "prefix", `allow_empty`): not empty, no NUL, UTF-8, at
/// most StorePolicy::kMaxKeyBytes. An over-long key is quota_exceeded for a write (`write`) and
/// invalid_argument for a lookup (such a key can never exist).
Result<void, StoreError> check_key(std::string_view key, std::string_view what, bool allow_empty, bool write);
/// A value: at most policy.max_value_bytes (quota_exceeded), JSON text no deeper than
/// base::json_text::kMaxDepth (invalid_argument).
Result<void, StoreError> check_value(std::string_view value_json, const StorePolicy& policy);
/// New totals against the policy; a change that does not increase a counter is always allowed.
Result<void, StoreError> check_quota(const StoreUsage& before, const StoreUsage& after,
                                     const StorePolicy& policy);
/// What one entry counts against quota_bytes: key bytes + value bytes + kStoreEntryOverheadBytes.
[[nodiscard]] uint64_t entry_cost(std::string_view key, uint64_t value_bytes);
/// What a stored value is, for messages: "a string", "an object", ...
[[nodiscard]] std::string describe_json(std::string_view json);

}  // namespace skillbox::state
