// base/json_schema.h — JSON Schema draft 7: a schema checked and compiled once, then values validated
// against it (the input and output schemas of MCP tools, docs/mcp.md "Argument validation").
//
// The validator is valijson (Debian libvalijson-dev). What it is held to: the draft 7 files of the
// official JSON Schema Test Suite (tests/base/json_schema_suite_test.cpp runs them through this
// wrapper; the files it skips are listed there with the reason). Not supported: "$ref" to anything but
// the schema itself (no remote documents are ever fetched), "$schema" naming another draft, and
// "format" beyond date, time and date-time (other formats are annotations, as draft 7 allows).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "skillbox/result.h"

namespace skillbox::base {

/// Where and why a value does not match a schema.
struct SchemaMismatch {
  /// The JSON Pointer (RFC 6901) of the failing part of the value: "" for the value itself, "/city",
  /// "/items/0".
  std::string instance_path;
  /// The schema keyword that failed ("type", "required", "maximum", ...).
  std::string keyword;
  /// The validator's words for it ("Missing required property 'city'.").
  std::string message;

  /// "at /city: type: Value type not permitted by 'type' constraint." ("at the top level" for "").
  [[nodiscard]] std::string text() const;
};

/// A draft 7 schema, checked against the draft 7 meta-schema and compiled. Cheap to copy (shared,
/// immutable); validate() is thread-safe.
class JsonSchema {
 public:
  /// Checks `schema` (an object or a boolean) and compiles it. Errors say what is wrong and where in the
  /// schema, as a JSON Pointer: "at /properties/n/type: ... (draft 7 meta-schema)", "$ref
  /// \"http://x/y\": only references inside the schema itself are supported".
  static Result<JsonSchema> compile(const nlohmann::json& schema);

  /// Validates `value`. Returns the deepest mismatch (the one that says most), or nothing when `value`
  /// matches. "pattern", "patternProperties" and the date and time formats are matched by RE2
  /// (base/ecma_regex.h), in time linear in each string's length: no pattern backtracks or recurses.
  [[nodiscard]] std::optional<SchemaMismatch> validate(const nlohmann::json& value) const;

 private:
  struct Compiled;
  explicit JsonSchema(std::shared_ptr<const Compiled> compiled) : compiled_(std::move(compiled)) {}
  std::shared_ptr<const Compiled> compiled_;
};

}  // namespace skillbox::base
