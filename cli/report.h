// cli/report.h — how `skillbox` shows run results and skills, as human text or as JSON.
//
// Human output of `run`: the value (pretty JSON) alone on stdout, so it can be piped; skill logs,
// the error, the outcome and the usage on stderr. `--json`: one JSON object on stdout, nothing else.
// Both forms are described with examples in docs/cli.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// `result`, unless it is `ok` with a value that is not JSON text (base::json_text::check; valid UTF-8,
/// any depth, lone-surrogate escapes allowed): then an
/// `internal` result whose error says so. The CLI never prints null in place of a value it cannot
/// read (runners keep this contract; this is the defence in depth before anything is printed). A value
/// beside another outcome (a bundle's failing tool call) that is not well-formed is dropped.
RunResult checked_result(RunResult result);

/// The skill's log lines for stderr, one "[level] message" each, escaped for terminals.
[[nodiscard]] std::string run_result_logs(const RunResult& result);
/// One of those lines.
[[nodiscard]] std::string log_line(const LogEntry& entry);
/// The error part of run_result_report: the message "skillbox: FOLDER: error: name [code]: message"
/// (cli/output.h message()), then the stack as the skill's; "" without error.
[[nodiscard]] std::string run_result_error(const RunResult& result, std::string_view folder);

/// The limits a run gets and, for each, where it came from, in words a user can act on:
/// "`--timeout-ms 300` on the command line", "`limits.timeout_ms` in skill.json", "the default for
/// `limits.timeout_ms` (skill.json does not lower or raise it)".
struct EffectiveLimits {
  Limits limits;
  std::string memory_source;
  std::string steps_source;
  std::string stack_source;
  std::string timeout_source;
};

/// The skill's limits (`manifest`) lowered by the command line's `flags`, with their sources. A flag
/// above the skill's own limit does not apply, so the skill's limit is the source then.
[[nodiscard]] EffectiveLimits effective_limits(const Limits& manifest, const LimitOverrides& flags);

/// What ended the run, for stderr: the error (name [code]: message, then the stack), the outcome line
/// (with the limit that was hit and where it was set, from `limits`) and the usage line, each a message
/// about the skill folder `folder` as the user typed it ("skillbox: FOLDER: outcome: ...").
/// Skill-controlled text is escaped.
[[nodiscard]] std::string run_result_report(const RunResult& result, const EffectiveLimits& limits,
                                            std::string_view folder);

/// The stdout part of a run's human output: the value as indented JSON (escaped for terminals, still
/// valid JSON; nesting past 64 levels on one line), or "" when there is none (the outcome is not ok and
/// the result carries no value beside its error). The `--json` form is skillbox::to_json
/// (skillbox/json.h).
[[nodiscard]] std::string run_result_value(const RunResult& result);

/// The effective manifest of `skill` in skill.json's own schema, every default filled in (it is
/// itself a valid skill.json).
[[nodiscard]] nlohmann::ordered_json manifest_json(const Manifest& manifest);

/// `skillbox check`'s human description of a skill: identity, the entry's exports (when `code` is
/// given), limits, permissions.
[[nodiscard]] std::string skill_report(const Skill& skill, const CodeCheck* code = nullptr);

/// The entry's exports as `skillbox check` prints them: "default, greet", or what a script's are.
[[nodiscard]] std::string exports_text(const CodeCheck& code);

/// "32 MiB", "512 KiB", "1000 bytes": exact binary units, never rounded.
[[nodiscard]] std::string exact_bytes(uint64_t bytes);

/// JSON text for printing, written without recursion (base::json_text::write): ASCII only when `ascii`
/// (for machines), else UTF-8 with terminal-unsafe characters escaped; indented when `indent` >= 0 (up
/// to 64 levels, deeper on one line).
[[nodiscard]] std::string dump_json(const nlohmann::ordered_json& value, int indent, bool ascii);

}  // namespace skillbox::cli
