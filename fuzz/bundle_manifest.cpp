// fuzz/bundle_manifest.cpp — the OpenHuman manifest.json adapter (compat::adapt_bundle_manifest).
//
// The input is manifest.json; when it holds a NUL byte, the bytes after the first NUL are the
// operator's skill.json beside it (the grants), and the bytes before it the manifest.
// Invariants: never crashes; an error is valid UTF-8 with one problem per line, each line naming the
// file it is about (manifest.json or skill.json); an accepted bundle has the openhuman format and its
// BundleManifest, records whether grants were given, keeps memory within memory_limit_mb, and without
// a skill.json grants nothing: no fs, no http, no env (the bundle only asks; the operator grants).
#include "compat/bundle_manifest.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view manifest_text = input;
  std::optional<std::string_view> grant_text;
  if (size_t nul = input.find('\0'); nul != std::string_view::npos) {
    manifest_text = input.substr(0, nul);
    grant_text = input.substr(nul + 1);
  }
  auto manifest = skillbox::compat::adapt_bundle_manifest(manifest_text, grant_text);
  if (!manifest) {
    skillbox::fuzz::check_error_lines(manifest.error().message, {"manifest.json", "skill.json"});
    return 0;
  }
  FUZZ_CHECK(manifest->format == skillbox::SkillFormat::openhuman);
  FUZZ_CHECK(manifest->bundle.has_value());
  FUZZ_CHECK(manifest->bundle->has_grants == grant_text.has_value());
  if (manifest->bundle->memory_limit_mb)
    FUZZ_CHECK(manifest->limits.memory_bytes <= *manifest->bundle->memory_limit_mb * 1024 * 1024);
  if (!grant_text) {
    FUZZ_CHECK(manifest->permissions.fs.mode == skillbox::FsMode::none);
    FUZZ_CHECK(manifest->permissions.http.allow.entries().empty());
    FUZZ_CHECK(manifest->permissions.env.empty());
  }
  return 0;
}
