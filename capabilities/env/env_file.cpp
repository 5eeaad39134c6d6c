// capabilities/env/env_file.cpp — the dotenv parser behind skillbox/env_file.h.
//
// Errors never quote the text being parsed: an env file holds secrets, and a malformed line is often a
// pasted secret. They give the line number and what is wrong instead.
#include "skillbox/env_file.h"

#include <optional>
#include <system_error>

#include "base/file_read.h"

namespace skillbox {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

class EnvParser {
 public:
  explicit EnvParser(std::string_view text) : t_(text) {}

  Result<std::map<std::string, std::string>> run() {
    if (auto e = check_nul()) return *e;
    if (t_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // UTF-8 byte-order mark
    std::map<std::string, size_t> first_line;
    std::map<std::string, std::string> out;
    while (i_ < t_.size()) {
      skip_blanks();
      if (at_line_end()) {
        if (!consume_line_end()) break;
        continue;
      }
      if (t_[i_] == '#') {
        skip_to_line_end();
        continue;
      }
      const size_t line = line_;
      if (t_.substr(i_, 6) == "export" && i_ + 6 < t_.size() && is_blank(t_[i_ + 6])) {
        i_ += 6;
        skip_blanks();
      }
      const size_t name_start = i_;
      while (i_ < t_.size() && is_name_char(t_[i_])) ++i_;
      std::string name(t_.substr(name_start, i_ - name_start));
      skip_blanks();
      if (name.empty() || !is_name_start(name[0]) || i_ >= t_.size() || t_[i_] != '=')
        return fail(
            line, "expected NAME=VALUE, where NAME is letters, digits and _ and does not start with a digit");
      ++i_;  // '='
      auto value = parse_value();
      if (!value) return value.error();
      if (auto [it, inserted] = first_line.emplace(name, line); !inserted)
        return fail(line, name + " is already set on line " + std::to_string(it->second));
      out.emplace(std::move(name), std::move(*value));
    }
    return out;
  }

 private:
  static Error fail(size_t line, const std::string& what) {
    return Error{"line " + std::to_string(line) + ": " + what};
  }

  std::optional<Error> check_nul() const {
    const size_t nul = t_.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    size_t line = 1;
    for (size_t k = 0; k < nul; ++k)
      if (t_[k] == '\n') ++line;
    return fail(line, "contains a NUL byte; env values cannot hold NUL");
  }

  void skip_blanks() {
    while (i_ < t_.size() && is_blank(t_[i_])) ++i_;
  }
  [[nodiscard]] bool at_line_end() const {
    return i_ >= t_.size() || t_[i_] == '\n' || (t_[i_] == '\r' && i_ + 1 < t_.size() && t_[i_ + 1] == '\n');
  }
  // Consumes LF or CRLF at i_; returns false at the end of the text.
  bool consume_line_end() {
    if (i_ >= t_.size()) return false;
    i_ += t_[i_] == '\r' ? 2u : 1u;
    ++line_;
    return true;
  }
  void skip_to_line_end() {
    while (!at_line_end()) ++i_;
  }

  // Parses the value after '=' up to and including the line end.
  Result<std::string> parse_value() {
    const size_t before = i_;
    skip_blanks();
    const bool blank_before = i_ > before;
    std::string value;
    if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '\'')) {
      auto quoted = parse_quoted(t_[i_]);
      if (!quoted) return quoted.error();
      value = std::move(*quoted);
      skip_blanks();
      if (i_ < t_.size() && t_[i_] == '#') skip_to_line_end();
      if (!at_line_end()) return fail(line_, "unexpected text after the closing quote");
    } else {
      // Unquoted: up to the line end or a '#' that follows a blank ("A=b #c" -> "b"; "A=b#c" -> "b#c").
      bool prev_blank = blank_before;
      while (!at_line_end()) {
        const char c = t_[i_];
        if (c == '#' && prev_blank) {
          skip_to_line_end();
          break;
        }
        value += c;
        prev_blank = is_blank(c);
        ++i_;
      }
      while (!value.empty() && is_blank(value.back())) value.pop_back();
    }
    consume_line_end();
    return value;
  }

  // Parses a quoted value starting at the opening quote; leaves i_ after the closing quote.
  Result<std::string> parse_quoted(char quote) {
    const size_t open_line = line_;
    ++i_;
    std::string value;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == quote) {
        ++i_;
        return value;
      }
      if (c == '\r' && i_ + 1 < t_.size() && t_[i_ + 1] == '\n') {  // CRLF inside quotes -> LF
        value += '\n';
        i_ += 2;
        ++line_;
        continue;
      }
      if (c == '\n') ++line_;
      if (c == '\\' && quote == '"') {
        if (i_ + 1 >= t_.size()) break;
        const char e = t_[i_ + 1];
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 'r':
            value += '\r';
            break;
          case 't':
            value += '\t';
            break;
          case '"':
            value += '"';
            break;
          case '\\':
            value += '\\';
            break;
          case '$':
            value += '$';
            break;
          default:
            return fail(line_,
                        "unknown escape sequence in a double-quoted value (known: \\n \\r \\t \\\" \\\\ \\$; "
                        "use single quotes for literal backslashes)");
        }
        i_ += 2;
        continue;
      }
      value += c;
      ++i_;
    }
    return fail(open_line, std::string("the ") + (quote == '"' ? "double" : "single") +
                               "-quoted value that starts on this line is never closed");
  }

  std::string_view t_;
  size_t i_ = 0;
  size_t line_ = 1;
};

}  // namespace

Result<std::map<std::string, std::string>> parse_env_file(std::string_view text) {
  return EnvParser(text).run();
}

Result<std::map<std::string, std::string>> load_env_file(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  // A pipe is the way to pass secrets without a file on disk (`--env-file <(vault ...)`); a named
  // FIFO that nobody writes to fails after the bounded wait instead of hanging the run.
  auto text = base::read_file(path.c_str(), {.max_bytes = kMaxEnvFileBytes, .allow_pipe = true});
  if (!text) {
    const base::ReadError& e = text.error();
    switch (e.code) {
      case base::ReadErrc::open_failed:
        return Error{where + "cannot open the env file: " +
                     std::error_code(e.sys_errno, std::generic_category()).message()};
      case base::ReadErrc::not_regular:
        return Error{where + "the env file is not a regular file or a pipe"};
      case base::ReadErrc::too_large:
        return Error{where + "the env file is larger than " + std::to_string(kMaxEnvFileBytes) + " bytes"};
      case base::ReadErrc::read_failed:
        return Error{where + "cannot read the env file: " +
                     std::error_code(e.sys_errno, std::generic_category()).message()};
      case base::ReadErrc::no_writer:
        return Error{where + "the env file is " + e.message + "; start the writer first, or pass a file"};
    }
    return Error{where + "cannot read the env file: " + e.message};
  }
  auto parsed = parse_env_file(*text);
  if (!parsed) return Error{where + parsed.error().message};
  return parsed;
}

}  // namespace skillbox
