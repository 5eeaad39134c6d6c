// capabilities/fs/workspace.cpp — the eight `openhuman.fs` operations: policy here, storage in the
// tenant's state::WorkspaceBackend.
//
// Every handler follows the same order: mode, path syntax (parse_workspace_path), open the workspace
// (once per invocation), then one call into the backend with the normalized path and the quotas. The
// mode comes first so that a skill without the permission learns nothing about paths or files. The
// backend's typed errors become messages in workspace_io.cpp.
#include "capabilities/fs/workspace.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capabilities/fs/workspace_io.h"
#include "capabilities/fs/workspace_path.h"

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;
using workspace_io::Call;
using workspace_io::fail;

/// What an operation needs from permissions.fs.mode.
enum class Access : uint8_t { read, write };

}  // namespace

struct Workspace::Impl {
  std::shared_ptr<state::WorkspaceBackend> backend;
  std::string skill_id;
  FsPolicy policy;
  const bus::StopToken* stop = &bus::StopToken::never();  // the invocation's (Workspace's constructor)
  bus::MemoryBudget* memory = nullptr;                    // the invocation's; null: nothing counted

  std::unique_ptr<state::WorkspaceSession> session;   // opened by the first request
  std::optional<state::WorkspaceError> open_failure;  // why opening failed (sticky for the invocation)

  [[nodiscard]] bool writes() const {
    return policy.mode == FsMode::write || policy.mode == FsMode::readwrite;
  }

  [[nodiscard]] state::WorkspaceQuota quota() const {
    return state::WorkspaceQuota{policy.quota_bytes, policy.max_files, policy.max_file_bytes};
  }

  /// PermissionDenied naming permissions.fs.mode unless the mode grants `access`.
  [[nodiscard]] std::optional<ErrorReply> allow(Access access, const Call& call) const {
    const bool granted =
        access == Access::read ? policy.mode == FsMode::read || policy.mode == FsMode::readwrite : writes();
    if (granted) return std::nullopt;
    std::string message = "permissions.fs.mode is \"";
    message += to_string(policy.mode);
    message += "\"; ";
    message += call.op;
    message +=
        access == Access::read ? " needs \"read\" or \"readwrite\"" : " needs \"write\" or \"readwrite\"";
    if (policy.mode_narrowed)
      message += " (the mode was narrowed for this run: --fs-mode, or Invocation::narrowing)";
    return ErrorReply{ErrorCode::PermissionDenied, std::move(message)};
  }

  /// Opens the workspace on first use (with the lock when the mode permits writing); the error of
  /// that failure, then and for every later call of this invocation.
  [[nodiscard]] std::optional<ErrorReply> open(const Call& call) {
    if (session) return std::nullopt;
    if (!open_failure) {
      if (!backend) {
        return fail(ErrorCode::IoError, call, "the tenant has no workspace backend");
      }
      auto opened = backend->open(skill_id, writes(), *stop);
      if (opened) {
        session = std::move(*opened);
        return std::nullopt;
      }
      open_failure = std::move(opened.error());
    }
    return workspace_io::reply_of(*open_failure, call, policy);
  }

  /// The checks every handler makes first: the mode, the path, the workspace open. The parsed path,
  /// or the refusal.
  [[nodiscard]] Result<WorkspacePath, ErrorReply> begin(Access access, const Call& call) {
    if (auto refused = allow(access, call)) return std::move(*refused);
    auto parsed = parse_workspace_path(call.op, call.path);
    if (!parsed) return std::move(parsed.error());
    if (auto refused = open(call)) return std::move(*refused);
    return std::move(*parsed);
  }

  [[nodiscard]] ErrorReply failed(const state::WorkspaceError& e, const Call& call) const {
    return workspace_io::reply_of(e, call, policy);
  }
};

Workspace::Workspace(std::shared_ptr<state::WorkspaceBackend> backend, std::string skill_id, FsPolicy policy,
                     const bus::StopToken& stop, bus::MemoryBudget* memory)
    : impl_(std::make_unique<Impl>()) {
  impl_->backend = std::move(backend);
  impl_->skill_id = std::move(skill_id);
  impl_->policy = policy;
  impl_->stop = &stop;
  impl_->memory = memory;
}

Workspace::Workspace(const std::filesystem::path& data_dir, std::string skill_id, FsPolicy policy,
                     const bus::StopToken& stop, bus::MemoryBudget* memory)
    : Workspace(state::make_local_workspace_backend(state::DataLayout(data_dir)), std::move(skill_id), policy,
                stop, memory) {}

Workspace::~Workspace() = default;

// ---- reading -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsReadFileRequest& r) {
  Impl& w = *impl_;
  const Call call{"readFile", r.path};
  auto path = w.begin(Access::read, call);
  if (!path) return std::move(path.error());

  // The content is held in host memory until the skill has it as a value: reserved before the
  // backend reads a byte, once it knows the size.
  bus::BytesReply reply({}, bus::HostBytes(w.memory));
  std::optional<ErrorReply> refusal;
  auto admit = [&](uint64_t size) {
    if (size > w.policy.max_file_bytes) {
      refusal = fail(ErrorCode::PayloadTooLarge, call,
                     "the file is " + std::to_string(size) + " bytes; permissions.fs.max_file_bytes is " +
                         std::to_string(w.policy.max_file_bytes));
      return false;
    }
    if (!reply.held.grow(size)) {
      refusal = fail(ErrorCode::PayloadTooLarge, call,
                     "the file is " + std::to_string(size) + " bytes: " + w.memory->refusal(size));
      return false;
    }
    return true;
  };
  if (auto read = w.session->read_file(path->relative(), admit, reply.data); !read) {
    if (refusal) return std::move(*refusal);
    return w.failed(read.error(), call);
  }
  return reply;
}

bus::Reply Workspace::handle(const bus::FsReaddirRequest& r) {
  Impl& w = *impl_;
  const Call call{"readdir", r.path};
  auto path = w.begin(Access::read, call);
  if (!path) return std::move(path.error());
  auto listed = w.session->list(path->relative());
  if (!listed) return w.failed(listed.error(), call);
  bus::FsReaddirReply reply;
  reply.entries.reserve(listed->size());
  // Names a skill could not pass back as a path (not UTF-8, say) are not listed.
  for (bus::FsDirEntry& e : *listed) {
    if (is_visible_name(e.name)) reply.entries.push_back(std::move(e));
  }
  return reply;
}

bus::Reply Workspace::handle(const bus::FsStatRequest& r) {
  Impl& w = *impl_;
  const Call call{"stat", r.path};
  auto path = w.begin(Access::read, call);
  if (!path) return std::move(path.error());
  auto st = w.session->stat(path->relative());
  if (!st) return w.failed(st.error(), call);
  return bus::FsStatReply{st->type, st->size, st->mtime_ms};
}

bus::Reply Workspace::handle(const bus::FsExistsRequest& r) {
  Impl& w = *impl_;
  const Call call{"exists", r.path};
  auto path = w.begin(Access::read, call);
  if (!path) return std::move(path.error());
  auto found = w.session->exists(path->relative());
  if (!found) return w.failed(found.error(), call);
  return bus::BoolReply{*found};
}

// ---- writing -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsWriteFileRequest& r) {
  Impl& w = *impl_;
  const Call call{r.append ? "appendFile" : "writeFile", r.path};
  if (auto refused = w.allow(Access::write, call)) return std::move(*refused);
  auto path = parse_workspace_path(call.op, r.path);
  if (!path) return std::move(path.error());
  if (path->is_root()) return fail(ErrorCode::InvalidArgument, call, "is a directory");
  if (!r.append && r.data.size() > w.policy.max_file_bytes)
    return w.failed(state::WorkspaceError{state::WorkspaceErrc::file_too_large, r.data.size()}, call);
  if (auto refused = w.open(call)) return std::move(*refused);
  if (auto written = w.session->write_file(path->relative(), r.data, r.append, w.quota()); !written)
    return w.failed(written.error(), call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsMkdirRequest& r) {
  Impl& w = *impl_;
  const Call call{"mkdir", r.path};
  auto path = w.begin(Access::write, call);
  if (!path) return std::move(path.error());
  if (auto made = w.session->mkdir(path->relative(), r.recursive, w.quota()); !made)
    return w.failed(made.error(), call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRemoveRequest& r) {
  Impl& w = *impl_;
  const Call call{"remove", r.path};
  if (auto refused = w.allow(Access::write, call)) return std::move(*refused);
  auto path = parse_workspace_path(call.op, r.path);
  if (!path) return std::move(path.error());
  if (path->is_root()) {
    return fail(ErrorCode::InvalidArgument, call, "the workspace root cannot be removed; remove its entries");
  }
  if (auto refused = w.open(call)) return std::move(*refused);
  if (auto removed = w.session->remove(path->relative(), r.recursive); !removed)
    return w.failed(removed.error(), call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRenameRequest& r) {
  Impl& w = *impl_;
  const Call from_call{"rename", r.from};
  const Call to_call{"rename", r.to};
  if (auto refused = w.allow(Access::write, from_call)) return std::move(*refused);
  auto from = parse_workspace_path(from_call.op, r.from);
  if (!from) return std::move(from.error());
  auto to = parse_workspace_path(to_call.op, r.to);
  if (!to) return std::move(to.error());
  if (from->is_root())
    return fail(ErrorCode::InvalidArgument, from_call, "the workspace root cannot be renamed");
  if (to->is_root())
    return fail(ErrorCode::InvalidArgument, to_call, "the workspace root cannot be replaced");
  if (auto refused = w.open(from_call)) return std::move(*refused);
  if (auto renamed = w.session->rename(from->relative(), to->relative()); !renamed)
    return w.failed(renamed.error(), renamed.error().second ? to_call : from_call);
  return bus::OkReply{};
}

}  // namespace skillbox::capabilities
