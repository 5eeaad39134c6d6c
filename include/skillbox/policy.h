// skillbox/policy.h — what a skill may do and how much it may use.
//
// A Policy is the validated form of a skill's manifest (`skill.json`, see docs/manifest.md and
// DESIGN.md "Manifest"). Everything not granted here is denied. Limits are the resource ceilings of
// one invocation. Both are plain values: copying them is cheap and they never refer to host objects.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skillbox {

/// Resource ceilings of one invocation. Units are in the field names. Defaults are DESIGN.md's.
struct Limits {
  /// Heap limit of the QuickJS runtime, in bytes (JS_SetMemoryLimit). Default 32 MiB.
  uint64_t memory_bytes = 32ull * 1024 * 1024;
  /// Step budget: interrupt-handler ticks, see docs/limits.md for what a step is. Default 10,000,000.
  uint64_t steps = 10'000'000;
  /// JS stack limit in bytes (JS_SetMaxStackSize). Default 512 KiB.
  uint64_t stack_bytes = 512ull * 1024;
  /// Wall-clock deadline of the whole invocation, in milliseconds. Default 5000.
  uint64_t timeout_ms = 5000;

  /// Host ceilings: the largest values a manifest may ask for. A manifest value above these is an
  /// `invalid` manifest, not silently clamped.
  static constexpr uint64_t kMaxMemoryBytes = 4096ull * 1024 * 1024;
  static constexpr uint64_t kMinMemoryBytes = 256ull * 1024;  // below this the runtime cannot start
  static constexpr uint64_t kMaxSteps = 1'000'000'000'000ull;
  static constexpr uint64_t kMaxStackBytes = 4ull * 1024 * 1024;  // our JS thread has a 8 MiB stack
  static constexpr uint64_t kMinStackBytes = 16ull * 1024;
  static constexpr uint64_t kMaxTimeoutMs = 10ull * 60 * 1000;
};

/// Host-side lowering of limits (CLI flags, embedder settings). Each set field replaces the manifest's
/// value only if it is lower: a host can tighten a skill's limits, never loosen them.
struct LimitOverrides {
  std::optional<uint64_t> memory_bytes;
  std::optional<uint64_t> steps;
  std::optional<uint64_t> stack_bytes;
  std::optional<uint64_t> timeout_ms;

  /// Returns `base` with every set field applied as min(base, override). An override below the
  /// smallest workable value (Limits::kMinMemoryBytes, kMinStackBytes, 1 step, 1 ms) counts as that
  /// value, so the result is always a runtime that can start, and never above `base`.
  [[nodiscard]] Limits apply(Limits base) const;
};

/// Workspace access mode (`permissions.fs.mode`).
enum class FsMode : uint8_t { none, read, write, readwrite };

/// `permissions.fs`. Quotas cover the whole workspace across invocations.
struct FsPolicy {
  FsMode mode = FsMode::none;
  uint64_t quota_bytes = 10ull * 1024 * 1024;   // total bytes of regular files
  uint64_t max_files = 1000;                    // files + directories in the workspace
  uint64_t max_file_bytes = 10ull * 1024 * 1024;  // size of any single file
};

/// `permissions.http`. An empty allowlist means no request is ever made.
struct HttpPolicy {
  /// `scheme://host[:port]/path-prefix`, host may start with `*.` for subdomains.
  std::vector<std::string> allow;
  std::vector<std::string> methods = {"GET"};
  uint64_t max_request_bytes = 1ull * 1024 * 1024;
  uint64_t max_response_bytes = 10ull * 1024 * 1024;  // counted after content decoding
  uint64_t timeout_ms = 10'000;                      // total time of one request, redirects included
  uint32_t max_redirects = 5;
  uint32_t max_concurrent = 8;  // requests in flight at once per invocation
  uint32_t max_requests = 100;  // requests per invocation
  /// Permit connecting to loopback/private/link-local/... addresses. Default false; tests set it.
  bool allow_private_addresses = false;
};

/// `permissions.store`. Byte quota counts key bytes + value bytes + a fixed per-entry overhead.
struct StorePolicy {
  uint64_t quota_bytes = 1ull * 1024 * 1024;
  uint64_t max_keys = 10'000;
  uint64_t max_value_bytes = 1ull * 1024 * 1024;
  static constexpr uint64_t kMaxKeyBytes = 512;
};

/// Everything a skill is permitted to do.
struct Policy {
  FsPolicy fs;
  HttpPolicy http;
  std::vector<std::string> env;  // names `env.get` may read
  StorePolicy store;
};

/// The validated manifest.
struct Manifest {
  std::string id;       // [a-z0-9][a-z0-9._-]{0,63}; names the data folders and store rows
  std::string name;     // display name
  std::string version;  // semver-ish string, informational
  std::string entry;    // entry file, relative to the skill folder
  Limits limits;
  Policy permissions;
};

}  // namespace skillbox
