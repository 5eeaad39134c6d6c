// fuzz/manifest.cpp — skill.json parser (Skill::parse_manifest).
//
// Invariants: never crashes; an error is a one-line message that says where ("skill.json: ...") and is
// valid UTF-8 whatever the input was (the message may quote the input).
#include <cstddef>
#include <cstdint>
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
    FUZZ_CHECK(message.find('\n') == std::string::npos);
  }
  return 0;
}
