// cli/output.h — writing to stdout/stderr.
#pragma once

#include <cstdio>
#include <string_view>

namespace skillbox::cli {

/// Writes `text` to `stream` and flushes it (so stdout and stderr interleave as written on a terminal).
/// A failure is not reported here: the stream's error flag stays set and main() turns a failed stdout
/// into exit code 70, so a truncated result never looks like a success.
void emit(std::FILE* stream, std::string_view text);

}  // namespace skillbox::cli
