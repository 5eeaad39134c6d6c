// policy/skill.cpp — Skill::load: find, read and validate a skill folder.
#include <algorithm>
#include <string>
#include <system_error>

#include "base/file_read.h"
#include "base/quote.h"
#include "base/skill_id.h"
#include "policy/ceilings.h"
#include "policy/strict_json.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;

/// True when canonical path `p` is `root` or below it (component-wise, so "/a/bc" is not below "/a/b").
bool is_within(const fs::path& root, const fs::path& p) {
  const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

}  // namespace

Result<Skill> Skill::load(const fs::path& dir, const SkillLoadOptions& options) {
  const std::string shown = base::quote(dir.string(), 200, base::QuoteStyle::json);
  const std::string prefix = "cannot load skill " + shown + ": ";
  if (dir.empty()) return Error{"cannot load skill: no folder given; pass the folder that holds skill.json"};
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return Error{prefix + "no such folder"};
  if (ec) return Error{prefix + ec.message()};
  if (!fs::is_directory(root, ec)) {
    return Error{prefix + "not a folder; pass the folder that holds skill.json"};
  }

  const fs::path manifest_path = fs::canonical(root / "skill.json", ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      return Error{prefix + "no skill.json in the folder; every skill needs one (see docs/manifest.md)"};
    }
    return Error{prefix + "skill.json: " + ec.message()};
  }
  if (!is_within(root, manifest_path)) {
    return Error{prefix + "skill.json is a symbolic link that leads outside the skill folder"};
  }
  // Regular file only, capped, never blocking: a FIFO planted as skill.json must not hang the host.
  auto text = base::read_file(manifest_path.c_str(), {.max_bytes = policy::kMaxManifestBytes});
  if (!text) {
    if (text.error().code == base::ReadErrc::too_large) return Error{policy::manifest_too_large_error()};
    return Error{prefix + "skill.json: " + text.error().message};
  }
  Result<Manifest> manifest = parse_manifest(*text);
  if (!manifest) return manifest.error();
  if (!options.id.empty()) {
    if (!base::is_valid_skill_id(options.id)) {
      return Error{prefix + "the id " + base::quote(options.id, 80) +
                   " given by the host is not valid: expected " + std::string(base::kSkillIdRule)};
    }
    manifest->id =
        options.id;  // the embedder's choice; bound to the folder like any id (state/binding_registry.h)
  }

  // The entry must be a regular file of the skill itself: symbolic links may not lead out of the folder
  // (a skill could otherwise make the host read and run any file it can name).
  const std::string entry = base::quote(manifest->entry, 200, base::QuoteStyle::json);
  const fs::path entry_path = fs::canonical(root / manifest->entry, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      // A skill with a package.json is usually compiled (skillbox init --ts): its entry is build output.
      const bool built = fs::exists(root / "package.json", ec);
      return Error{"skill.json: entry: file " + entry + " not found in the skill folder; " +
                   (built ? "build it first (npm install && npm run build), or fix the path"
                          : "create it or fix the path")};
    }
    return Error{"skill.json: entry: " + entry + ": " + ec.message()};
  }
  if (!is_within(root, entry_path)) {
    return Error{
        "skill.json: entry: " + entry +
        " leads outside the skill folder (through a symbolic link); the entry must be a file of the skill"};
  }
  if (!fs::is_regular_file(entry_path, ec)) {
    return Error{"skill.json: entry: " + entry + " is not a regular file"};
  }
  return Skill(root, std::move(*manifest));
}

}  // namespace skillbox
