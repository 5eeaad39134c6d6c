// server/run_request.cpp — see run_request.h.
#include "server/run_request.h"

#include <nlohmann/json.hpp>

#include "base/escape.h"
#include "base/json_text.h"

namespace skillbox::server {
namespace {

using json = nlohmann::json;

/// A positive integer field of "limits", or a problem naming it.
Result<std::optional<uint64_t>> limit_field(const json& limits, const char* name) {
  const auto it = limits.find(name);
  if (it == limits.end()) return std::optional<uint64_t>();
  if (!it->is_number_unsigned() || it->get<uint64_t>() == 0) {
    return Error{std::string("limits.") + name + ": expected a positive integer"};
  }
  return std::optional<uint64_t>(it->get<uint64_t>());
}

Result<void> read_limits(const json& limits, RunRequest& out) {
  if (!limits.is_object()) return Error{"limits: expected an object such as {\"timeout_ms\": 1000}"};
  for (const auto& [key, value] : limits.items()) {
    if (key != "memory_mb" && key != "timeout_ms" && key != "steps") {
      return Error{"limits." + base::escape_text(key) +
                   ": unknown limit; the limits are memory_mb, timeout_ms and steps"};
    }
  }
  Result<std::optional<uint64_t>> memory = limit_field(limits, "memory_mb");
  if (!memory) return memory.error();
  Result<std::optional<uint64_t>> timeout = limit_field(limits, "timeout_ms");
  if (!timeout) return timeout.error();
  Result<std::optional<uint64_t>> steps = limit_field(limits, "steps");
  if (!steps) return steps.error();
  out.memory_mb = *memory;
  out.timeout_ms = *timeout;
  out.steps = *steps;
  return {};
}

}  // namespace

std::string json_problem(std::string_view text) {
  std::string problem = base::json_text::syntax_error_text(text);
  return problem == "not valid JSON" ? problem : "at " + problem;
}

Result<RunRequest> parse_run_request(std::string_view body) {
  const base::json_text::Checked checked = base::json_text::check(body, kMaxBodyDepth);
  if (checked.kind == base::json_text::Kind::too_deep) {
    return Error{"the body is nested deeper than " + std::to_string(kMaxBodyDepth) + " levels"};
  }
  if (!checked.ok()) return Error{"the body is not valid JSON: " + json_problem(body)};
  if (checked.kind != base::json_text::Kind::object) {
    return Error{"the body must be a JSON object such as {\"input\": {\"name\": \"Ada\"}}"};
  }
  const json tree = base::json_text::parse(body, kMaxBodyDepth);
  RunRequest out;
  for (const auto& [key, value] : tree.items()) {
    if (key == "export") {
      if (!value.is_string()) return Error{"export: expected a string (the name of an export)"};
      out.export_name = value.get<std::string>();
      if (out.export_name.size() > kMaxExportBytes) {
        return Error{"export: longer than " + std::to_string(kMaxExportBytes) + " bytes"};
      }
    } else if (key == "input") {
      out.input_json = base::json_text::write(value);
    } else if (key == "limits") {
      if (Result<void> ok = read_limits(value, out); !ok) return ok.error();
    } else {
      return Error{base::escape_text(key) + ": unknown field; a run takes export, input and limits"};
    }
  }
  return out;
}

Result<LimitOverrides> run_overrides(const RunRequest& request, const Limits& effective) {
  LimitOverrides out;
  const auto above = [](const char* field, uint64_t asked, uint64_t limit, const std::string& unit) {
    return Error{std::string("limits.") + field + ": " + std::to_string(asked) +
                 " is above this skill's limit of " + std::to_string(limit) + unit +
                 " (its manifest under the tenant's ceilings); a request may only lower limits"};
  };
  if (request.memory_mb) {
    // Compared in MiB, so a huge value cannot overflow into a small byte count.
    if (*request.memory_mb > (effective.memory_bytes >> 20)) {
      return above("memory_mb", *request.memory_mb, effective.memory_bytes >> 20, " MiB");
    }
    out.memory_bytes = *request.memory_mb << 20;
  }
  if (request.timeout_ms) {
    if (*request.timeout_ms > effective.timeout_ms)
      return above("timeout_ms", *request.timeout_ms, effective.timeout_ms, " ms");
    out.timeout_ms = request.timeout_ms;
  }
  if (request.steps) {
    if (*request.steps > effective.steps) return above("steps", *request.steps, effective.steps, " steps");
    out.steps = request.steps;
  }
  return out;
}

}  // namespace skillbox::server
