// fuzz/env_file.cpp — the dotenv parser (skillbox/env_file.h).
//
// Invariants: never crashes; an error never quotes a value or an unparsed line (either could be a
// secret): the only input it may repeat is a variable name (in "NAME is already set"), so the message is
// printable ASCII and, apart from that one message, short. Every parsed name is a valid variable name.
#include "skillbox/env_file.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"

namespace {

bool is_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) {
    return false;
  }
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = skillbox::parse_env_file(text);
  if (!parsed) {
    const std::string& message = parsed.error().message;
    for (char c : message) {
      FUZZ_CHECK(c >= 0x20 && c < 0x7f);
    }
    if (message.find(" is already set on line ") == std::string::npos) {
      FUZZ_CHECK(message.size() <= 240);
    }
    return 0;
  }
  for (const auto& [name, value] : *parsed) {
    FUZZ_CHECK(is_name(name));
  }
  return 0;
}
