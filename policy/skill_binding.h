// policy/skill_binding.h — the data directory's record of which skill folder owns a skill id.
//
// An id scopes a skill's store rows, its workspace (`DATA/skills/<id>/workspace`) and what an operator
// grants it, so a folder must not obtain another folder's data just by writing that id into its
// manifest (SECURITY-CASES "Identity"). The first invocation of an id binds it to the canonical path of
// its folder in `DATA/bindings/<id>`; later invocations from any other folder are refused until the
// operator rebinds the id (`skillbox skills rebind`, skillbox::rebind_skill). docs/manifest.md
// "Identity" gives the rule for users.
//
// The owner file is exactly kOwnerHeader, the canonical absolute folder path, and "\n". It is written
// whole into a temporary file beside it, fsynced, and then published with link(2) (first binding: fails
// with EEXIST when another process won the race, so exactly one first run becomes the owner) or
// rename(2) (rebinding: atomic replacement). A reader therefore sees no owner file or a complete one;
// anything else in it is reported as damaged and never silently replaced.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "skillbox/result.h"
#include "skillbox/skillbox.h"

namespace skillbox::policy {

/// First line of every owner file; a later format would change the number.
inline constexpr std::string_view kOwnerHeader = "skillbox-owner 1\n";

/// The folder of every owner file: `data_dir/bindings`. It is kept apart from `data_dir/skills/<id>/`
/// (the workspace's folder), which a skill whose permissions.fs.mode is "none" never gets: binding an
/// id writes nothing there. Temporary owner files in it start with '.', which no skill id does.
[[nodiscard]] std::filesystem::path bindings_dir(const std::filesystem::path& data_dir);

/// The owner file of `id` in `data_dir`: `data_dir/bindings/<id>`.
[[nodiscard]] std::filesystem::path owner_file(const std::filesystem::path& data_dir, std::string_view id);

/// Binds `id` to the canonical form of `dir` in `data_dir` if the id has no owner yet, creating
/// `data_dir/bindings/` (0700) as needed, and returns the owner. When the id is already bound to
/// the same canonical folder, changes nothing and returns it. Errors (the message says what to do):
/// an invalid id, `dir` missing or not a folder, the id bound to another folder (with the command that
/// rebinds it), a damaged owner file, or the data directory not writable. Safe against concurrent
/// callers in several threads or processes: exactly one first binding wins, the others see its owner.
[[nodiscard]] Result<SkillBinding> bind_skill_id(const std::filesystem::path& data_dir, std::string_view id,
                                                 const std::filesystem::path& dir);

/// The read-only half of bind_skill_id: ok when `id` has no owner yet or `dir` owns it; otherwise the
/// same error bind_skill_id returns. Writes nothing (a run that never touches its data leaves no trace
/// in the data directory; the binding is written at its first store, workspace or env request).
[[nodiscard]] Result<void> check_skill_id(const std::filesystem::path& data_dir, std::string_view id,
                                          const std::filesystem::path& dir);

/// Makes the canonical form of `dir` the owner of `id` in `data_dir`, replacing any owner (a damaged
/// owner file included) atomically. Errors: an invalid id, `dir` missing or not a folder, the data
/// directory not writable.
[[nodiscard]] Result<SkillBinding> rebind_skill_id(const std::filesystem::path& data_dir, std::string_view id,
                                                   const std::filesystem::path& dir);

}  // namespace skillbox::policy
