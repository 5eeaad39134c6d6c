#include "engine/skill_files.h"

#include <quickjs.h>

#include <string>
#include <vector>

namespace skillbox::engine {
namespace {

Error error(std::string message) {
  return Error{std::move(message)};
}

std::string quote_name(std::string_view s) {
  // Names come from skill code: keep messages short and free of control characters.
  constexpr size_t kMaxShown = 200;
  std::string out = "'";
  for (char c : s.substr(0, kMaxShown)) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (s.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

// Appends the components of `path` to `parts`, resolving "." and "..". False if ".." climbs above
// the skill folder.
bool append_components(std::vector<std::string_view>& parts, std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  return true;
}

std::string join(const std::vector<std::string_view>& parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

}  // namespace

Result<std::string> normalize_relative(std::string_view path) {
  if (path.empty()) return error("the path is empty");
  if (path.find('\0') != std::string_view::npos)
    return error("the path " + quote_name(path) + " contains a NUL byte");
  if (path.front() == '/')
    return error("the path " + quote_name(path) + " is absolute; use a path relative to the skill folder");
  std::vector<std::string_view> parts;
  if (!append_components(parts, path))
    return error("the path " + quote_name(path) + " leads outside the skill folder");
  if (parts.empty())
    return error("the path " + quote_name(path) + " names the skill folder itself, not a file");
  return join(parts);
}

Result<std::string> resolve_specifier(std::string_view importer, std::string_view specifier) {
  if (specifier.find('\0') != std::string_view::npos)
    return error("cannot import " + quote_name(specifier) + ": the specifier contains a NUL byte");
  const bool relative = specifier.starts_with("./") || specifier.starts_with("../");
  if (!relative) {
    if (specifier.starts_with("/"))
      return error("cannot import " + quote_name(specifier) +
                   ": absolute paths are not allowed; import files of the skill with './' or '../'");
    return error("cannot import " + quote_name(specifier) +
                 ": only files of the skill can be imported, with a relative specifier such as './lib.js' "
                 "(there are no built-in modules)");
  }
  std::vector<std::string_view> parts;
  const size_t slash = importer.rfind('/');
  if (slash != std::string_view::npos) append_components(parts, importer.substr(0, slash));
  if (!append_components(parts, specifier))
    return error("cannot import " + quote_name(specifier) + ": it leads outside the skill folder");
  if (parts.empty())
    return error("cannot import " + quote_name(specifier) + ": it names a folder, not a file");
  return join(parts);
}

bool is_module_source_name(std::string_view name) {
  return name.ends_with(".js") || name.ends_with(".mjs") || name.ends_with(".cjs");
}

EntryKind entry_kind(std::string_view name, const std::string& source) {
  if (name.ends_with(".mjs")) return EntryKind::module;
  if (name.ends_with(".cjs")) return EntryKind::script;
  return JS_DetectModule(source.c_str(), source.size()) != 0 ? EntryKind::module
                                                             : EntryKind::script_else_module;
}

std::string quote_source_name(std::string_view name) {
  return quote_name(name);
}

Result<const std::string*> find_module_source(const bus::SkillSources& sources, const std::string& name) {
  if (auto it = sources.files.find(name); it != sources.files.end()) return &it->second;
  // A refusal of the name itself, or of a folder above it (a link to a folder outside).
  for (std::string prefix = name;;) {
    if (auto it = sources.refused.find(prefix); it != sources.refused.end())
      return error(quote_name(name) + " " + it->second);
    const size_t slash = prefix.rfind('/');
    if (slash == std::string::npos) break;
    prefix.resize(slash);
  }
  if (!is_module_source_name(name))
    return error(quote_name(name) + " is not a JavaScript file: modules of a skill end in .js, .mjs or .cjs");
  // The host looked for the entry and for every file imported by a literal specifier, and put the
  // missing ones in `refused`; any other name can only come from a computed import().
  if (name == sources.entry) return error(quote_name(name) + " does not exist in the skill folder");
  // Short: QuickJS cuts a thrown message at 256 bytes, "cannot load module: " and the name included.
  return error(quote_name(name) +
               " is not among the skill's sources (the entry and the files it imports by a string literal, "
               "transitively): import() with a computed specifier loads only those");
}

uint32_t line_of_specifier(const std::string& source, const std::string& specifier) {
  for (const char quote : {'\'', '"', '`'}) {
    const std::string needle = quote + specifier + quote;
    const size_t at = source.find(needle);
    if (at == std::string::npos) continue;
    uint32_t line = 1;
    for (size_t i = 0; i < at; ++i) line += source[i] == '\n' ? 1u : 0u;
    return line;
  }
  return 0;
}

}  // namespace skillbox::engine
