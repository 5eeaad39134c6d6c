// policy/strict_json.h — parse a small JSON document strictly: duplicate keys and deep nesting are
// errors, and every error names where it happened.
//
// nlohmann::json keeps the last of two equal keys. For a policy document that is a trap: a reviewer
// reads the first `"mode": "read"`, the host obeys a later `"mode": "readwrite"`. This reader rejects
// the document instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::policy {

/// Nesting deeper than this is refused while parsing (a manifest needs 4 levels).
inline constexpr size_t kMaxJsonDepth = 32;

/// Parses `text` (already checked to be UTF-8) as one JSON value. Errors are
/// "<doc>: invalid JSON at line L, column C: ...", "<doc>: <path>: duplicate key; ..." or
/// "<doc>: <path>: nested deeper than 32 levels".
[[nodiscard]] Result<nlohmann::json> parse_strict_json(std::string_view text, std::string_view doc);

/// A key path as shown in errors: `limits.memory_mb`, `permissions.http.allow[2]`. Keys that are not
/// plain identifiers are quoted as JSON strings (ASCII only, shortened).
class KeyPath {
 public:
  [[nodiscard]] KeyPath key(std::string_view name) const;
  [[nodiscard]] KeyPath index(size_t i) const;
  [[nodiscard]] const std::string& str() const { return text_; }
  [[nodiscard]] bool empty() const { return text_.empty(); }

 private:
  std::string text_;
};

/// How much of a foreign string an error shows, in bytes (base::quote cuts the rest to "...").
inline constexpr size_t kMaxShownBytes = 48;

/// Describes a JSON value for "got ..." in an error: strings and numbers as JSON (ASCII only, long
/// strings shortened with "..."), containers as "an object"/"an array".
[[nodiscard]] std::string describe_json(const nlohmann::json& value);

}  // namespace skillbox::policy
