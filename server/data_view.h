// server/data_view.h — a tenant's read-only view of a skill's store and workspace (docs/server.md
// "Reading a skill's store and workspace"):
//
//   GET /v1/skills/{id}/store[?prefix=P&after=K&limit=N]   {"keys":[...],"next":K|null}
//   GET /v1/skills/{id}/store/{key}                         {"key":K,"value":JSON}
//   GET /v1/skills/{id}/workspace[/{path}]                  a folder: {"path","entries":[{name,type}]};
//                                                           a file: its bytes (application/octet-stream)
//
// Everything goes through the tenant's own state backends (state/backends.h), exactly as the skill's
// own store.* and openhuman.fs calls do: the workspace backend resolves every path by openat2 beneath
// the workspace (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so no "..", absolute path or symlink leaves it;
// a path is also checked against the workspace path rule (state::is_workspace_path) first. Nothing is
// created or changed: a skill that never wrote has an empty store and an empty workspace.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "server/http_types.h"
#include "state/backends.h"

namespace skillbox::server {

/// Largest workspace file served whole; a larger one is 422 `file_too_large`.
inline constexpr uint64_t kMaxWorkspaceReadBytes = uint64_t{16} << 20;
/// Keys in one page of a store listing: the default, and the most a `limit` may ask.
inline constexpr size_t kDefaultKeyPage = 100;
inline constexpr size_t kMaxKeyPage = 1000;

/// `text` with each %XX decoded; std::nullopt when a '%' is not followed by two hex digits. '+' stays.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text);

/// The value of the query parameter `name` of `query` (the text after '?'), decoded; std::nullopt when
/// absent. A parameter that does not decode is std::nullopt too (the caller then refuses it).
[[nodiscard]] std::optional<std::string> query_param(std::string_view query, std::string_view name);

/// The tenant whose state is `state` in `data_dir`, skill `id` (already checked against the id rule).
struct DataView {
  const state::Backends& state;
  std::filesystem::path data_dir;
  std::string id;
  /// The store and workspace are files in `data_dir`: one never written has no file, and is shown
  /// empty without opening (which would create it). False (serve --database): the backends answer.
  bool local = true;
};

/// A page of the skill's store keys, sorted by UTF-8 bytes. `query` holds prefix, after, limit.
[[nodiscard]] HttpResponse store_keys_response(const DataView& view, std::string_view query);

/// One key's value. `raw_key` is the URL segment(s) after /store/, percent-encoded.
[[nodiscard]] HttpResponse store_value_response(const DataView& view, std::string_view raw_key);

/// A folder's entries or a file's bytes. `raw_path` is what follows /workspace/ (empty: the root),
/// percent-encoded.
[[nodiscard]] HttpResponse workspace_response(const DataView& view, std::string_view raw_path);

}  // namespace skillbox::server
