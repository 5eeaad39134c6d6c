// cli/input.h — the input JSON of `skillbox run` (--input / --input-file).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// Largest input accepted. The input is copied into the skill's heap, whose default is 32 MiB; an
/// input near this size only makes sense with a raised limits.memory_mb.
inline constexpr size_t kMaxInputBytes = 16ull * 1024 * 1024;

/// Reads the input file at `path`, or standard input when `path` is "-", refusing more than
/// kMaxInputBytes. Errors read "--input-file: <what>; <what to do>".
[[nodiscard]] Result<std::string> read_input_file(const std::string& path);

/// Checks that `text` is exactly one JSON value (RFC 8259, UTF-8). Returns std::nullopt when it is,
/// else where and why it is not: "line 1, column 2: syntax error while parsing value - invalid literal;
/// last read: 'x'".
[[nodiscard]] std::optional<std::string> json_syntax_error(std::string_view text);

}  // namespace skillbox::cli
