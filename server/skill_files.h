// server/skill_files.h — a skill's files as a client sends them (PUT /v1/skills/{id}, POST /v1/run):
// a JSON map {"PATH": "TEXT", ...} or a tar archive, checked before a byte reaches the disk.
//
// A path is relative to the skill's folder: 1 to kMaxFilePathBytes bytes of UTF-8, components joined
// by single '/', each 1 to 255 bytes, none "." or "..", no NUL or other control character, at most
// kMaxFileDepth components. Nothing is normalized (a tar's leading "./" aside): "a//b", "/a", "a/../b"
// are refused, never rewritten. A tar (read by libarchive) may hold regular files and directories
// only: a symbolic link, a hard link, a device or a FIFO is refused, as is a path given twice or a file
// that is also a directory of another path. Bounds (UploadBounds) are checked while reading, so an
// archive that claims a huge file is refused before its bytes are held.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "server/skill_catalog.h"
#include "server/skill_digest.h"
#include "skillbox/result.h"

namespace skillbox::server {

/// Longest file path accepted, in bytes; deepest nesting, in components.
inline constexpr size_t kMaxFilePathBytes = 1024;
inline constexpr size_t kMaxFileDepth = 32;

/// How much one skill may hold (the tenant's `code` table, docs/server.md).
struct UploadBounds {
  size_t max_files = 1000;
  uint64_t max_bytes = uint64_t{8} << 20;  // sum of the files' sizes
};

/// Empty when `path` follows the rule above, else what is wrong with it.
[[nodiscard]] std::string file_path_problem(std::string_view path);

/// Problems are SkillProblem: 400 `invalid_files` (malformed: the message names the file and the rule), 413
/// `upload_too_large` (over a bound).
/// The files of a JSON object {"PATH": "TEXT", ...} (text only: each value a JSON string).
[[nodiscard]] Result<SkillFiles, SkillProblem> files_from_json(const nlohmann::json& files,
                                                               const UploadBounds& bounds);

/// The files of the tar archive `bytes` (ustar, pax or GNU; uncompressed).
[[nodiscard]] Result<SkillFiles, SkillProblem> files_from_tar(std::string_view bytes,
                                                              const UploadBounds& bounds);

}  // namespace skillbox::server
