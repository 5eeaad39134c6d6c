// server/run_request.h — the body of `POST /v1/skills/{id}/run`, checked field by field.
//
//   {"export"?: string, "input"?: any JSON, "limits"?: {"memory_mb"?, "timeout_ms"?, "steps"?},
//    "narrowing"?: {"deny_net"?: bool, "allow_http"?: [allow entry], "fs_mode"?: mode, "deny_env"?: bool}}
//
// Untrusted text: checked with base/json_text.h (depth-limited, no recursion) before any tree is built;
// unknown fields are refused, so a misspelt "limts" cannot silently run with the full limits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "skillbox/policy.h"
#include "skillbox/result.h"

namespace skillbox::server {

/// Deepest nesting accepted in a request body (the input included). A run's input is data, not a
/// stress test of the parser.
inline constexpr size_t kMaxBodyDepth = 64;
/// Longest export name, as `skillbox run --call`.
inline constexpr size_t kMaxExportBytes = 256;
/// Most `narrowing.allow_http` entries: a run narrows to a few prefixes, not to a list to match slowly.
inline constexpr size_t kMaxAllowHttpEntries = 64;

struct RunRequest {
  std::string export_name;          // empty: `default`, then `run`
  std::string input_json = "null";  // JSON text
  std::optional<uint64_t> memory_mb;
  std::optional<uint64_t> timeout_ms;
  std::optional<uint64_t> steps;
  /// `narrowing`: what the run gives up of its manifest's permissions (PolicyNarrowing; `skillbox run
  /// --deny-net, --allow-http, --fs-mode, --deny-env`). Every allow_http entry has been checked.
  PolicyNarrowing narrowing;
};

/// The request in `body`, or what is wrong with it (the field and the expected type, or where the
/// JSON text breaks).
[[nodiscard]] Result<RunRequest> parse_run_request(std::string_view body);

/// The request's limits as overrides, or why not: a value above `effective` (the skill's limits under
/// the tenant's ceilings) is refused, naming the field and the limit, since a request may only lower.
[[nodiscard]] Result<LimitOverrides> run_overrides(const RunRequest& request, const Limits& effective);

/// Where the JSON text `text` stops being JSON ("at line 1, column 5: ..."), or "not valid JSON".
[[nodiscard]] std::string json_problem(std::string_view text);

}  // namespace skillbox::server
