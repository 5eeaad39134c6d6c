// base/escape.h — make untrusted text inert for terminals and log viewers.
//
// Skill output (log lines, error messages, values, manifest names) is untrusted. Shown raw it could
// clear the screen or set the window title (ANSI/OSC escapes after ESC, C1 controls such as U+009B
// CSI), forge a host line (a newline, U+2028/U+2029, U+0085 NEL) or reorder what follows ("Trojan
// Source", CVE-2021-42574: U+061C, U+200E/U+200F, U+202A..U+202E, U+2066..U+2069). This file holds the
// one table of such code points and the one escaper; the log capability and the CLI both use it.
// The escapes make text safe to show, not reversible: a backslash in the input is kept as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace skillbox::base {

/// True for code points that can change how a terminal shows what follows them: C0 controls, DEL,
/// C1 controls, the bidirectional controls and the line/paragraph separators listed above.
[[nodiscard]] bool is_terminal_unsafe(char32_t cp);

/// Appends `\xNN` (lower-case hex) for one byte.
void append_byte_escape(std::string& out, uint8_t byte);
/// Appends `\uXXXX` (lower-case hex) for a code point of the Basic Multilingual Plane.
void append_code_point_escape(std::string& out, char32_t cp);

/// Appends the escaped form of the unit (a character, or one byte of ill-formed UTF-8) starting at
/// text[i] and returns its length in `text`. '\n', '\r', '\t' become `\n`, `\r`, `\t` ('\n' is kept
/// raw when `keep_newlines`); other C0 controls and DEL become `\xNN`; other unsafe code points
/// `\uXXXX`; bytes that are not well-formed UTF-8 `\xNN`; everything else is copied. i < text.size().
size_t escape_unit(std::string_view text, size_t i, std::string& out, bool keep_newlines = false);

/// All of `text`, escaped unit by unit as escape_unit does. Output is at most 6 times the input.
[[nodiscard]] std::string escape_text(std::string_view text, bool keep_newlines = false);

/// escape_text capped at `max_bytes` of output: when the escaped text is longer, it is cut on a unit
/// boundary and ends with `cut_suffix` (which must fit in max_bytes). Work is bounded by max_bytes,
/// not by the length of `text`.
[[nodiscard]] std::string escape_text_capped(std::string_view text, size_t max_bytes,
                                             std::string_view cut_suffix);

/// JSON text (the output of a JSON serializer, whose strings already escape C0 controls) with every
/// unsafe code point other than '\n' and ' ' written as `\uXXXX`: still valid JSON of the same value.
/// A byte that is not well-formed UTF-8 (no serializer emits one) becomes `\ufffd`.
[[nodiscard]] std::string escape_json_text(std::string_view json_text);

}  // namespace skillbox::base
