// cli/input.cpp — reading and checking the input JSON of `skillbox run`.
#include "cli/input.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>

namespace skillbox::cli {
namespace {

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string too_large() {
  return "--input-file: larger than " + std::to_string(kMaxInputBytes / (1024ull * 1024)) +
         " MiB; pass a smaller input (the skill's heap has to hold it)";
}

/// Reads `fd` to its end, or fails once more than kMaxInputBytes arrived (without reading the rest).
Result<std::string> read_capped(int fd) {
  std::string text;
  std::string chunk(64ull * 1024, '\0');
  while (true) {
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"--input-file: cannot read: " + errno_text(errno)};
    if (n == 0) return text;
    text.append(chunk.data(), static_cast<size_t>(n));
    if (text.size() > kMaxInputBytes) return Error{too_large()};
  }
}

/// Accepts every JSON event and keeps the first syntax error.
struct SyntaxCheck final : nlohmann::json_sax<nlohmann::json> {
  bool null() override { return true; }
  bool boolean(bool /*v*/) override { return true; }
  bool number_integer(number_integer_t /*v*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*v*/) override { return true; }
  bool number_float(number_float_t /*v*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*v*/) override { return true; }
  bool binary(binary_t& /*v*/) override { return true; }
  bool start_object(std::size_t /*n*/) override { return true; }
  bool key(string_t& /*v*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*n*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    // ex.what(): "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    const std::string what = ex.what();
    const size_t at = what.find("at line ");
    error = at == std::string::npos ? what : what.substr(at + 3);
    return false;
  }
  std::string error;
};

}  // namespace

Result<std::string> read_input_file(const std::string& path) {
  if (path == "-") return read_capped(STDIN_FILENO);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Error{"--input-file: cannot open \"" + path + "\": " + errno_text(errno)};
  struct stat st {};
  Result<std::string> result = Error{"--input-file: \"" + path + "\" is a folder; pass a JSON file"};
  if (::fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
    result = (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > kMaxInputBytes)
                 ? Result<std::string>(Error{too_large()})
                 : read_capped(fd);
  }
  ::close(fd);
  return result;
}

std::optional<std::string> json_syntax_error(std::string_view text) {
  // A SAX pass builds no document: a deeply nested input costs no host memory here. The runner
  // receives the original text.
  SyntaxCheck check;
  if (nlohmann::json::sax_parse(text.begin(), text.end(), &check)) return std::nullopt;
  return check.error.empty() ? std::string("not valid JSON") : check.error;
}

}  // namespace skillbox::cli
