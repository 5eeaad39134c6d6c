// skillbox/policy.h — what a skill may do and how much it may use.
//
// A Policy is the validated form of a skill's manifest (`skill.json`, see docs/manifest.md). Everything
// not granted here is denied. Limits are the resource ceilings of
// one invocation. Both are plain values: copying them is cheap and they never refer to host objects.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillbox {

/// Resource ceilings of one invocation. Units are in the field names. Defaults: docs/manifest.md.
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
/// The manifest spelling of `mode` (`permissions.fs.mode`): "none", "read", "write" or "readwrite".
[[nodiscard]] std::string_view to_string(FsMode mode);

/// `permissions.fs`. Quotas cover the whole workspace across invocations.
struct FsPolicy {
  FsMode mode = FsMode::none;
  /// `mode` was lowered for this run (PolicyNarrowing::fs_mode): denials say so instead of blaming
  /// permissions.fs.mode alone.
  bool mode_narrowed = false;
  uint64_t quota_bytes = 10ull * 1024 * 1024;     // total bytes of regular files
  uint64_t max_files = 1000;                      // files + directories in the workspace
  uint64_t max_file_bytes = 10ull * 1024 * 1024;  // size of any single file
};

/// One `permissions.http.allow` entry in normalized form: what the http capability matches request
/// URLs against (capabilities/http/url_check.h). Only the entry parser (policy/http_allow.cpp) makes
/// these, through HttpAllowList; docs/manifest.md "Allow entries" gives the syntax.
struct HttpAllowEntry {
  /// The entry written out normalized, e.g. "https://api.example.com/v1/" for
  /// "HTTPS://API.Example.com:443/v1/": what messages and `skillbox check` show.
  std::string text;
  std::string scheme;  // "http" or "https"
  /// Lower-case DNS name, dotted-decimal IPv4, or an IPv6 address in brackets in RFC 5952 form
  /// ("[2001:db8::1]"); without the "*." of a wildcard entry.
  std::string host;
  /// The entry was "*.host": it matches hosts ending in "." + host, never host itself.
  bool subdomains = false;
  uint16_t port = 0;  // as written, else the scheme's default (80, 443)
  /// Starts with '/'; RFC 3986 path characters with percent-escapes in upper case; no '.' or '..'
  /// segment. Matched on segment boundaries (url_check.h).
  std::string path_prefix;

  friend bool operator==(const HttpAllowEntry&, const HttpAllowEntry&) = default;
};

/// `permissions.http.allow`: entry texts in order, each normalized once, when it is added, by the one
/// entry parser (policy/http_allow.cpp). The manifest parser refuses invalid entries; a list built in
/// code keeps an invalid text (texts(), and the error push_back returns) but it never matches
/// anything. Behaves like a std::vector<std::string> of the texts for reading, so code that sets
/// `allow = {"https://api.example.com/"}` or compares it with a vector of strings keeps working.
class HttpAllowList {
 public:
  using value_type = std::string;
  using const_iterator = std::vector<std::string>::const_iterator;
  using iterator = const_iterator;

  HttpAllowList() = default;
  HttpAllowList(std::initializer_list<std::string> texts);  // NOLINT(google-explicit-constructor)
  HttpAllowList(const std::vector<std::string>& texts);     // NOLINT(google-explicit-constructor)

  /// Normalizes `text` and appends it. Returns std::nullopt, or why `text` is not a valid entry, in a
  /// few words without the text ("the scheme must be http or https"); an invalid text is still
  /// appended to texts() but adds nothing to entries().
  std::optional<std::string> push_back(std::string_view text);
  /// Removes the last text (and its entry). No-op on an empty list.
  void pop_back();
  void clear();

  /// True when no text was added (see entries().empty() for "nothing can match").
  [[nodiscard]] bool empty() const { return texts_.empty(); }
  [[nodiscard]] size_t size() const { return texts_.size(); }
  [[nodiscard]] const_iterator begin() const { return texts_.begin(); }
  [[nodiscard]] const_iterator end() const { return texts_.end(); }
  /// Every text added, in order: normalized when valid, as given otherwise.
  [[nodiscard]] const std::vector<std::string>& texts() const { return texts_; }
  /// The valid entries, in order: the only form the http capability reads.
  [[nodiscard]] const std::vector<HttpAllowEntry>& entries() const { return entries_; }

  friend bool operator==(const HttpAllowList& a, const HttpAllowList& b) { return a.texts_ == b.texts_; }
  friend bool operator==(const HttpAllowList& a, const std::vector<std::string>& b) { return a.texts_ == b; }

 private:
  std::vector<std::string> texts_;
  std::vector<HttpAllowEntry> entries_;
  std::vector<bool> valid_;  // parallel to texts_
};

/// `permissions.http`. An allowlist without a valid entry means no request is ever made.
struct HttpPolicy {
  /// `scheme://host[:port]/path-prefix`, host may start with `*.` for subdomains.
  HttpAllowList allow;
  std::vector<std::string> methods = {"GET"};
  uint64_t max_request_bytes = 1ull * 1024 * 1024;
  uint64_t max_response_bytes = 10ull * 1024 * 1024;  // counted after content decoding
  uint64_t timeout_ms = 10'000;                       // total time of one request, redirects included
  uint32_t max_redirects = 5;
  uint32_t max_concurrent = 8;  // requests in flight at once per invocation
  uint32_t max_requests = 100;  // requests per invocation
  /// Permit connecting to loopback/private/link-local/... addresses. Default false; tests set it.
  bool allow_private_addresses = false;
  /// Put the WHATWG `fetch` (with Headers, Request, Response, AbortController, AbortSignal) on the
  /// skill's global object, over the same capability as `openhuman.http` (docs/http.md "fetch").
  /// Default false: the global object has no fetch. The manifest accepts it only beside an `allow` entry.
  bool fetch = false;
  /// `allow` was narrowed for this run (PolicyNarrowing deny_net or allow_http): denials say so.
  bool allow_narrowed = false;
};

/// `permissions.store`. Byte quota counts key bytes + value bytes + a fixed per-entry overhead.
struct StorePolicy {
  uint64_t quota_bytes = 1ull * 1024 * 1024;
  uint64_t max_keys = 10'000;
  uint64_t max_value_bytes = 1ull * 1024 * 1024;
  static constexpr uint64_t kMaxKeyBytes = 512;
};

/// `permissions.db`: the skill's own SQLite database (OpenHuman bundles' `db`, docs/openhuman.md).
/// The file is DATA/skills/<id>/db.sqlite, never in the workspace.
struct DbPolicy {
  /// Largest size of the database file (SQLite `max_page_count`); a write beyond it fails with
  /// QuotaExceeded. Default 4 MiB.
  uint64_t quota_bytes = 4ull * 1024 * 1024;
};

/// Everything a skill is permitted to do.
struct Policy {
  FsPolicy fs;
  HttpPolicy http;
  std::vector<std::string> env;  // names `env.get` may read
  StorePolicy store;
  DbPolicy db;
  bool env_narrowed = false;  // `env` was emptied for this run (PolicyNarrowing::deny_env)
};

/// A per-run narrowing of a skill's permissions, Deno-style: what `skillbox run --deny-net,
/// --allow-http, --fs-mode, --deny-env` ask for, and what an embedder sets in Invocation::narrowing.
/// It only ever takes away: a run is never granted anything its manifest does not grant.
struct PolicyNarrowing {
  /// No http request at all (`permissions.http.allow` is treated as empty).
  bool deny_net = false;
  /// When not empty, a URL must be allowed both by `permissions.http.allow` and by one of these
  /// (allow-entry syntax, docs/manifest.md "Allow entries"), on every request and redirect hop.
  std::vector<std::string> allow_http;
  /// The workspace mode is at most this: the run gets the permissions both modes grant ("read" of a
  /// "readwrite" skill is "read"; "read" of a "write" skill is "none"). The skill's db is not the
  /// workspace and is not affected.
  std::optional<FsMode> fs_mode;
  /// `env.get` returns undefined for every name.
  bool deny_env = false;

  [[nodiscard]] bool empty() const { return !deny_net && allow_http.empty() && !fs_mode && !deny_env; }
};

/// Why `narrowing` cannot be applied: an `allow_http` text that is not a valid allow entry, named,
/// with the reason. std::nullopt when it can. The runners refuse such an invocation as `invalid`.
[[nodiscard]] std::optional<std::string> narrowing_error(const PolicyNarrowing& narrowing);
/// `policy` narrowed by `narrowing`. The allow list becomes the intersection of both lists, entry by
/// entry (two entries that overlap give the narrower one, or for two wildcard hosts the deeper one),
/// so every check that reads `http.allow` (requests, redirect hops, the origin map) applies it. An
/// invalid `allow_http` text adds nothing.
[[nodiscard]] Policy narrow_policy(Policy policy, const PolicyNarrowing& narrowing);

/// Which kind of folder a Skill was loaded from.
enum class SkillFormat : uint8_t {
  skillbox,   // skill.json + an ES module or script calling the v1 API
  openhuman,  // an OpenHuman bundle: manifest.json + index.js (docs/openhuman.md)
};

/// One `setup.auth.modes[i]` (or the `setup.oauth` form, as a mode of type "managed") of an OpenHuman
/// manifest: what the bundle asks the operator for. Informational: nothing here grants anything.
struct BundleSetupMode {
  std::string type;  // "managed", "self_hosted" or "text"
  std::string label;
  std::string provider;                  // managed
  std::vector<std::string> scopes;       // managed
  std::string api_base_url;              // managed: apiBaseUrl
  std::vector<std::string> field_names;  // self_hosted: fields[].name
};

/// What an OpenHuman manifest.json says beyond id/name/version/entry (docs/openhuman.md). Plain values.
struct BundleManifest {
  std::string description;
  std::string runtime;                 // "quickjs", "v8" or empty
  std::vector<std::string> platforms;  // as listed
  std::vector<std::string> env;        // names the bundle asks for; granted only by the operator
  std::string skill_type;
  bool auto_start = false;
  std::optional<uint64_t> memory_limit_mb;  // applied as a lowering of limits.memory_mb
  bool setup_required = false;
  std::string setup_label;
  std::vector<BundleSetupMode> setup_modes;
  /// Keys OpenHuman ignored and skillbox ignores too, as key paths ("foo", "setup.bar"); `check`
  /// lists them.
  std::vector<std::string> unknown_keys;
  /// True when a skill.json beside manifest.json supplied the operator's limits and permissions.
  bool has_grants = false;
};

/// One MCP tool a native skill declares (skill.json "tools", docs/manifest.md). Served by `skillbox mcp`
/// as `<skill-id>__<name>`; its annotations readOnlyHint, destructiveHint and openWorldHint follow from
/// the permissions, never from here. Plain values: the schemas are kept as JSON text.
struct ToolDeclaration {
  std::string name;         // 1 to 64 of A-Z a-z 0-9 _ - . (MCP's tool-name rule, with room for the id)
  std::string export_name;  // the export a call runs, with the arguments as input
  std::string title;        // may be empty
  std::string description;
  std::string input_schema_json;   // a draft 7 JSON Schema whose "type" is "object"
  std::string output_schema_json;  // empty: none; else a draft 7 object schema for the export's value
  std::string annotation_title;    // annotations.title; may be empty
  std::optional<bool> idempotent_hint;
};

/// The validated manifest.
struct Manifest {
  std::string id;       // [a-z0-9][a-z0-9._-]{0,63}; names the data folders and store rows
  std::string name;     // display name
  std::string version;  // semver-ish string, informational
  std::string entry;    // entry file, relative to the skill folder
  Limits limits;
  Policy permissions;
  SkillFormat format = SkillFormat::skillbox;
  /// Set when format == openhuman.
  std::optional<BundleManifest> bundle;
  /// The MCP tools the skill declares, in order; empty: it is served as one tool named by its id.
  std::vector<ToolDeclaration> tools;
};

}  // namespace skillbox
