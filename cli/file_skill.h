// cli/file_skill.h — `skillbox run FILE.js`: one JavaScript file run as a skill without a manifest, for
// quick experiments (as `deno run` does).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cli/options.h"
#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// The skill `skillbox run FILE` runs: FILE's folder, FILE as the entry (it imports from beside it as
/// a skill's entry does), the default limits and deny-all permissions, plus what the command line
/// grants, since there is no manifest for it to narrow:
///   --allow-http PREFIX  those URLs, with every method skill.json can grant; when every prefix names
///                        a loopback host (127.0.0.1, [::1], localhost), connecting to loopback too;
///   --fs-mode MODE       a workspace with that mode.
/// --deny-net and --deny-env change nothing (nothing is granted). The id is the file's stem and a hash
/// of its canonical path ("scratch-1a2b3c4d" for /tmp/scratch.js), so the store and the workspace of
/// two files of the same name stay apart. Errors name the flag or the file and say what to do.
[[nodiscard]] Result<Skill> file_skill(const std::filesystem::path& file, const NarrowingFlags& grants);

/// "ENTRY is TypeScript, which skillbox does not run: ..." with how to compile it, when `entry` ends in
/// .ts, .mts, .cts or .tsx; std::nullopt otherwise. `skillbox check` and `skillbox run` both say it.
[[nodiscard]] std::optional<std::string> typescript_entry_problem(std::string_view entry);

/// "index.ts changed after dist/index.js was built; ..." when a TypeScript file of the skill's folder
/// (below it, leaving out node_modules and dot names; at most 2,000 entries looked at) was modified
/// after the entry: the run would use the old build. std::nullopt otherwise. `run` and `test` print it.
[[nodiscard]] std::optional<std::string> stale_build_note(const Skill& skill);

}  // namespace skillbox::cli
