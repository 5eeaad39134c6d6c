// fuzz/workspace_path.cpp — the workspace path resolver (capabilities/fs/workspace_path.h).
//
// Invariants: an accepted path is a list of visible, valid components (no "", ".", "..", "/", NUL,
// reserved prefix), so it cannot leave the workspace lexically; normalising its relative() form again
// gives the same components; every error message is valid UTF-8.
#include "capabilities/fs/workspace_path.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/utf8.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cap = skillbox::capabilities;
  std::string_view given(reinterpret_cast<const char*>(data), size);
  auto path = cap::parse_workspace_path("readFile", given);
  if (!path) {
    FUZZ_CHECK(skillbox::base::utf8::is_valid(path.error().message));
    return 0;
  }
  for (const std::string& component : path->components()) {
    FUZZ_CHECK(cap::is_visible_name(component));
  }
  auto again = cap::parse_workspace_path("readFile", path->relative());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->components() == path->components());
  return 0;
}
