// capabilities/fs/workspace_path.h — the one place where a skill's path string becomes a workspace path.
//
// Rules (docs/fs.md "Paths"): a path is relative and POSIX: `/` separates components; a backslash, a
// colon or a `~` are ordinary file-name characters. It is valid UTF-8 without NUL, at most
// kMaxPathBytes bytes long, each component at most kMaxComponentBytes bytes. Empty components and `.`
// are ignored, `..` removes the previous component. Violations are InvalidArgument; a path that is
// absolute or whose `..` would climb above the workspace root is PermissionDenied (it leaves the
// workspace). Names starting with kReservedPrefix belong to the host (temporary files of atomic
// writes) and are InvalidArgument.
//
// Lexical normalisation here is only the first line: the normalised path is still resolved by
// the workspace backend, which accepts only normalized paths (state::is_workspace_path) and, locally,
// resolves them by openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | ...) relative to the workspace
// directory fd, so the kernel, not this parser, has the final word on where a path leads.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bus/limits.h"
#include "bus/messages.h"
#include "skillbox/result.h"
#include "state/workspace_backend.h"

namespace skillbox::capabilities {

/// Longest path a skill may pass, in bytes: the wire limit (bus/limits.h).
using bus::kMaxPathBytes;
/// Longest single component, in bytes (Linux NAME_MAX): the backend's limit.
inline constexpr size_t kMaxComponentBytes = state::kMaxWorkspaceNameBytes;
/// Names with this prefix are the backend's (atomic-write temporaries): never visible, never accepted.
inline constexpr std::string_view kReservedPrefix = state::kWorkspaceReservedPrefix;

/// A validated, normalised path inside the workspace.
class WorkspacePath {
 public:
  explicit WorkspacePath(std::vector<std::string> components) : components_(std::move(components)) {}

  /// True for the workspace root itself ("." or "a/..").
  [[nodiscard]] bool is_root() const { return components_.empty(); }
  [[nodiscard]] const std::vector<std::string>& components() const { return components_; }
  /// The normalised path relative to the workspace root, "." for the root.
  [[nodiscard]] std::string relative() const;
  /// The parent's relative path ("." when the parent is the root). Not for the root.
  [[nodiscard]] std::string parent() const;
  /// The last component. Not for the root.
  [[nodiscard]] const std::string& name() const { return components_.back(); }

 private:
  std::vector<std::string> components_;
};

/// Validates and normalises `given`. `op` ("readFile") prefixes error messages, which show `given`
/// quoted as the skill wrote it (base::quote), never a host path.
[[nodiscard]] Result<WorkspacePath, bus::ErrorReply> parse_workspace_path(std::string_view op,
                                                                          std::string_view given);

/// How much of a skill's path an error message shows (base::quote, C style), in bytes.
inline constexpr size_t kMaxQuotedPathBytes = 200;

/// True if `name` is a valid file name a skill could pass as one component: valid UTF-8, no NUL or
/// `/`, not empty, not `.` or `..`, at most kMaxComponentBytes bytes, not reserved.
[[nodiscard]] bool is_visible_name(std::string_view name);

}  // namespace skillbox::capabilities
