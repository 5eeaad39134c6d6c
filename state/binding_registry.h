// state/binding_registry.h — which skill folder owns a skill id.
//
// An id scopes a skill's store rows, its workspace and what an operator grants it, so a folder must not
// obtain another folder's data just by writing that id into its manifest (docs/security.md "Identity").
// The first invocation of an id binds it to the canonical path of its folder; later invocations from any
// other folder are refused until the operator rebinds the id (`skillbox skills rebind`,
// skillbox::rebind_skill). docs/manifest.md "Identity" gives the rule for users.
//
// Local registry (make_local_binding_registry): one owner file per id, DataLayout::owner_file(id),
// holding exactly kOwnerHeader, the canonical absolute folder path, and "\n". It is written whole into a
// temporary file beside it, fsynced, and then published with link(2) (first binding: fails with EEXIST
// when another process won the race, so exactly one first run becomes the owner) or rename(2)
// (rebinding: atomic replacement). A reader therefore sees no owner file or a complete one; anything else
// in it is reported as damaged and never silently replaced. The bindings folder is kept apart from
// `skills/<id>/` (the workspace's folder), which a skill whose permissions.fs.mode is "none" never gets:
// binding an id writes nothing there. Temporary owner files start with '.', which no skill id does.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/result.h"
#include "skillbox/skillbox.h"
#include "state/data_layout.h"

namespace skillbox::state {

/// First line of every local owner file; a later format would change the number.
inline constexpr std::string_view kOwnerHeader = "skillbox-owner 1\n";

/// The registry of one tenant. Every method is safe from many threads and processes at once. Folders are
/// compared in canonical form (symbolic links resolved). Every error message says what to do.
class BindingRegistry {
 public:
  virtual ~BindingRegistry() = default;

  /// Binds `id` to `dir` if the id has no owner yet, and returns the owner. When `dir` already owns it,
  /// changes nothing. Errors: an invalid id, `dir` missing or not a folder, the id bound to another
  /// folder (with the command that rebinds it), a damaged record, the storage not writable. Of
  /// concurrent first bindings exactly one wins; the others see its owner.
  [[nodiscard]] virtual Result<SkillBinding> bind(std::string_view id, const std::filesystem::path& dir) = 0;

  /// The read-only half of bind(): ok when `id` has no owner yet or `dir` owns it; otherwise the error
  /// bind() would return. Writes nothing (a run that never touches its data leaves no trace).
  [[nodiscard]] virtual Result<void> check(std::string_view id, const std::filesystem::path& dir) const = 0;

  /// Makes `dir` the owner of `id`, replacing any owner (a damaged record included) atomically. Errors:
  /// an invalid id, `dir` missing or not a folder, the storage not writable.
  [[nodiscard]] virtual Result<SkillBinding> rebind(std::string_view id,
                                                    const std::filesystem::path& dir) = 0;

  /// Every bound id, sorted by id; an id whose record cannot be read is listed with `problem` set.
  /// Nothing bound yet (no storage yet): an empty list. Changes nothing.
  [[nodiscard]] virtual Result<std::vector<SkillBinding>> list() const = 0;
};

/// The registry in the data directory `layout` (owner files, see above). An empty layout gives a registry
/// whose every call fails with a message saying to set a data directory.
[[nodiscard]] std::shared_ptr<BindingRegistry> make_local_binding_registry(const DataLayout& layout);

}  // namespace skillbox::state
