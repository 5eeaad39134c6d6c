// engine/module_graph.h — the walk of an entry's module graph, one implementation for both modes.
//
// A skill's sources are its entry's module graph (runner/skill_reader.h): the entry, every file it
// imports, every file those import, and so on. What a file imports is known only by parsing it
// (engine/module_requests.h), and parsing is the engine's attack surface: it runs where the engine
// runs. In-process that is the host (the engine is there anyway); in worker mode it is the sandboxed
// worker, never the supervisor (docs/isolation.md "What the supervisor does"). The walk is the same in
// both; only how the files are fetched differs: in-process the host's reader opens them directly, in
// worker mode the worker asks its supervisor with a bus::SourcesRequest and the supervisor reads them
// with the same reader.
//
// Breadth first, one level at a time: the files of a level are parsed in order, the new names they
// import are fetched together, in the order they were found. That is the order in which a read one
// file at a time would open them, so which cap is hit first follows the sources alone.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bus/skill_sources.h"
#include "engine/module_requests.h"
#include "skillbox/skillbox.h"

namespace skillbox::engine {

/// Fetches the files named `names` (normal form, module source names, none fetched before) into
/// `pool`: each name's text into pool.files or why it cannot be loaded into pool.refused (a folder
/// above it may be refused instead). An Error ends the walk (a cap exceeded, the folder unreadable):
/// its message is the run's `invalid` message.
using FetchSources =
    std::function<Result<void>(const std::vector<std::string>& names, bus::SkillSources& pool)>;

/// Walks the module graph of `pool.entry`, whose text must be in pool.files. `pool` may hold other
/// files and refusals already (a cache's): those are used without fetching; every other name is
/// fetched through `fetch`. Returns the graph and nothing else: the entry, each file reached, and the
/// refusals of names reached (or of the folders above them). `parser` must have been made on this
/// thread (engine/module_requests.h).
[[nodiscard]] Result<bus::SkillSources> walk_module_graph(bus::SkillSources pool, ModuleRequestParser& parser,
                                                          const FetchSources& fetch);

}  // namespace skillbox::engine
