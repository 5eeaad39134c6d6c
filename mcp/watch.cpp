// mcp/watch.cpp — polling skill folders for changes (see watch.h).
#include "mcp/watch.h"

#include <sys/stat.h>

#include <algorithm>
#include <system_error>
#include <utility>

namespace skillbox::mcp {

std::string folder_fingerprint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return {};
  std::vector<std::string> entries;
  for (const fs::recursive_directory_iterator end; it != end && entries.size() < kMaxWatchedFiles;
       it.increment(ec)) {
    if (ec) break;
    struct stat st {};
    // lstat: a symlink's own change counts; what it points to outside the folder is not watched.
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    std::string line = it->path().lexically_relative(dir).string();
    line += '\0';
    line += std::to_string(st.st_mode) + ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_ino) +
            ' ' + std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec);
    entries.push_back(std::move(line));
  }
  std::sort(entries.begin(), entries.end());
  std::string out;
  for (const std::string& e : entries) out += e + '\n';
  return out;
}

FolderWatch::FolderWatch(std::vector<std::filesystem::path> dirs, std::chrono::milliseconds interval,
                         std::function<void()> changed)
    : dirs_(std::move(dirs)), interval_(interval), changed_(std::move(changed)), thread_([this] { run(); }) {}

FolderWatch::~FolderWatch() {
  stop();
}

void FolderWatch::stop() {
  {
    base::MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string FolderWatch::fingerprint() const {
  std::string all;
  for (const std::filesystem::path& dir : dirs_) all += folder_fingerprint(dir) + '\x1e';
  return all;
}

void FolderWatch::run() {
  std::string seen = fingerprint();
  std::string pending;  // a new fingerprint waiting to hold still for one interval
  for (;;) {
    {
      base::MutexLock lock(mu_);
      if (lock.wait_for(wake_, interval_, [this] {
            mu_.assert_held();
            return stopping_;
          }))
        return;
    }
    std::string now = fingerprint();
    if (now == seen) {
      pending.clear();
      continue;
    }
    if (now != pending) {
      pending = std::move(now);  // changed: look again next time, when a save in several writes is done
      continue;
    }
    seen = std::move(pending);
    pending.clear();
    changed_();
  }
}

}  // namespace skillbox::mcp
