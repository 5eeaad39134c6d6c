// fuzz/manifest.cpp — skill.json parser (Skill::parse_manifest).
//
// Invariants: never crashes; an error is valid UTF-8 whatever the input was (it may quote the input),
// with one problem per line, each line saying where ("skill.json: ...").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "fuzz/fuzz_check.h"
#include "skillbox/skillbox.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = skillbox::Skill::parse_manifest(text);
  if (!manifest) {
    const std::string& message = manifest.error().message;
    FUZZ_CHECK(!message.empty());
    FUZZ_CHECK(skillbox::base::utf8::is_valid(message));
    size_t line = 0;
    while (line < message.size()) {
      FUZZ_CHECK(std::string_view(message).substr(line).starts_with("skill.json"));
      size_t end = message.find('\n', line);
      line = end == std::string::npos ? message.size() : end + 1;
    }
  }
  return 0;
}
