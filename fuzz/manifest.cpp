// fuzz/manifest.cpp — skill.json parser (Skill::parse_manifest).
//
// Invariants: never crashes; an error is valid UTF-8 whatever the input was (it may quote the input),
// with one problem per line, each line saying where ("skill.json: ...").
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "skillbox/skillbox.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = skillbox::Skill::parse_manifest(text);
  if (!manifest) skillbox::fuzz::check_error_lines(manifest.error().message, {"skill.json"});
  return 0;
}
