// fuzz/source_map.cpp — the source-map reader (engine/source_map.h): skill-writable bytes read by the host.
//
// Invariants: reading a map from any JSON text, or an inline map from any file text, never crashes, never
// reads out of bounds, and stays within its caps; lookup() answers one entry per asked line (or nothing for a
// malformed map), each naming a line >= 1; map_stack() returns the stack unchanged when no frame names a
// file of the sources.
#include "engine/source_map.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<uint32_t> lines = {1, 2, 3, 7, 1000, 0};
  if (auto map = skillbox::engine::SourceMap::from_json("dist/index.js", text)) {
    const auto found = map->lookup(lines);
    FUZZ_CHECK(found.empty() || found.size() == lines.size());
    for (const auto& p : found) FUZZ_CHECK(!p || p->line >= 1);
  }
  (void)skillbox::engine::SourceMap::from_inline("a/b.js", text);

  skillbox::bus::SkillSources sources;
  sources.entry = "dist/index.js";
  sources.files["dist/index.js"] = std::string(text);
  const std::string stack = "    at run (dist/index.js:2)\n    at dist/index.js:1\n    at other (x.js:3)\n";
  (void)skillbox::engine::map_stack(stack, sources);
  const std::string unrelated = "    at other (x.js:3)\n";
  FUZZ_CHECK(skillbox::engine::map_stack(unrelated, sources) == unrelated);
  return 0;
}
