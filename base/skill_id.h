// base/skill_id.h — the rule for skill ids, shared by the manifest, the store and the workspace.
//
// An id names a folder (`skills/<id>/`) and scopes store rows, so it must never be able to name
// another folder ("..", "a/b", NUL) or differ only in case on a case-insensitive filesystem.
#pragma once

#include <cstddef>
#include <string_view>

namespace skillbox::base {

/// Longest skill id, in bytes.
inline constexpr size_t kMaxSkillIdBytes = 64;

/// The rule in words, for error messages ("expected ...").
inline constexpr std::string_view kSkillIdRule =
    "1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit";

/// True when `id` matches [a-z0-9][a-z0-9._-]{0,63}. Such an id is never "." or "..", and never
/// contains '/' or NUL.
[[nodiscard]] bool is_valid_skill_id(std::string_view id);

}  // namespace skillbox::base
