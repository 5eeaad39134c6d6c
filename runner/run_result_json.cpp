// runner/run_result_json.cpp — include/skillbox/json.h: RunResult as the JSON text of `--json`.
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "skillbox/json.h"

namespace skillbox {
namespace {

using json = nlohmann::ordered_json;  // keeps keys in the order written

/// Compact ASCII JSON text of a tree built here (flat: no text of the skill's is parsed into it).
std::string dump(const json& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
}

/// JSON text from a skill or a worker, compact and ASCII, or "" when it is not JSON text.
std::string embedded(const std::string& text) {
  return base::json_text::reformat(text, {.indent = -1, .ascii = true});
}

}  // namespace

std::string to_json(const RunResult& result) {
  std::string value = "null";
  // ok, or error with a value: a bundle's failing tool call (its ToolResult with is_error true).
  if (result.outcome == Outcome::ok || !result.value_json.empty()) {
    if (std::string v = embedded(result.value_json); !v.empty()) value = std::move(v);
  }
  json error = nullptr;
  if (result.error) {
    error = {{"name", result.error->name},
             {"message", result.error->message},
             {"stack", result.error->stack},
             {"code", result.error->code.empty() ? json(nullptr) : json(result.error->code)}};
  }
  json logs = json::array();
  for (const LogEntry& entry : result.logs) {
    logs.push_back({{"level", std::string(to_string(entry.level))}, {"message", entry.message}});
  }
  const Usage& u = result.usage;
  const json usage = {{"wall_ms", u.wall_ms},
                      {"cpu_ms", u.cpu_ms},
                      {"steps", u.steps},
                      {"heap_peak_bytes", u.heap_peak_bytes},
                      {"host_peak_bytes", u.host_peak_bytes},
                      {"host_calls", u.host_calls},
                      {"http_bytes_in", u.http_bytes_in},
                      {"http_bytes_out", u.http_bytes_out},
                      {"timers_dropped", u.timers_dropped},
                      {"unhandled_rejections", u.unhandled_rejections}};
  // the documented key order (docs/cli.md).
  std::string out = "{\"outcome\":" + dump(std::string(to_string(result.outcome)));
  out += ",\"value\":" + value;
  out += ",\"error\":" + dump(error);
  out += ",\"logs\":" + dump(logs);
  if (!result.events.empty()) {  // OpenHuman bundles (docs/openhuman.md "Events")
    out += ",\"events\":[";
    for (size_t i = 0; i < result.events.size(); ++i) {
      const Event& e = result.events[i];
      std::string data = embedded(e.data_json);
      if (data.empty()) data = dump(e.data_json);
      out += (i == 0 ? "{\"type\":" : ",{\"type\":") + dump(e.type) + ",\"data\":" + data + "}";
    }
    out += "]";
  }
  out += ",\"usage\":" + dump(usage) + "}";
  return out;
}

std::string to_json_stream_result(const RunResult& result) {
  return "{\"type\":\"result\"," + to_json(result).substr(1);
}

std::string to_json_stream_log(const LogEntry& entry, double t_ms) {
  return dump({{"type", "log"},
               {"t_ms", t_ms},
               {"level", std::string(to_string(entry.level))},
               {"message", entry.message}});
}

std::string to_json_stream_event(const RunEvent& event, double t_ms) {
  return dump({{"type", "event"},
               {"t_ms", t_ms},
               {"kind", std::string(to_string(event.kind))},
               {"detail", event.detail}});
}

}  // namespace skillbox
