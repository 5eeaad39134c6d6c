// engine/module_graph.cpp — see module_graph.h.
#include "engine/module_graph.h"

#include <set>
#include <utility>

#include "engine/skill_files.h"

namespace skillbox::engine {
namespace {

/// The refusal that covers `name` in `pool`: its own, or that of a folder above it.
const std::string* refusal_of(const bus::SkillSources& pool, const std::string& name, std::string& key) {
  if (auto it = pool.refused.find(name); it != pool.refused.end()) {
    key = name;
    return &it->second;
  }
  for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
    if (auto it = pool.refused.find(name.substr(0, slash)); it != pool.refused.end()) {
      key = it->first;
      return &it->second;
    }
  }
  return nullptr;
}

bool known(const bus::SkillSources& pool, const std::string& name) {
  std::string key;
  return pool.files.count(name) != 0 || refusal_of(pool, name, key) != nullptr;
}

}  // namespace

Result<bus::SkillSources> walk_module_graph(bus::SkillSources pool, ModuleRequestParser& parser,
                                            const FetchSources& fetch) {
  bus::SkillSources graph;
  graph.entry = pool.entry;
  auto entry = pool.files.find(pool.entry);
  if (entry == pool.files.end())
    return Error{"entry file " + quote_source_name(pool.entry) + " was not read"};
  const std::string& entry_text = graph.files.emplace(entry->first, std::move(entry->second)).first->second;
  pool.files.erase(entry);

  std::set<std::string> seen{graph.entry};
  // The files of the level being parsed, as keys of graph.files.
  std::vector<std::string> level{graph.entry};
  bool first = true;
  while (!level.empty()) {
    // Every new name the level imports, in the order found. A specifier that does not resolve (a bare
    // name, an escape) or names no module file loads nothing from the folder: the loader says why when
    // the skill compiles.
    std::vector<std::string> found;
    for (const std::string& importer : level) {
      const std::string& text = graph.files.at(importer);
      const ModuleRequests requests =
          first ? parser.entry(importer, entry_text) : parser.module(importer, text);
      for (const std::string& specifier : requests.specifiers) {
        auto name = resolve_specifier(importer, specifier);
        if (!name || !is_module_source_name(*name)) continue;
        if (seen.insert(*name).second) found.push_back(std::move(*name));
      }
      first = false;
    }
    std::vector<std::string> missing;
    for (const std::string& name : found)
      if (!known(pool, name)) missing.push_back(name);
    if (!missing.empty()) {
      if (Result<void> fetched = fetch(missing, pool); !fetched) return fetched.error();
    }
    level.clear();
    for (const std::string& name : found) {
      if (auto it = pool.files.find(name); it != pool.files.end()) {
        graph.files.emplace(name, std::move(it->second));
        pool.files.erase(it);
        level.push_back(name);
        continue;
      }
      std::string key;
      if (const std::string* why = refusal_of(pool, name, key)) graph.refused.emplace(key, *why);
      // Neither: the fetch left it out. Loading it fails then ("not among the sources").
    }
  }
  return graph;
}

}  // namespace skillbox::engine
