// compat/bundle_manifest.h — OpenHuman manifest.json (+ the operator's skill.json) into a Manifest.
//
// skillbox::load_skill() (skillbox/skillbox.h) reads the files; this is the part that needs no disk,
// for tests and embedders. docs/openhuman.md "Loading a bundle" gives the rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "skillbox/skillbox.h"

namespace skillbox::compat {

/// `permissions.db.quota_bytes` range: below 64 KiB SQLite cannot hold its schema pages; above 1 GiB
/// is host disk space no bundle needs.
inline constexpr uint64_t kMinDbQuotaBytes = 64ull * 1024;
inline constexpr uint64_t kMaxDbQuotaBytes = 1024ull * 1024 * 1024;

/// Validates `manifest_text` (manifest.json) and the operator's `grant_text` (skill.json beside it:
/// only `limits` and `permissions`; nullopt when there is none, which grants nothing). The result has
/// format == SkillFormat::openhuman and `bundle` set; memory_limit_mb lowers limits.memory_bytes.
/// Every problem is reported at once, one per line, naming the file and key path.
Result<Manifest> adapt_bundle_manifest(std::string_view manifest_text,
                                       std::optional<std::string_view> grant_text);

}  // namespace skillbox::compat
