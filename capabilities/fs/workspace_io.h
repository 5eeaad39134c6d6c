// capabilities/fs/workspace_io.h — the call being served and how a failure of the workspace backend
// (state/workspace_backend.h) becomes the ErrorReply the skill sees. The wording is the capability's:
// messages quote the path as the skill gave it and name the manifest key of a limit.
#pragma once

#include <string_view>

#include "bus/messages.h"
#include "skillbox/policy.h"
#include "state/workspace_backend.h"

namespace skillbox::capabilities::workspace_io {

/// A request being served: the JS function's name and the path as the skill gave it (messages).
struct Call {
  std::string_view op;
  std::string_view path;
};

/// ErrorReply{code, "<op> \"<path>\": <what>"}: the path quoted as the skill gave it (base::quote).
bus::ErrorReply fail(bus::ErrorCode code, const Call& call, std::string_view what);

/// What the skill sees for `e` from the operation of `call` under `policy` (whose values the quota
/// messages name): not_found, parent_missing and not_a_directory are NotFound; symlink, outside and
/// denied PermissionDenied; exists AlreadyExists; not_empty NotEmpty; path, type and rename conflicts
/// InvalidArgument; the quotas QuotaExceeded; busy and every stop Timeout; anything else IoError.
bus::ErrorReply reply_of(const state::WorkspaceError& e, const Call& call, const FsPolicy& policy);

}  // namespace skillbox::capabilities::workspace_io
