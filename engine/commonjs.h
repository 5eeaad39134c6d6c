// engine/commonjs.h — does a file look like CommonJS, which skillbox cannot run?
//
// skillbox runs ES modules and classic scripts; there is no `require`, `module` or `exports`
// (docs/limits.md "Entry and modules"). A CommonJS file compiles (as a script, or as a module without
// exports) and fails only when it runs, with `ReferenceError: 'module' is not defined`. `skillbox check`
// says so before: it asks this scanner about every file that compiled and has no ES export.
//
// The scan is lexical, not a regular expression over the text: comments, string literals, template
// literals (with their `${...}` parts) and regular-expression literals are skipped as the tokenizer of
// the language skips them, so `"require("` in a string or `// module.exports` in a comment is never a use.
// A use counts only at the top level (outside every `{...}` block, where it runs as the file loads) and
// only for a free name: a property (`x.require(`), a declared name (`var module = ...`,
// `function require() {}`) and a file that tests for the names (`typeof module !== 'undefined'`, the
// universal-module pattern, which runs as a script) are not uses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skillbox::engine {

/// Longest file the scan looks at; a longer one is never reported (the run says what is wrong).
/// Far above any hand-written CommonJS file; the scan is linear, so this only bounds the time spent.
inline constexpr size_t kMaxCommonJsScanBytes = 16ull * 1024 * 1024;

/// A top-level use of CommonJS in a file.
struct CommonJsUse {
  uint32_t line = 0;  // 1-based line of the use
  std::string what;   // as a reader would name it: "require(...)", "module.exports" or "exports.NAME"
};

/// The first top-level use of a free `require(`, `module.exports` or `exports.NAME` / `exports[...]` in
/// `source`, or nullopt when there is none (or the file is longer than kMaxCommonJsScanBytes, or the file
/// tests `typeof` of one of the names). Never throws but std::bad_alloc; time and memory linear in the
/// size of `source`, with nesting of template literals bounded (past kMaxTemplateNesting the scan stops
/// and reports nothing).
[[nodiscard]] std::optional<CommonJsUse> find_commonjs_use(std::string_view source);

/// Deepest nesting of template literals inside `${...}` that the scan follows.
inline constexpr size_t kMaxTemplateNesting = 64;

}  // namespace skillbox::engine
