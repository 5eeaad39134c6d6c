// capabilities/fs/workspace.h — a skill's confined workspace directory (`openhuman.fs`).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/messages.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

/// Serves fs requests for one invocation, rooted at DATA/skills/<id>/workspace/ (created 0700 on first
/// use) and opened once as a directory fd. Every path is resolved relative to that fd by openat2 in the
/// same call that opens it. See docs/fs.md.
class Workspace {
 public:
  Workspace(std::filesystem::path data_dir, std::string skill_id, FsPolicy policy);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  bus::Reply handle(const bus::FsReadFileRequest& r);
  bus::Reply handle(const bus::FsWriteFileRequest& r);
  bus::Reply handle(const bus::FsReaddirRequest& r);
  bus::Reply handle(const bus::FsStatRequest& r);
  bus::Reply handle(const bus::FsExistsRequest& r);
  bus::Reply handle(const bus::FsMkdirRequest& r);
  bus::Reply handle(const bus::FsRemoveRequest& r);
  bus::Reply handle(const bus::FsRenameRequest& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
