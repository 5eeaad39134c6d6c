// skillbox/workspace.h — an operator's view of a skill's workspace (DATA/skills/<id>/workspace/, the
// files a skill writes with openhuman.fs): what `skillbox workspace ls|cat|rm` does, and how
// `skillbox test` seeds a test's workspace and checks it afterwards.
//
// Every path goes through the same confined resolution a skill's own calls get (docs/fs.md): relative
// to the workspace, no `..` out of it, no symlinks followed, only regular files and directories. So an
// operator's command cannot be turned into a read or delete outside the workspace by what the skill
// left there (a symlink to /etc, say). Errors are Error{message}s that say what is wrong and name the
// path as the skill sees it.
//
// Threads: one WorkspaceFiles per thread. A remove takes the workspace's lock, like a skill's
// mutation, so it never interleaves with a run's write.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/result.h"

namespace skillbox {

/// One entry of a workspace folder.
struct WorkspaceEntry {
  std::string name;
  bool directory = false;
  uint64_t size = 0;  // bytes of a regular file; 0 for a directory
};

class WorkspaceFiles {
 public:
  /// The workspace of `skill_id` under `data_dir`. Errors: an id that is not a valid skill id, or a
  /// skill that has no workspace yet (it never wrote a file): nothing is created.
  [[nodiscard]] static Result<WorkspaceFiles> open(const std::filesystem::path& data_dir,
                                                   std::string_view skill_id);
  /// The same, but a workspace that does not exist yet is made: for putting files there before a run
  /// (`skillbox test` seeds one per test). Errors: an invalid skill id, a data directory that cannot
  /// be written.
  [[nodiscard]] static Result<WorkspaceFiles> create(const std::filesystem::path& data_dir,
                                                     std::string_view skill_id);
  /// `path` checked by the rules of the skill's own fs calls (docs/fs.md "Paths") and normalized
  /// ("notes/./a.txt" -> "notes/a.txt"), or why it cannot name a file of a workspace: absolute, leaving
  /// the workspace by "..", the workspace itself, malformed. The message says which, without repeating
  /// the path.
  [[nodiscard]] static Result<std::string> file_path(std::string_view path);

  /// The entries of the folder `path` ("" or "." for the workspace itself), sorted by name.
  [[nodiscard]] Result<std::vector<WorkspaceEntry>> list(std::string_view path = "") const;
  /// The bytes of the regular file `path`.
  [[nodiscard]] Result<std::string> read(std::string_view path) const;
  /// Whether `path` exists (a file or a folder). Errors: a path the rules refuse, a symlink on the way.
  [[nodiscard]] Result<bool> exists(std::string_view path) const;
  /// Writes `bytes` to the file `path`, replacing what it held, after making the folders above it.
  /// The default quotas of permissions.fs apply (skillbox/policy.h FsPolicy).
  [[nodiscard]] Result<void> write(std::string_view path, std::string_view bytes) const;
  /// Removes the file or empty folder `path`; with `recursive`, a folder and everything in it
  /// (symlinks inside are removed, never followed). The workspace itself cannot be removed.
  [[nodiscard]] Result<void> remove(std::string_view path, bool recursive) const;

  WorkspaceFiles(WorkspaceFiles&&) noexcept;
  WorkspaceFiles& operator=(WorkspaceFiles&&) noexcept;
  ~WorkspaceFiles();

 private:
  struct Impl;
  explicit WorkspaceFiles(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox
