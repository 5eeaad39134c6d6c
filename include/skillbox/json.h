// include/skillbox/json.h — a run's result as JSON text: the one format of `skillbox run --json`,
// `skillbox run --json-stream` and any other front end of the library (docs/cli.md describes both).
//
// Every function returns one line of ASCII text without the trailing newline. Text from the skill is
// never parsed into a tree here: the value and event data are checked and re-laid out as text (any
// depth, lone-surrogate escapes such as `\ud800` kept as the engine wrote them), so no result a runner
// hands back can crash or exhaust the caller.
#pragma once

#include <string>

#include "skillbox/skillbox.h"

namespace skillbox {

/// `{"outcome":...,"value":...,"error":...,"logs":[...],"events":[...],"usage":{...}}`, keys in that
/// order. `value`: RunResult::value_json as written (no whitespace, characters above U+007E as
/// `\uXXXX`, numbers spelled as the CLI always spelled them), or null when the result carries none or it
/// is not JSON text. `error`: null or `{"name","message","stack","code"}` (`code` null when empty).
/// `logs`: `[{"level","message"}...]`. `events`: present only when the run reported any,
/// `[{"type","data"}...]` with `data` the event's JSON object (a string of its text if that is not
/// JSON). `usage`: every Usage counter, by its member name.
[[nodiscard]] std::string to_json(const RunResult& result);

/// The last line of `--json-stream`: to_json(result) with `"type":"result"` as its first member.
[[nodiscard]] std::string to_json_stream_result(const RunResult& result);

/// A `--json-stream` line for a log line the skill wrote `t_ms` milliseconds after the start:
/// `{"type":"log","t_ms":...,"level":...,"message":...}`.
[[nodiscard]] std::string to_json_stream_log(const LogEntry& entry, double t_ms);

/// A `--json-stream` line for a run event: `{"type":"event","t_ms":...,"kind":...,"detail":...}`.
[[nodiscard]] std::string to_json_stream_event(const RunEvent& event, double t_ms);

}  // namespace skillbox
