// fuzz/fuzz_check.h — the invariant check of the fuzz targets.
//
// A broken invariant is a finding: FUZZ_CHECK prints what was expected and aborts, so libFuzzer saves
// the input as a crash file. Sanitizer reports and crashes are findings too, without any check.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

#include "base/utf8.h"

#define FUZZ_CHECK(condition)                                                                \
  do {                                                                                       \
    if (!(condition)) {                                                                      \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (false)

namespace skillbox::fuzz {

/// The shape of a manifest error: not empty, valid UTF-8 whatever the input was, one problem per
/// line, each line starting with the name of a file it is about (one of `files`).
inline void check_error_lines(const std::string& message, std::initializer_list<std::string_view> files) {
  FUZZ_CHECK(!message.empty());
  FUZZ_CHECK(skillbox::base::utf8::is_valid(message));
  size_t line = 0;
  while (line < message.size()) {
    const std::string_view rest = std::string_view(message).substr(line);
    bool named = false;
    for (std::string_view file : files) named = named || rest.starts_with(file);
    FUZZ_CHECK(named);
    const size_t end = message.find('\n', line);
    line = end == std::string::npos ? message.size() : end + 1;
  }
}

}  // namespace skillbox::fuzz
