// bus/skill_sources.h — a skill's JavaScript as the engine receives it: in memory, read by the host.
//
// The engine never opens a file (docs/architecture.md "Layers"): the host reads the skill folder
// (runner/skill_reader.h) and hands the result to the engine, in-process directly and in worker mode
// inside the invocation frame (there the entry and cached files only; the worker walks the graph and
// asks for the rest with bus::SourcesRequest, engine/module_graph.h). Plain values only, so the struct can be
// encoded as it is.
//
// Names are skill-relative paths in normal form ("index.js", "lib/util.js"; engine/skill_files.h):
// never absolute, no "." or ".." components, no empty components. They are the names QuickJS sees as
// module and file names, so stack traces never show a host path.
#pragma once

#include <map>
#include <string>

namespace skillbox::bus {

struct SkillSources {
  /// Name of the entry file (the manifest's `entry` in normal form). Always a key of `files` when
  /// the host built the struct.
  std::string entry;
  /// Source text of the entry's module graph, by name: the entry and every file it imports with a
  /// literal specifier, transitively (runner/skill_reader.h), whose name the module loader accepts
  /// (engine::is_module_source_name).
  std::map<std::string, std::string> files;
  /// Names the host looked for and cannot be loaded, with the reason as the end of a sentence about
  /// the name ("does not exist in the skill folder", "leads outside the skill folder", "is not a
  /// regular file", "is too large (...)"). A folder's name here covers every name below it (a symbolic
  /// link to a folder). A name in neither map was never looked for: only a computed import() asks
  /// for one.
  std::map<std::string, std::string> refused;

  bool operator==(const SkillSources&) const = default;
};

}  // namespace skillbox::bus
