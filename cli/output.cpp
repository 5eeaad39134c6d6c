// cli/output.cpp — writing to stdout/stderr, and the one shape of skillbox's own messages.
#include "cli/output.h"

#include "base/escape.h"
#include "base/quote.h"

namespace skillbox::cli {

void emit(std::FILE* stream, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stream) != text.size()) return;  // error flag is set
  if (std::fflush(stream) != 0) return;                                         // likewise
}

std::string message(std::string_view folder, std::string_view text) {
  std::string prefix = "skillbox: ";
  if (!folder.empty()) prefix += base::escape_text(folder) + ": ";
  const std::string escaped = base::escape_text(text, /*keep_newlines=*/true);
  std::string out;
  size_t at = 0;
  do {
    const size_t end = escaped.find('\n', at);
    const size_t stop = end == std::string::npos ? escaped.size() : end;
    out += prefix + escaped.substr(at, stop - at) + "\n";
    at = stop + 1;
  } while (at < escaped.size());
  return out;
}

void say(std::string_view folder, std::string_view text) {
  emit(stderr, message(folder, text));
}

std::string load_problem(std::string_view dir, std::string text) {
  // The prefix policy/skill.cpp (Skill::load) builds; cli_test pins the result for a missing folder.
  const std::string named = "cannot load skill " + base::quote(dir, 200, base::QuoteStyle::json) + ": ";
  if (text.starts_with(named)) text.erase(0, named.size());
  return text;
}

}  // namespace skillbox::cli
