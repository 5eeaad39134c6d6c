// cli/input.cpp — reading and checking the input JSON of `skillbox run`.
#include "cli/input.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>

#include "base/escape.h"
#include "base/file_read.h"
#include "base/json_text.h"

namespace skillbox::cli {
namespace {

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string too_large() {
  return "--input-file: larger than " + std::to_string(kMaxInputBytes / (1024ull * 1024)) +
         " MiB; pass a smaller input (the skill's heap has to hold it)";
}

/// The message for a failed read of the input: the cap, or why it could not be read.
Error read_error(const base::ReadError& e) {
  if (e.code == base::ReadErrc::too_large) return Error{too_large()};
  return Error{"--input-file: cannot read: " + errno_text(e.sys_errno)};
}

}  // namespace

Result<std::string> read_input_file(const std::string& path) {
  if (path == "-") {
    auto text = base::read_fd(STDIN_FILENO, kMaxInputBytes);
    if (!text) return read_error(text.error());
    return std::move(*text);
  }
  // Pipes are welcome (`--input-file <(jq ...)`); a named FIFO nobody writes to fails after a bounded
  // wait instead of hanging.
  auto text = base::read_file(path.c_str(), {.max_bytes = kMaxInputBytes, .allow_pipe = true});
  if (text) return std::move(*text);
  const base::ReadError& e = text.error();
  switch (e.code) {
    case base::ReadErrc::open_failed:
      return Error{"--input-file: cannot open \"" + path + "\": " + errno_text(e.sys_errno)};
    case base::ReadErrc::not_regular:
      if (e.file_type == S_IFDIR)
        return Error{"--input-file: \"" + path + "\" is a folder; pass a JSON file"};
      return Error{"--input-file: \"" + path + "\" is not a regular file or a pipe; pass a JSON file"};
    case base::ReadErrc::no_writer:
      return Error{"--input-file: \"" + path + "\" is " + e.message + "; start the writer first"};
    default:
      return read_error(e);
  }
}

std::optional<std::string> json_syntax_error(std::string_view text) {
  // No document is built: a deeply nested input costs no host memory here. The runner receives the
  // original text. base::json_text accepts what JSON.stringify writes (a lone surrogate's `\ud800`,
  // which nlohmann refuses), so a result can be fed back as input; nlohmann's SAX pass only words the
  // error.
  if (base::json_text::check(text).ok()) return std::nullopt;
  return base::json_text::syntax_error_text(text);
}

}  // namespace skillbox::cli
