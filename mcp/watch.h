// mcp/watch.h — notices when served skill folders change on disk, so that `skillbox mcp` can list
// their tools again and send notifications/tools/list_changed (docs/mcp.md "When the skills change").
//
// A poll, not inotify: every interval it stats each file below each folder (its relative path, size,
// modification time and inode). That costs microseconds for a skill's handful of files, needs no watch
// per subdirectory (inotify watches are per directory, limited per user by max_user_watches, and must be
// re-added as directories appear), sees editors that save by writing a new file and renaming it over the
// old, and works where inotify sees nothing (network and FUSE file systems, some container bind mounts).
// The price is latency: a change is noticed within two intervals (it must hold still for one, so that a
// save in several writes is read once, when complete).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace skillbox::mcp {

/// Most files below one folder that a fingerprint reads; a folder with more is fingerprinted by its
/// first kMaxWatchedFiles entries (a skill folder holds a few files; this bounds a mistaken `/`).
inline constexpr size_t kMaxWatchedFiles = 4096;

/// What folder_fingerprint() sees of `dir`: each entry's relative path, type, size, inode and
/// modification time (nanoseconds), in directory order sorted by path. Missing or unreadable: "".
[[nodiscard]] std::string folder_fingerprint(const std::filesystem::path& dir);

class FolderWatch {
 public:
  /// Polls `dirs` every `interval` from a thread of its own and calls `changed` (from that thread, one
  /// call at a time) when any folder's fingerprint changed and then held still for one interval.
  FolderWatch(std::vector<std::filesystem::path> dirs, std::chrono::milliseconds interval,
              std::function<void()> changed);
  /// stop().
  ~FolderWatch();
  FolderWatch(const FolderWatch&) = delete;
  FolderWatch& operator=(const FolderWatch&) = delete;

  /// Stops polling; waits for a `changed` call in progress. Idempotent.
  void stop();

 private:
  void run();
  [[nodiscard]] std::string fingerprint() const;

  const std::vector<std::filesystem::path> dirs_;
  const std::chrono::milliseconds interval_;
  const std::function<void()> changed_;
  base::Mutex mu_;
  std::condition_variable wake_;
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace skillbox::mcp
