// engine/skill_files.h — reading the source files of a skill, confined to the skill folder.
//
// This is the one place the engine reads skill code from disk. Names are skill-relative paths in
// normal form ("index.js", "lib/util.js"): never absolute, no "." or ".." components, no empty
// components. Those are also the names QuickJS sees as module and file names, so stack traces never
// show a host path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Resolves `specifier` as imported by the module named `importer` (a normal skill-relative name).
/// Only relative specifiers ("./x.js", "../y.js") resolve; bare names (`std`, `os`, `lodash`),
/// absolute paths, URLs and anything that climbs out of the skill folder are errors that say why.
Result<std::string> resolve_specifier(std::string_view importer, std::string_view specifier);

/// Normalizes a skill-relative path from the manifest ("./src//main.js" -> "src/main.js"). Errors for
/// absolute paths, escapes and empty names.
Result<std::string> normalize_relative(std::string_view path);

/// An open skill folder. Reads are resolved beneath it by the kernel (openat2 RESOLVE_BENEATH), so a
/// symlink that leads outside the folder is refused like a ".." escape.
class SkillFiles {
 public:
  /// Largest source file read, whatever the heap limit (a larger file could never be compiled).
  static constexpr uint64_t kMaxSourceBytes = 64ull * 1024 * 1024;

  /// Opens `dir`. Errors (for the host, may name the host path) if it is not a readable directory.
  static Result<SkillFiles> open(const std::filesystem::path& dir);

  SkillFiles(SkillFiles&& other) noexcept;
  SkillFiles& operator=(SkillFiles&& other) noexcept;
  SkillFiles(const SkillFiles&) = delete;
  SkillFiles& operator=(const SkillFiles&) = delete;
  ~SkillFiles();

  /// Reads the file named `name` (normal form), at most `max_bytes`. Error messages name only `name`.
  Result<std::string> read(const std::string& name, uint64_t max_bytes) const;

 private:
  explicit SkillFiles(int dir_fd) : dir_fd_(dir_fd) {}
  int dir_fd_ = -1;
};

}  // namespace skillbox::engine
