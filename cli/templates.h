// cli/templates.h — the files `skillbox init` writes, built into the binary.
//
// The sources are cli/templates/{js,ts}/* and types/skillbox.d.ts; cmake/EmbedFiles.cmake turns them
// into a table at configure time. Text may hold "{{id}}" and "{{name}}", which init replaces.
#pragma once

#include <span>
#include <string_view>

namespace skillbox::cli {

struct EmbeddedFile {
  std::string_view name;  // "js/index.js", "ts/package.json", "skillbox.d.ts"
  std::string_view text;
};

/// Every template file, in the order CMake listed them.
[[nodiscard]] std::span<const EmbeddedFile> template_files();

}  // namespace skillbox::cli
