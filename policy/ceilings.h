// policy/ceilings.h — the largest values a manifest may ask for in `permissions`, with the reason for
// each. (The ceilings of `limits` are Limits::kMax* in include/skillbox/policy.h.) A value above its
// ceiling makes the manifest invalid; it is never silently clamped. docs/manifest.md lists them all.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace skillbox::policy {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;

/// A manifest is a few hundred bytes; the cap keeps a hostile one from costing host memory/time.
inline constexpr uint64_t kMaxManifestBytes = 64 * kKiB;
/// The error for a manifest longer than kMaxManifestBytes, from parse_manifest and Skill::load alike.
inline std::string manifest_too_large_error() {
  return "skill.json: larger than " + std::to_string(kMaxManifestBytes) +
         " bytes; a manifest is a small JSON object (see docs/manifest.md)";
}

// fs: quotas are host disk space; one file is read into the JS heap whole, whose ceiling is 4 GiB.
inline constexpr uint64_t kMaxFsQuotaBytes = 16 * kGiB;
inline constexpr uint64_t kMaxFsFiles = 1'000'000;
inline constexpr uint64_t kMaxFsFileBytes = 1 * kGiB;

// http: bodies are buffered whole on the host and in the JS heap.
inline constexpr size_t kMaxHttpAllowEntries = 256;
inline constexpr size_t kMaxHttpAllowEntryBytes = 2048;
inline constexpr uint64_t kMaxHttpRequestBytes = 256 * kMiB;
inline constexpr uint64_t kMaxHttpResponseBytes = 1 * kGiB;
inline constexpr uint64_t kMaxHttpTimeoutMs = 10ull * 60 * 1000;  // = Limits::kMaxTimeoutMs
inline constexpr uint64_t kMaxHttpRedirects = 20;                 // curl's and browsers' usual cap
inline constexpr uint64_t kMaxHttpConcurrent = 64;                // sockets held by one invocation
inline constexpr uint64_t kMaxHttpRequests = 100'000;

/// Methods a manifest may grant. CONNECT (tunnels) and TRACE (reflects credentials) are never granted.
inline constexpr std::array<std::string_view, 7> kHttpMethods = {"GET",   "HEAD",   "POST",   "PUT",
                                                                 "PATCH", "DELETE", "OPTIONS"};

// env: names only; the values stay on the host.
inline constexpr size_t kMaxEnvNames = 256;
inline constexpr size_t kMaxEnvNameBytes = 128;

// store: rows live in one shared SQLite file; a value is parsed into the JS heap whole.
inline constexpr uint64_t kMaxStoreQuotaBytes = 1 * kGiB;
inline constexpr uint64_t kMaxStoreKeys = 1'000'000;
// A set holds the whole database's write lock while its value goes to the WAL and is fsynced (60 MiB
// measured 2.2-2.4 s, every other skill's set waiting); 16 MiB keeps that well under the 5 s busy
// timeout (docs/store.md, "How large may one value be").
inline constexpr uint64_t kMaxStoreValueBytes = 16 * kMiB;

// Top-level strings.
inline constexpr size_t kMaxNameBytes = 128;
inline constexpr size_t kMaxVersionBytes = 64;
inline constexpr size_t kMaxEntryBytes = 1024;

// MCP tools a skill declares (skill.json "tools").
// A served name is <id>__<name>; MCP's rule allows 128 characters, the id takes up to 64 and "__" two.
inline constexpr size_t kMaxToolNameBytes = 62;
// More tools than a model can choose among is a listing no agent reads; a skill split is the fix.
inline constexpr size_t kMaxTools = 64;
inline constexpr size_t kMaxToolDescriptionBytes = 4096;
inline constexpr size_t kMaxExportNameBytes = 128;

}  // namespace skillbox::policy
