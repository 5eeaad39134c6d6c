// cli/terminal_text.h — make skill-controlled text safe to print on a terminal.
//
// Skill output (log lines, error messages, stacks, values, manifest names) is untrusted. Printed raw it
// could clear the screen, set the window title, fake skillbox's own lines or reorder text (ANSI/OSC
// escapes, C1 controls such as U+009B CSI, bidi overrides such as U+202E). Everything the CLI prints
// that a skill could influence goes through one of these functions.
#pragma once

#include <string>
#include <string_view>

namespace skillbox::cli {

/// Returns `text` with control characters (C0 except '\n' when `keep_newlines`, DEL, C1), bidi
/// controls, line/paragraph separators and ill-formed UTF-8 bytes replaced by visible escapes
/// (`\n`, `\t`, `\x1b`, `\u202e`, `\xff`). Other UTF-8 is kept as it is.
[[nodiscard]] std::string printable(std::string_view text, bool keep_newlines = false);

/// Returns JSON text with the same characters escaped as \uXXXX (still valid JSON, same value).
/// Expects the output of nlohmann::json::dump, whose strings already escape C0 controls.
[[nodiscard]] std::string printable_json(std::string_view json_text);

}  // namespace skillbox::cli
