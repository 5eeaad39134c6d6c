// state/store_values.cpp — JSON numbers and JSON value equality for the store's atomic operations.
#include "state/store_values.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/utf8.h"

namespace skillbox::state {

std::string json_number_text(double value) {
  if (value == 0 || !std::isfinite(value)) return "0";  // -0 too; callers pass finite values
  // The shortest round-trip digits and their exponent, from the scientific form "d.ddde+XX".
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  if (ec != std::errc()) return "0";
  const std::string_view sci(buf, static_cast<size_t>(end - buf));
  const bool negative = sci.front() == '-';
  const size_t e_at = sci.find('e');
  std::string digits;
  for (char c : sci.substr(negative ? 1 : 0, e_at - (negative ? 1 : 0)))
    if (c != '.') digits += c;
  int exponent = 0;
  const std::string_view exp_text = sci.substr(e_at + 1);
  (void)std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                        exp_text.data() + exp_text.size(), exponent);
  // ECMA-262 Number::toString(x): k digits, the decimal point after n of them.
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;
  std::string out = negative ? "-" : "";
  if (k <= n && n <= 21) {
    out += digits;
    out.append(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out += digits.substr(0, static_cast<size_t>(n));
    out += '.';
    out += digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-n), '0');
    out += digits;
  } else {
    out += digits.front();
    if (k > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    out += n - 1 >= 0 ? '+' : '-';
    out += std::to_string(std::abs(n - 1));
  }
  return out;
}

std::optional<double> json_number_value(std::string_view json) {
  if (base::json_text::check(json).kind != base::json_text::Kind::number) return std::nullopt;
  const size_t begin = json.find_first_not_of(" \t\r\n");
  const size_t last = json.find_last_not_of(" \t\r\n");
  const std::string_view number = json.substr(begin, last - begin + 1);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  // A JSON number is a valid from_chars number; out of range ("1e999") is not a finite value.
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool json_values_equal(std::string_view a, std::string_view b) {
  if (a == b) return true;
  // Trees of nlohmann::json: objects are sorted maps (member order does not count) and its operator==
  // compares integers and doubles by value. Stored values are nested at most kMaxDepth levels, which
  // keeps the recursive comparison shallow.
  const nlohmann::json left = base::json_text::parse(a);
  const nlohmann::json right = base::json_text::parse(b);
  if (left.is_discarded() || right.is_discarded()) return false;
  return left == right;
}

namespace {

StoreError store_error(StoreErrc code, std::string message) {
  return StoreError{code, std::move(message)};
}

}  // namespace

// Key and prefix rules. An over-long key is a quota failure for a write (`write` true) and a malformed
// argument for a lookup (such a key can never exist).
Result<void, StoreError> check_key(std::string_view key, std::string_view what, bool allow_empty,
                                   bool write) {
  if (key.empty() && !allow_empty)
    return store_error(StoreErrc::invalid_argument,
                       "store " + std::string(what) + " is empty; use a non-empty string");
  if (key.size() > StorePolicy::kMaxKeyBytes)
    return store_error(write ? StoreErrc::quota_exceeded : StoreErrc::invalid_argument,
                       "store " + std::string(what) + " is " + std::to_string(key.size()) +
                           " bytes (limit is " + std::to_string(StorePolicy::kMaxKeyBytes) +
                           " bytes of UTF-8)");
  // NUL truncation: "a\0b" must not be stored or looked up as "a".
  if (key.find('\0') != std::string_view::npos)
    return store_error(StoreErrc::invalid_argument,
                       "store " + std::string(what) + " contains a NUL character");
  if (!base::utf8::is_valid(key))
    return store_error(StoreErrc::invalid_argument,
                       "store " + std::string(what) + " is not valid UTF-8 (an unpaired surrogate?)");
  return {};
}

Result<void, StoreError> check_value(std::string_view value_json, const StorePolicy& policy) {
  if (value_json.size() > policy.max_value_bytes)
    return store_error(StoreErrc::quota_exceeded, "store value is " + std::to_string(value_json.size()) +
                                                      " bytes of JSON (limit is " +
                                                      std::to_string(policy.max_value_bytes) + " bytes)");
  // JSON text as JSON.stringify writes it, lone-surrogate escapes (\ud800) included; nested no deeper
  // than a tree of it may be (base/json_text.h), so that `skillbox store export`, `import` and
  // `skillbox test` can read back every value the store holds.
  const base::json_text::Checked c = base::json_text::check(value_json, base::json_text::kMaxDepth);
  if (c.kind == base::json_text::Kind::too_deep)
    return store_error(StoreErrc::invalid_argument, "store value is nested deeper than " +
                                                        std::to_string(base::json_text::kMaxDepth) +
                                                        " levels of arrays and objects");
  if (!c.ok()) return store_error(StoreErrc::invalid_argument, "store value is not valid JSON text");
  return {};
}

// Checks new totals against the policy. A change that does not increase a counter is always allowed.
Result<void, StoreError> check_quota(const StoreUsage& before, const StoreUsage& after,
                                     const StorePolicy& policy) {
  if (after.keys > before.keys && after.keys > policy.max_keys)
    return store_error(StoreErrc::quota_exceeded, "store quota exceeded: " + std::to_string(after.keys) +
                                                      " keys (limit is " + std::to_string(policy.max_keys) +
                                                      ", permissions.store.max_keys); nothing was changed");
  if (after.bytes > before.bytes && after.bytes > policy.quota_bytes)
    return store_error(
        StoreErrc::quota_exceeded,
        "store quota exceeded: " + std::to_string(after.bytes) + " bytes (limit is " +
            std::to_string(policy.quota_bytes) + ", permissions.store.quota_bytes; keys + values + " +
            std::to_string(kStoreEntryOverheadBytes) + " bytes per entry); nothing was changed");
  return {};
}

uint64_t entry_cost(std::string_view key, uint64_t value_bytes) {
  return key.size() + value_bytes + kStoreEntryOverheadBytes;
}

// What a stored value is, for messages: "a string", "an object", ...
std::string describe_json(std::string_view json) {
  switch (base::json_text::check(json).kind) {
    case base::json_text::Kind::null:
      return "null";
    case base::json_text::Kind::boolean:
      return "a boolean";
    case base::json_text::Kind::number:
      return "a number beyond the range of a double";
    case base::json_text::Kind::string:
      return "a string";
    case base::json_text::Kind::array:
      return "an array";
    case base::json_text::Kind::object:
      return "an object";
    case base::json_text::Kind::invalid:
    case base::json_text::Kind::too_deep:
      break;
  }
  return "a value that is not JSON";
}

}  // namespace skillbox::state
