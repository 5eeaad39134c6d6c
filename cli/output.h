// cli/output.h — writing to stdout/stderr, and the one shape of skillbox's own messages.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace skillbox::cli {

/// Writes `text` to `stream` and flushes it (so stdout and stderr interleave as written on a terminal).
/// A failure is not reported here: the stream's error flag stays set and main() turns a failed stdout
/// into exit code 70, so a truncated result never looks like a success.
void emit(std::FILE* stream, std::string_view text);

/// Every line skillbox itself writes to stderr (errors, warnings, notes, the outcome and usage lines)
/// starts with "skillbox: ", and a line about a particular skill goes on with the skill folder as the
/// user typed it: "skillbox: examples/skills/notes: skill.json: limits.timeout_ms: ...". `folder` is ""
/// for a message about no skill (a bad command line). Each line of a multi-line `text` gets the prefix.
/// The folder and the text are escaped (either may hold anything); the result ends in '\n'. What the
/// skill itself writes (its log lines, its error's stack) is not a message and never goes through this.
[[nodiscard]] std::string message(std::string_view folder, std::string_view text);

/// emit(stderr, message(folder, text)).
void say(std::string_view folder, std::string_view text);

/// A Skill::load error about `dir` without the "cannot load skill \"DIR\": " it may start with: message()
/// names the folder already, as typed. Other errors are returned as they are.
[[nodiscard]] std::string load_problem(std::string_view dir, std::string text);

}  // namespace skillbox::cli
