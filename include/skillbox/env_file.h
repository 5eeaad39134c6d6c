// skillbox/env_file.h — reading dotenv files for `env.get` (`skillbox run --env-file FILE`).
//
// The values read here become HostOptions::env; `env.get` still returns only the names a skill's
// manifest lists in `permissions.env`. Syntax (docs/env.md):
//
//   # comment                       blank lines and lines starting with # are ignored
//   NAME=value                      unquoted: surrounding blanks trimmed; " #" starts a comment
//   export NAME=value               an `export ` prefix is allowed and ignored
//   NAME = value                    blanks around NAME and = are allowed
//   NAME="a\nb \"q\" \\ \$"         double quotes: escapes \n \r \t \" \\ \$ ; may span lines
//   NAME='C:\raw $text'             single quotes: literal, no escapes; may span lines
//   NAME=                           empty value
//
// NAME is [A-Za-z_][A-Za-z0-9_]*. No variable expansion: `$` is an ordinary character. A name may be
// set only once. Lines end with LF or CRLF; a UTF-8 byte-order mark at the start is skipped. Values
// may hold any bytes except NUL.
//
// Errors name the line and what is wrong, and never quote a value or an unparsed line (an env file
// holds secrets; a malformed line may be a pasted secret).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox {

/// Largest env file load_env_file() reads, in bytes. Env files are small; this bounds a mistake such
/// as pointing --env-file at a log file.
inline constexpr uint64_t kMaxEnvFileBytes = 1024ull * 1024;

/// Parses dotenv text. Errors read "line N: <what is wrong>".
[[nodiscard]] Result<std::map<std::string, std::string>> parse_env_file(std::string_view text);

/// Reads and parses the dotenv file at `path`: a regular file, or a pipe such as `<(cmd)` (read to
/// its end). A named FIFO that no process writes to fails after two seconds
/// instead of hanging; devices, sockets and folders are refused. At most kMaxEnvFileBytes are read.
/// Errors read "<path>: line N: <what is wrong>" or "<path>: <why it cannot be read>".
[[nodiscard]] Result<std::map<std::string, std::string>> load_env_file(const std::filesystem::path& path);

}  // namespace skillbox
