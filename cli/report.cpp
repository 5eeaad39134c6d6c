// cli/report.cpp — human and JSON renderings of run results and skills.
#include "cli/report.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <system_error>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/utf8.h"
#include "cli/output.h"

namespace skillbox::cli {
namespace {

using json = nlohmann::ordered_json;  // keeps keys in the order written

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;

/// Levels of nesting human output indents; deeper arrays and objects are printed on one line.
constexpr size_t kMaxIndentedDepth = 64;

std::string plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// "245.3 KiB": for measured amounts, where one decimal is enough.
std::string approx_bytes(uint64_t bytes) {
  if (bytes < kKiB) return plural(bytes, "byte", "bytes");
  const char* unit = bytes >= kGiB ? " GiB" : bytes >= kMiB ? " MiB" : " KiB";
  const uint64_t scale = bytes >= kGiB ? kGiB : bytes >= kMiB ? kMiB : kKiB;
  std::array<char, 32> buf{};
  const auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(),
                    static_cast<double>(bytes) / static_cast<double>(scale), std::chars_format::fixed, 1);
  if (ec != std::errc()) return plural(bytes, "byte", "bytes");
  return std::string(buf.data(), end) + unit;
}

/// The limit behind a limit outcome, and where it was set.
std::string limit_explanation(Outcome outcome, const EffectiveLimits& e) {
  const Limits& limits = e.limits;
  switch (outcome) {
    case Outcome::memory_limit:
      return "the skill reached its heap limit of " + exact_bytes(limits.memory_bytes) + " (" +
             e.memory_source + ")";
    case Outcome::step_limit:
      return "the skill used up its " + std::to_string(limits.steps) + " steps (" + e.steps_source + ")";
    case Outcome::timeout:
      return "the run passed its deadline of " + std::to_string(limits.timeout_ms) + " ms (" +
             e.timeout_source + ")";
    case Outcome::stack_overflow:
      return "the skill reached its stack limit of " + exact_bytes(limits.stack_bytes) + " (" +
             e.stack_source + ")";
    case Outcome::crashed:
      return "the worker process running the skill died";
    case Outcome::internal:
      return "skillbox itself failed; please report this with the error above";
    case Outcome::cancelled:
      return "the run was cancelled before it finished (Ctrl-C or SIGTERM)";
    default:
      return {};
  }
}

/// Where one limit of a run came from: the flag when it lowered the skill's value, else skill.json.
std::string limit_source(uint64_t effective, uint64_t manifest, uint64_t fallback,
                         const std::optional<uint64_t>& flag, const std::string& flag_text, const char* key) {
  if (flag && effective < manifest) return "`" + flag_text + "` on the command line";
  if (manifest == fallback) {
    return "the default for `limits." + std::string(key) + "`; set it in skill.json or lower it with a flag";
  }
  return "`limits." + std::string(key) + "` in skill.json";
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

}  // namespace

std::string exact_bytes(uint64_t bytes) {
  if (bytes != 0 && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes != 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes != 0 && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return plural(bytes, "byte", "bytes");
}

std::string dump_json(const json& value, int indent, bool ascii) {
  const std::string text = base::json_text::write(
      value, {.indent = indent, .ascii = ascii, .max_indented_depth = kMaxIndentedDepth});
  return ascii ? text : base::escape_json_text(text);
}

RunResult checked_result(RunResult result) {
  if (result.outcome != Outcome::ok) {
    // A bundle's failing tool call carries its ToolResult beside the error: only a well-formed one
    // is printed (the error alone still says what happened).
    if (!base::json_text::check(result.value_json).ok()) result.value_json.clear();
    return result;
  }
  // Checked as text (base/json_text.h): any depth, and the lone-surrogate escapes JSON.stringify
  // writes (`"\ud800"`) are JSON text too.
  const bool text = base::utf8::is_valid(result.value_json);
  if (text && base::json_text::check(result.value_json).ok()) return result;
  result.outcome = Outcome::internal;
  result.error = ErrorInfo{"InternalError",
                           std::string("the skill ended ok, but its result is not ") +
                               (text ? "well-formed JSON" : "valid UTF-8") +
                               "; skillbox does not print a replacement value. Please report this as a bug",
                           "", ""};
  result.value_json.clear();
  return result;
}

std::string run_result_value(const RunResult& result) {
  if (result.outcome != Outcome::ok && result.value_json.empty()) return {};
  // Laid out from the text, never built into a tree: any depth prints, lone-surrogate escapes stay, and
  // past kMaxIndentedDepth levels the rest of a branch goes on one line, so the output stays within a
  // small factor of the value's own size.
  std::string text = base::json_text::reformat(
      result.value_json, {.indent = 2, .ascii = false, .max_indented_depth = kMaxIndentedDepth});
  if (text.empty()) text = "null";
  return base::escape_json_text(text) + "\n";
}

std::string log_line(const LogEntry& entry) {
  return "[" + std::string(to_string(entry.level)) + "] " + base::escape_text(entry.message) + "\n";
}

std::string run_result_logs(const RunResult& result) {
  std::string out;
  for (const LogEntry& entry : result.logs) out += log_line(entry);
  return out;
}

std::string run_result_error(const RunResult& result, std::string_view folder) {
  std::string out;
  if (result.error) {
    const ErrorInfo& e = *result.error;
    // The skill's text is escaped first, newlines included: it stays on the one line of the message
    // (a newline in it could otherwise start a line that looks like skillbox's own).
    std::string line = "error: " + base::escape_text(e.name);
    if (!e.code.empty()) line += " [" + base::escape_text(e.code) + "]";
    out += message(folder, line + ": " + base::escape_text(e.message));
    // The skill's, as it wrote it (`e.stack = ...` is allowed), one line each, indented: a line of it
    // never starts at column 0, so it can never pass for one of skillbox's own "skillbox: " lines.
    const std::string stack = base::escape_text(e.stack, /*keep_newlines=*/true);
    for (size_t at = 0; at < stack.size();) {
      const size_t eol = std::min(stack.find('\n', at), stack.size());
      const std::string_view stack_line(stack.data() + at, eol - at);
      at = eol + 1;
      if (stack_line.empty()) continue;
      const bool indented = stack_line.front() == ' ' || stack_line.front() == '\t';
      out += std::string(indented ? "" : "    ") + std::string(stack_line) + "\n";
    }
  }
  return out;
}

EffectiveLimits effective_limits(const Limits& manifest, const LimitOverrides& flags) {
  const Limits defaults;
  EffectiveLimits e;
  e.limits = flags.apply(manifest);
  const Limits& l = e.limits;
  e.memory_source =
      limit_source(l.memory_bytes, manifest.memory_bytes, defaults.memory_bytes, flags.memory_bytes,
                   "--memory-mb " + std::to_string(flags.memory_bytes.value_or(0) / kMiB), "memory_mb");
  e.steps_source = limit_source(l.steps, manifest.steps, defaults.steps, flags.steps,
                                "--steps " + std::to_string(flags.steps.value_or(0)), "steps");
  e.stack_source =
      limit_source(l.stack_bytes, manifest.stack_bytes, defaults.stack_bytes, flags.stack_bytes,
                   "--stack-kb " + std::to_string(flags.stack_bytes.value_or(0) / kKiB), "stack_kb");
  e.timeout_source =
      limit_source(l.timeout_ms, manifest.timeout_ms, defaults.timeout_ms, flags.timeout_ms,
                   "--timeout-ms " + std::to_string(flags.timeout_ms.value_or(0)), "timeout_ms");
  return e;
}

std::string run_result_report(const RunResult& result, const EffectiveLimits& limits,
                              std::string_view folder) {
  std::string out = run_result_error(result, folder);
  std::string outcome = "outcome: " + std::string(to_string(result.outcome)) + " (exit " +
                        std::to_string(exit_code(result.outcome)) + ")";
  const std::string why = limit_explanation(result.outcome, limits);
  if (!why.empty()) outcome += ": " + why;
  out += message(folder, outcome);
  const Usage& u = result.usage;
  std::string usage = "usage: " + std::to_string(u.wall_ms) + " ms wall, " + std::to_string(u.cpu_ms) +
                      " ms cpu, " + plural(u.steps, "step", "steps") + ", " +
                      approx_bytes(u.heap_peak_bytes) + " heap peak, " +
                      plural(u.host_calls, "host call", "host calls");
  if (u.timers_dropped > 0) usage += ", " + plural(u.timers_dropped, "timer", "timers") + " dropped";
  if (u.unhandled_rejections > 0)
    usage += ", " + plural(u.unhandled_rejections, "unhandled rejection", "unhandled rejections");
  if (u.http_bytes_in > 0 || u.http_bytes_out > 0) {
    usage += ", http " + approx_bytes(u.http_bytes_in) + " in / " + approx_bytes(u.http_bytes_out) + " out";
  }
  out += message(folder, usage);
  return out;
}

json manifest_json(const Manifest& m) {
  const Limits& l = m.limits;
  const Policy& p = m.permissions;
  json out = json::object();
  out["id"] = m.id;
  out["name"] = m.name;
  out["version"] = m.version;
  out["entry"] = m.entry;
  out["limits"] = {{"memory_mb", l.memory_bytes / kMiB},
                   {"steps", l.steps},
                   {"stack_kb", l.stack_bytes / kKiB},
                   {"timeout_ms", l.timeout_ms}};
  out["permissions"] = {{"fs",
                         {{"mode", std::string(to_string(p.fs.mode))},
                          {"quota_bytes", p.fs.quota_bytes},
                          {"max_files", p.fs.max_files},
                          {"max_file_bytes", p.fs.max_file_bytes}}},
                        {"http",
                         {{"allow", p.http.allow.texts()},
                          {"methods", p.http.methods},
                          {"max_request_bytes", p.http.max_request_bytes},
                          {"max_response_bytes", p.http.max_response_bytes},
                          {"timeout_ms", p.http.timeout_ms},
                          {"max_redirects", p.http.max_redirects},
                          {"max_concurrent", p.http.max_concurrent},
                          {"max_requests", p.http.max_requests},
                          {"allow_private_addresses", p.http.allow_private_addresses},
                          {"fetch", p.http.fetch}}},
                        {"env", p.env},
                        {"store",
                         {{"quota_bytes", p.store.quota_bytes},
                          {"max_keys", p.store.max_keys},
                          {"max_value_bytes", p.store.max_value_bytes}}}};
  if (!m.tools.empty()) {
    json tools = json::array();
    for (const ToolDeclaration& t : m.tools) {
      json tool = {{"name", t.name}, {"export", t.export_name}};
      if (!t.title.empty()) tool["title"] = t.title;
      tool["description"] = t.description;
      tool["input_schema"] = base::json_text::parse(t.input_schema_json);
      if (!t.output_schema_json.empty()) tool["output_schema"] = base::json_text::parse(t.output_schema_json);
      json annotations = json::object();
      if (!t.annotation_title.empty()) annotations["title"] = t.annotation_title;
      if (t.idempotent_hint) annotations["idempotent_hint"] = *t.idempotent_hint;
      if (!annotations.empty()) tool["annotations"] = std::move(annotations);
      tools.push_back(std::move(tool));
    }
    out["tools"] = std::move(tools);
  }
  return out;
}

std::string exports_text(const CodeCheck& code) {
  if (!code.entry_is_module)
    return "(a classic script: the functions it defines at top level, known when it runs)";
  if (code.exports.empty()) return "none (the module exports nothing `skillbox run --call` could call)";
  std::string out;
  for (const std::string& name : code.exports) out += (out.empty() ? "" : ", ") + base::escape_text(name);
  return out;
}

std::string skill_report(const Skill& skill, const CodeCheck* code) {
  const Manifest& m = skill.manifest();
  const Limits& l = m.limits;
  const Policy& p = m.permissions;
  std::string out;
  out += "skill    " + m.id + " " + base::escape_text(m.version) + " (" + base::escape_text(m.name) + ")\n";
  out += "folder   " + base::escape_text(skill.dir().string()) + "\n";
  out += "entry    " + base::escape_text(m.entry) + "\n";
  if (code != nullptr) out += "exports  " + exports_text(*code) + "\n";
  out += "\nlimits\n";
  out += "  memory   " + exact_bytes(l.memory_bytes) + "\n";
  out += "  steps    " + std::to_string(l.steps) + "\n";
  out += "  stack    " + exact_bytes(l.stack_bytes) + "\n";
  out += "  timeout  " + std::to_string(l.timeout_ms) + " ms\n";
  out += "\npermissions\n";
  if (p.fs.mode == FsMode::none) {
    out += "  fs       none\n";
  } else {
    out += "  fs       " + std::string(to_string(p.fs.mode)) + ", quota " + exact_bytes(p.fs.quota_bytes) +
           ", at most " + plural(p.fs.max_files, "file", "files") + ", " + exact_bytes(p.fs.max_file_bytes) +
           " per file\n";
  }
  if (p.http.allow.empty() || p.http.methods.empty()) {
    out += "  http     none\n";
  } else {
    out += "  http     " + join(p.http.methods, ", ") + " to URLs starting with\n";
    for (const std::string& prefix : p.http.allow) out += "             " + prefix + "\n";
    out += "           " + exact_bytes(p.http.max_request_bytes) + " per request, " +
           exact_bytes(p.http.max_response_bytes) + " per response, " + std::to_string(p.http.timeout_ms) +
           " ms timeout, " + plural(p.http.max_redirects, "redirect", "redirects") + ", " +
           std::to_string(p.http.max_concurrent) + " at once, " +
           plural(p.http.max_requests, "request", "requests") + " per run\n";
    out += std::string("           private and loopback addresses ") +
           (p.http.allow_private_addresses ? "ALLOWED" : "refused") + "\n";
    if (p.http.fetch) out += "           also through fetch (permissions.http.fetch)\n";
  }
  out += "  env      " + (p.env.empty() ? std::string("none") : join(p.env, ", ")) + "\n";
  out += "  store    quota " + exact_bytes(p.store.quota_bytes) + ", at most " +
         plural(p.store.max_keys, "key", "keys") + ", " + exact_bytes(p.store.max_value_bytes) +
         " per value\n";
  if (!m.tools.empty()) {
    out += "\ntools (skillbox mcp serves each as " + m.id + "__<name>)\n";
    size_t width = 0;
    for (const ToolDeclaration& t : m.tools) width = std::max(width, t.name.size());
    for (const ToolDeclaration& t : m.tools)
      out += "  " + t.name + std::string(width - t.name.size(), ' ') + "  runs " +
             base::escape_text(t.export_name) + (t.output_schema_json.empty() ? "" : ", output schema") +
             "\n";
  }
  return out;
}

}  // namespace skillbox::cli
