// engine/skill_files.h — the names of a skill's source files, and finding one in memory.
//
// The engine opens no file: the host reads the sources (runner/skill_reader.h) and hands them over as
// bus::SkillSources. This file holds the rules both sides share. Names are skill-relative paths in
// normal form ("index.js", "lib/util.js"): never absolute, no "." or ".." components, no empty
// components. Those are also the names QuickJS sees as module and file names, so stack traces never
// show a host path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bus/skill_sources.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Largest source file the host reads, whatever the heap limit (a larger file could never be
/// compiled).
inline constexpr uint64_t kMaxSourceBytes = 64ull * 1024 * 1024;

/// Resolves `specifier` as imported by the module named `importer` (a normal skill-relative name).
/// Only relative specifiers ("./x.js", "../y.js") resolve; bare names (`std`, `os`, `lodash`),
/// absolute paths, URLs and anything that climbs out of the skill folder are errors that say why.
Result<std::string> resolve_specifier(std::string_view importer, std::string_view specifier);

/// Normalizes a skill-relative path from the manifest ("./src//main.js" -> "src/main.js"). Errors for
/// absolute paths, escapes and empty names.
Result<std::string> normalize_relative(std::string_view path);

/// True if `name` is a file the module loader accepts as a module of the skill: it ends in ".js",
/// ".mjs" or ".cjs". (The entry is loaded whatever its name; the manifest names it.) The host reads an
/// imported file only if its name is one of these (runner/skill_reader.h).
[[nodiscard]] bool is_module_source_name(std::string_view name);

/// How an entry is compiled. `.mjs` is always a module and `.cjs` always a classic script; otherwise a
/// module when JS_DetectModule says so (it starts with `import` or `export`), else a classic script,
/// unless it does not compile as one (an import or export declaration further down): then a module.
/// Session::load_entry, check_code and the host's module requests (engine/module_requests.h) use this.
enum class EntryKind : uint8_t { module, script, script_else_module };
[[nodiscard]] EntryKind entry_kind(std::string_view name, const std::string& source);

/// `name` in single quotes for messages, cut after 200 bytes, control characters shown as '?'.
[[nodiscard]] std::string quote_source_name(std::string_view name);

/// The source text of module `name` (normal form) in `sources`, or an error message about `name`: its
/// refusal ("'x.js' does not exist in the skill folder", "'link.js' leads outside the skill folder"),
/// also one of a folder above it; "'x.txt' is not a JavaScript file: ..."; or, for a name the host
/// never looked for (only a computed import() can ask for one), that it is not among the sources. The
/// pointer stays valid as long as `sources`.
[[nodiscard]] Result<const std::string*> find_module_source(const bus::SkillSources& sources,
                                                            const std::string& name);

/// 1-based line of the first occurrence of `specifier` in quotes ('', "" or ``) in `source`, or 0:
/// where an import that cannot be loaded is written, for `skillbox check` and a run that refuses it.
[[nodiscard]] uint32_t line_of_specifier(const std::string& source, const std::string& specifier);

}  // namespace skillbox::engine
