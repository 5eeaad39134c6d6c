// server/skill_digest.h — the digest of a skill: one SHA-256 over its files, in a canonical form, so that
// the same files give the same digest wherever they come from (a folder, an upload's JSON map, a tar).
//
// Canonical form, version 1 (docs/server.md "Skill digest"): SHA-256 (libsodium crypto_hash_sha256) of
//
//   "skillbox-skill-digest-1\n"
//   then, for every file in bytewise order of its path (relative to the skill folder, '/' between
//   components, no leading "./"):
//     the byte 'f' (a regular file) or 'l' (a symbolic link, whose content is its target's text),
//     the path's length as 8 bytes big-endian, the path,
//     the content's length as 8 bytes big-endian, the content.
//
// Directories are not entries (an empty one changes nothing); anything else (a FIFO, a device) is left
// out. Written as 64 lower-case hex digits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace skillbox::server {

/// A skill's files: path relative to its folder ('/'-separated) -> bytes. Ordered bytewise (std::string's
/// comparison is memcmp's), which is the digest's order.
using SkillFiles = std::map<std::string, std::string>;

/// Folders larger than this are not digested (their digest is unknown, null in the API): a listing must
/// not read gigabytes. Far above any skill's sources.
inline constexpr uint64_t kMaxDigestBytes = uint64_t{256} << 20;
inline constexpr size_t kMaxDigestEntries = 10'000;

/// The digest of `files`, all regular files.
[[nodiscard]] std::string skill_digest(const SkillFiles& files);

/// The digest of the folder `dir`: its regular files and symbolic links (never followed), at any depth.
/// std::nullopt when it cannot be read whole, or holds more than kMaxDigestEntries entries or
/// kMaxDigestBytes bytes. Remembered per folder with a fingerprint of its entries' metadata (lstat:
/// inode, size, modification and change times), so while nothing below `dir` changes, a call stats
/// the entries and reads no file. Thread-safe.
[[nodiscard]] std::optional<std::string> folder_digest(const std::filesystem::path& dir);

/// True when `text` is 64 lower-case hex digits (the form of a digest).
[[nodiscard]] bool is_digest(std::string_view text);

}  // namespace skillbox::server
