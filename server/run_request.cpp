// server/run_request.cpp — see run_request.h.
#include "server/run_request.h"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

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

/// A boolean field of "narrowing", or a problem naming it.
Result<bool> flag_field(const json& value, const std::string& key) {
  if (!value.is_boolean()) return Error{"narrowing." + key + ": expected true or false"};
  return value.get<bool>();
}

/// "narrowing.allow_http": allow entries, each checked as `--allow-http` checks it (narrowing_error).
Result<void> read_allow_http(const json& list, PolicyNarrowing& out) {
  if (!list.is_array() || list.empty() || list.size() > kMaxAllowHttpEntries) {
    return Error{"narrowing.allow_http: expected an array of 1 to " + std::to_string(kMaxAllowHttpEntries) +
                 " allow entries such as [\"https://api.example.com/v1/\"]"};
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = "narrowing.allow_http[" + std::to_string(i) + "]";
    if (!list[i].is_string()) return Error{at + ": expected a string (an allow entry)"};
    const PolicyNarrowing one{
        .deny_net = false, .allow_http = {list[i].get<std::string>()}, .fs_mode = {}, .deny_env = false};
    if (std::optional<std::string> problem = narrowing_error(one)) return Error{at + ": " + *problem};
    out.allow_http.push_back(list[i].get<std::string>());
  }
  return {};
}

Result<void> read_fs_mode(const json& value, PolicyNarrowing& out) {
  constexpr std::array<std::pair<std::string_view, FsMode>, 4> kModes = {{{"none", FsMode::none},
                                                                          {"read", FsMode::read},
                                                                          {"write", FsMode::write},
                                                                          {"readwrite", FsMode::readwrite}}};
  if (value.is_string()) {
    for (const auto& [name, mode] : kModes) {
      if (value.get<std::string>() == name) {
        out.fs_mode = mode;
        return {};
      }
    }
  }
  return Error{"narrowing.fs_mode: expected \"none\", \"read\", \"write\" or \"readwrite\""};
}

Result<void> read_narrowing(const json& narrowing, PolicyNarrowing& out) {
  if (!narrowing.is_object()) return Error{"narrowing: expected an object such as {\"deny_net\": true}"};
  for (const auto& [key, value] : narrowing.items()) {
    Result<void> ok;
    if (key == "deny_net" || key == "deny_env") {
      Result<bool> flag = flag_field(value, key);
      if (!flag) return flag.error();
      (key == "deny_net" ? out.deny_net : out.deny_env) = *flag;
    } else if (key == "allow_http") {
      ok = read_allow_http(value, out);
    } else if (key == "fs_mode") {
      ok = read_fs_mode(value, out);
    } else {
      return Error{"narrowing." + base::escape_text(key) +
                   ": unknown field; narrowing takes deny_net, allow_http, fs_mode and deny_env"};
    }
    if (!ok) return ok.error();
  }
  if (out.deny_net && !out.allow_http.empty()) {
    return Error{"narrowing: deny_net and allow_http exclude each other (deny_net already denies every URL)"};
  }
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
    } else if (key == "narrowing") {
      if (Result<void> ok = read_narrowing(value, out.narrowing); !ok) return ok.error();
    } else {
      return Error{base::escape_text(key) +
                   ": unknown field; a run takes export, input, limits and narrowing"};
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
