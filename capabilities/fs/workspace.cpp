// Scaffolding: replaced by the workspace implementation (issue 3).
#include "capabilities/fs/workspace.h"

namespace skillbox::capabilities {
struct Workspace::Impl {};
namespace {
bus::Reply unavailable() { return bus::ErrorReply{bus::ErrorCode::PermissionDenied, "openhuman.fs is not available yet"}; }
}  // namespace
Workspace::Workspace(std::filesystem::path, std::string, FsPolicy) {}
Workspace::~Workspace() = default;
bus::Reply Workspace::handle(const bus::FsReadFileRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsWriteFileRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsReaddirRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsStatRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsExistsRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsMkdirRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsRemoveRequest&) { return unavailable(); }
bus::Reply Workspace::handle(const bus::FsRenameRequest&) { return unavailable(); }
}  // namespace skillbox::capabilities
