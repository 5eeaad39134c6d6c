// engine/source_map.h — stack frames of a built file mapped back to the file it was built from.
//
// A TypeScript skill runs as the JavaScript its build wrote (`skillbox init --ts`: esbuild bundles
// index.ts into dist/index.js), so QuickJS's frames name dist/index.js and its lines. When that file ends
// with an inline source map (esbuild's `--sourcemap=inline`: a last line
// `//# sourceMappingURL=data:application/json;base64,...`), the frames of an error's stack are rewritten
// to the original file and line (`at run (dist/index.js:40)` -> `at run (index.ts:12)`).
//
// The map is Source Map Revision 3 (https://tc39.es/ecma426/): JSON with `version` 3, `sources`,
// optional `sourceRoot`, and `mappings`, Base64 VLQ segments, `;` between generated lines. QuickJS 2021
// frames carry a line and no column, so a generated line maps to the first segment of that line that
// names a source. Only inline maps are read (the engine opens no file). The map is skill-writable
// bytes read by the host (in the sandboxed worker in process isolation): everything is bounded, and a
// map that is malformed in any way (bad base64, JSON, VLQ, a value out of range) is ignored whole,
// leaving the frames as QuickJS wrote them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bus/skill_sources.h"

namespace skillbox::engine {

/// Largest source map read, as JSON text after base64 decoding. A map holds the original sources too
/// (`sourcesContent`), so it is about the size of the code; a bigger one is ignored.
inline constexpr size_t kMaxSourceMapBytes = 8ull * 1024 * 1024;
/// Longest original file name used in a frame; a longer one leaves the frame as it is.
inline constexpr size_t kMaxMappedNameBytes = 512;

/// The original position of a generated line.
struct SourcePosition {
  std::string source;  // the original file, relative to the skill folder when the map says so
  uint32_t line = 0;   // 1-based
};

/// A source map read from a built file: what `lookup` needs, nothing else.
class SourceMap {
 public:
  /// The map of the inline `sourceMappingURL` comment on the last non-blank line of `generated_source`,
  /// the text of the skill file `generated_name` (skill-relative: the map's `sources` are relative to
  /// its folder). nullopt when there is none, it is not a base64 `data:application/json` URL, or the map
  /// is malformed or too big.
  [[nodiscard]] static std::optional<SourceMap> from_inline(std::string_view generated_name,
                                                            std::string_view generated_source);
  /// The same from the map's JSON text (tests, fuzzing).
  [[nodiscard]] static std::optional<SourceMap> from_json(std::string_view generated_name,
                                                          std::string_view json);

  /// Original positions of the 1-based generated `lines`, in the same order (nullopt for a line the map
  /// does not cover). One pass over the mappings. Empty when the mappings turn out malformed.
  [[nodiscard]] std::vector<std::optional<SourcePosition>> lookup(const std::vector<uint32_t>& lines) const;

 private:
  std::vector<std::string> sources_;  // resolved names
  std::string mappings_;
};

/// A `FILE:LINE` in a stack: where FILE starts and LINE ends, the file and the line.
struct StackFrame {
  size_t begin = 0;
  size_t end = 0;
  std::string file;
  uint32_t line = 0;
};

/// Every `NAME:DIGITS` of `stack` whose NAME is a file of `sources` (as QuickJS writes a frame:
/// `    at f (NAME:LINE)` or, for a syntax error, `    at NAME:LINE`), in order.
[[nodiscard]] std::vector<StackFrame> stack_frames(const std::string& stack,
                                                   const bus::SkillSources& sources);

/// `stack` with every frame `FILE:LINE` whose FILE is one of `sources` with an inline source map rewritten
/// to the original file and line. Frames of other files, and lines the map does not cover, are left as
/// they are; so is the whole stack when anything fails (out of memory included). Never throws.
[[nodiscard]] std::string map_stack(const std::string& stack, const bus::SkillSources& sources);

}  // namespace skillbox::engine
