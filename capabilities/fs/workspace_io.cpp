// capabilities/fs/workspace_io.cpp — the messages of the fs capability (workspace_io.h).
#include "capabilities/fs/workspace_io.h"

#include <string>

#include "base/errno_text.h"
#include "base/quote.h"
#include "capabilities/fs/workspace_path.h"

namespace skillbox::capabilities::workspace_io {

using bus::ErrorCode;
using bus::ErrorReply;
using state::WorkspaceErrc;

ErrorReply fail(ErrorCode code, const Call& call, std::string_view what) {
  std::string message(call.op);
  message += ' ';
  message += base::quote(call.path, kMaxQuotedPathBytes);
  message += ": ";
  message += what;
  return ErrorReply{code, std::move(message)};
}

namespace {

ErrorReply stopped(const Call& call, std::string_view left) {
  return fail(ErrorCode::Timeout, call, "stopped: the invocation reached a limit; " + std::string(left));
}

}  // namespace

ErrorReply reply_of(const state::WorkspaceError& e, const Call& call, const FsPolicy& policy) {
  const std::string_view op = call.op;
  switch (e.code) {
    case WorkspaceErrc::invalid_path:
      return fail(ErrorCode::InvalidArgument, call, "not a path inside the workspace");
    case WorkspaceErrc::invalid_skill_id:
      return fail(ErrorCode::IoError, call, "the skill id is not a valid folder name");
    case WorkspaceErrc::unavailable:
      return fail(ErrorCode::IoError, call,
                  "the workspace could not be opened (" + base::errno_text(e.sys) + ")");
    case WorkspaceErrc::not_found:
      return fail(ErrorCode::NotFound, call, "no such file or directory");
    case WorkspaceErrc::parent_missing:
      return fail(ErrorCode::NotFound, call, "the parent directory does not exist");
    case WorkspaceErrc::not_a_directory:
      return fail(ErrorCode::NotFound, call, "a component of the path is not a directory");
    case WorkspaceErrc::not_directory:
      if (op == "mkdir") return fail(ErrorCode::AlreadyExists, call, "already exists and is not a directory");
      return fail(ErrorCode::InvalidArgument, call, "not a directory");
    case WorkspaceErrc::is_directory:
      return fail(ErrorCode::InvalidArgument, call,
                  op == "readFile" ? "is a directory; use readdir" : "is a directory");
    case WorkspaceErrc::not_regular:
      return fail(ErrorCode::PermissionDenied, call,
                  op == "stat" ? "not a regular file or directory" : "not a regular file");
    case WorkspaceErrc::symlink:
      return fail(ErrorCode::PermissionDenied, call,
                  "the path goes through a symbolic link; symbolic links are refused");
    case WorkspaceErrc::outside:
      return fail(ErrorCode::PermissionDenied, call, "the path leaves the workspace");
    case WorkspaceErrc::denied:
      return fail(ErrorCode::PermissionDenied, call, "the host denied access");
    case WorkspaceErrc::exists:
      return fail(ErrorCode::AlreadyExists, call, "already exists");
    case WorkspaceErrc::not_empty:
      if (op == "remove")
        return fail(ErrorCode::NotEmpty, call,
                    "the directory is not empty; pass {recursive: true} to remove it");
      if (op == "rename") return fail(ErrorCode::NotEmpty, call, "is a directory that is not empty");
      return fail(ErrorCode::NotEmpty, call, "the directory is not empty");
    case WorkspaceErrc::name_too_long:
      return fail(ErrorCode::InvalidArgument, call, "the path is too long");
    case WorkspaceErrc::file_over_directory:
      return fail(ErrorCode::InvalidArgument, call, "is a directory; a file cannot replace it");
    case WorkspaceErrc::directory_over_file:
      return fail(ErrorCode::InvalidArgument, call, "is not a directory; a directory cannot replace it");
    case WorkspaceErrc::into_itself:
      return fail(ErrorCode::InvalidArgument, call, "a directory cannot move into itself");
    case WorkspaceErrc::quota_bytes:
      return fail(ErrorCode::QuotaExceeded, call,
                  "the workspace would hold " + std::to_string(e.value) +
                      " bytes; permissions.fs.quota_bytes is " + std::to_string(policy.quota_bytes));
    case WorkspaceErrc::quota_entries:
      return fail(ErrorCode::QuotaExceeded, call,
                  "the workspace would hold " + std::to_string(e.value) +
                      " entries; permissions.fs.max_files is " + std::to_string(policy.max_files));
    case WorkspaceErrc::file_too_large:
      return fail(ErrorCode::QuotaExceeded, call,
                  "the file would be " + std::to_string(e.value) +
                      " bytes; permissions.fs.max_file_bytes is " + std::to_string(policy.max_file_bytes));
    case WorkspaceErrc::refused:
      return fail(ErrorCode::PayloadTooLarge, call, "the file is too large to read");
    case WorkspaceErrc::busy:
      return fail(ErrorCode::Timeout, call,
                  "the workspace is busy: another invocation of this skill held it for more than " +
                      std::to_string(e.value / 1000) + " s");
    case WorkspaceErrc::stopped_waiting:
      return fail(ErrorCode::Timeout, call,
                  "the workspace is busy (another invocation of this skill holds it) and this invocation "
                  "reached its deadline or a limit while waiting; nothing was changed");
    case WorkspaceErrc::stopped_counting:
      return fail(
          ErrorCode::Timeout, call,
          "stopped: the invocation reached a limit while counting the workspace; nothing was changed");
    case WorkspaceErrc::stopped:
      return stopped(call, op == "readFile"  ? "nothing was read"
                           : op == "readdir" ? "nothing was listed"
                                             : "the file was not changed");
    case WorkspaceErrc::stopped_partway:
      return stopped(call, "the directory is partly removed (still a valid tree)");
    case WorkspaceErrc::stopped_emptied:
      return stopped(call, "the directory is emptied but not removed");
    case WorkspaceErrc::scan_failed:
      return fail(ErrorCode::IoError, call,
                  "the workspace could not be scanned (" + base::errno_text(e.sys) + ")");
    case WorkspaceErrc::no_space:
      return fail(ErrorCode::IoError, call, "the host is out of disk space");
    case WorkspaceErrc::too_big:
    case WorkspaceErrc::io:
      break;
  }
  return fail(ErrorCode::IoError, call,
              "host I/O error (" + (e.sys != 0 ? base::errno_text(e.sys) : e.detail) + ")");
}

}  // namespace skillbox::capabilities::workspace_io
