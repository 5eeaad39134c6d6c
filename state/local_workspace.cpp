// state/local_workspace.cpp — the eight workspace operations of the local backend (local_workspace.h),
// and is_workspace_path().
#include "state/local_workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "state/beneath.h"
#include "state/file_io.h"

namespace skillbox::state {
namespace {

using file_io::kDirMode;
using file_io::kFileMode;

/// Deletes everything below a directory without following symlinks (links are removed, never
/// their targets). Stops with ECANCELED before the next unlink once the invocation must stop: each
/// unlink is one atomic step, so what is left is a valid (partly removed) tree.
class RemoveVisitor : public TreeVisitor {
 public:
  explicit RemoveVisitor(const bus::StopToken& stop) : stop_(stop) {}
  int entry(int dir, const std::string& name, const struct stat& st, bool& descend) override {
    if (S_ISDIR(st.st_mode)) {
      descend = true;
      return 0;
    }
    if (stop_.stop_requested()) return ECANCELED;
    return unlinkat(dir, name.c_str(), 0) == 0 || errno == ENOENT ? 0 : errno;
  }
  int leave(int dir, const std::string& name, const struct stat&) override {
    if (stop_.stop_requested()) return ECANCELED;
    return unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : errno;
  }

 private:
  const bus::StopToken& stop_;
};

WorkspaceError error(WorkspaceErrc code, bool second = false) {
  WorkspaceError e{code};
  e.second = second;
  return e;
}

/// The last component of a workspace path other than ".".
std::string last_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

/// The components of a workspace path ("." has none).
std::vector<std::string> components_of(std::string_view path) {
  std::vector<std::string> out;
  if (path == ".") return out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

/// The entry at `rel` beneath `root`, looked at through an O_PATH descriptor, which never opens the file
/// itself: a FIFO, socket or device (placed by the host; skills cannot create them) is examined without
/// blocking or side effects. A symlink is refused.
WorkspaceResult<struct stat> probe_beneath(int root, const std::string& rel) {
  base::UniqueFd fd;
  if (int err = open_beneath(root, rel.c_str(), O_PATH, fd)) return errno_to_workspace_error(err);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_to_workspace_error(errno);
  if (S_ISLNK(st.st_mode)) return error(WorkspaceErrc::symlink);
  return st;
}

}  // namespace

bool is_workspace_path(std::string_view path) {
  if (path == ".") return true;
  if (path.empty()) return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.size() > kMaxWorkspaceNameBytes ||
        part.find('\0') != std::string_view::npos || part.starts_with(kWorkspaceReservedPrefix)) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

// Every operation checks its path first (the backend's own boundary, whatever the caller checked),
// then resolves beneath the root, then acts.

// ---- reading -------------------------------------------------------------------------------------------

WorkspaceResult<void> LocalWorkspaceSession::read_file(std::string_view path,
                                                       const std::function<bool(uint64_t)>& admit,
                                                       bus::Bytes& out) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  const std::string rel(path);
  // First a look without opening: anything but a regular file is refused before the open below.
  auto probed = probe_beneath(root_.get(), rel);
  if (!probed) return probed.error();
  if (S_ISDIR(probed->st_mode)) return error(WorkspaceErrc::is_directory);
  if (!S_ISREG(probed->st_mode)) return error(WorkspaceErrc::not_regular);

  base::UniqueFd fd;
  if (int err = open_beneath(root_.get(), rel.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, fd))
    return errno_to_workspace_error(err);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_to_workspace_error(errno);
  // The decision is made on the descriptor actually read. It may be a newer file than the probe's
  // (a concurrent writeFile renamed one into place): any regular file is fine.
  if (!S_ISREG(st.st_mode)) return error(WorkspaceErrc::not_regular);
  const auto size = static_cast<uint64_t>(st.st_size);
  if (!admit(size)) return error(WorkspaceErrc::refused);
  out.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < out.size()) {
    if (stop_.stop_requested()) return error(WorkspaceErrc::stopped);
    const ssize_t n =
        ::read(fd.get(), out.data() + done, std::min(out.size() - done, file_io::kIoChunkBytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_to_workspace_error(errno);
    }
    if (n == 0) break;  // shrank meanwhile (only the host writes in place): return what is there
    done += static_cast<size_t>(n);
  }
  out.resize(done);
  return {};
}

WorkspaceResult<std::vector<bus::FsDirEntry>> LocalWorkspaceSession::list(std::string_view path) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  const std::string rel(path);
  // O_DIRECTORY makes the kernel refuse anything else before opening it (no FIFO/device open).
  base::UniqueFd fd;
  if (int err = open_beneath(root_.get(), rel.c_str(), O_RDONLY | O_DIRECTORY, fd)) {
    if (err == ENOTDIR) {
      base::UniqueFd probe;
      if (open_beneath(root_.get(), rel.c_str(), O_PATH, probe) == 0)
        return error(WorkspaceErrc::not_directory);
    }
    return errno_to_workspace_error(err);
  }
  std::vector<DirectoryEntry> listing;
  if (int err = list_directory(fd.get(), listing)) return errno_to_workspace_error(err);

  std::vector<bus::FsDirEntry> entries;
  entries.reserve(listing.size());
  size_t seen = 0;
  for (DirectoryEntry& e : listing) {
    if (++seen % 256 == 0 && stop_.stop_requested()) return error(WorkspaceErrc::stopped);
    if (e.name.starts_with(kWorkspaceReservedPrefix)) continue;  // our temporaries
    unsigned char type = e.type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (lstat_at(fd.get(), e.name, st) != 0) continue;  // gone meanwhile
      type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
    }
    const bus::FsEntryType t = type == DT_REG   ? bus::FsEntryType::file
                               : type == DT_DIR ? bus::FsEntryType::directory
                                                : bus::FsEntryType::other;
    entries.push_back(bus::FsDirEntry{std::move(e.name), t});
  }
  std::sort(entries.begin(), entries.end(),
            [](const bus::FsDirEntry& a, const bus::FsDirEntry& b) { return a.name < b.name; });
  return entries;
}

WorkspaceResult<WorkspaceStat> LocalWorkspaceSession::stat(std::string_view path) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  const std::string rel(path);
  auto probed = probe_beneath(root_.get(), rel);
  if (!probed) return probed.error();
  const struct stat& st = *probed;
  if (S_ISREG(st.st_mode))
    return WorkspaceStat{bus::FsEntryType::file, static_cast<uint64_t>(st.st_size), file_io::mtime_ms(st)};
  if (S_ISDIR(st.st_mode)) return WorkspaceStat{bus::FsEntryType::directory, 0, file_io::mtime_ms(st)};
  return error(WorkspaceErrc::not_regular);
}

WorkspaceResult<bool> LocalWorkspaceSession::exists(std::string_view path) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  const std::string rel(path);
  base::UniqueFd fd;
  const int err = open_beneath(root_.get(), rel.c_str(), O_PATH, fd);
  if (err == ENOENT || err == ENOTDIR) return false;
  // A symlink or an escape is not "absent": it is refused, like every other access through it.
  if (err) return errno_to_workspace_error(err);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_to_workspace_error(errno);
  if (S_ISLNK(st.st_mode)) return error(WorkspaceErrc::symlink);
  return true;
}

// ---- writing -------------------------------------------------------------------------------------------

WorkspaceResult<void> LocalWorkspaceSession::write_file(std::string_view path, std::span<const uint8_t> data,
                                                        bool append, const WorkspaceQuota& quota) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  if (path == ".") return error(WorkspaceErrc::is_directory);
  if (auto ok = writable(); !ok) return ok.error();
  if (!append && data.size() > quota.max_file_bytes)
    return WorkspaceError{WorkspaceErrc::file_too_large, data.size()};
  auto parent_or = open_parent(path);
  if (!parent_or) return std::move(parent_or.error());
  const int parent = parent_or->fd;
  const std::string name = last_name(path);

  MutationLock held(*this);
  if (auto ok = acquire(); !ok) return ok.error();

  struct stat old {};
  const int lstat_err = lstat_at(parent, name, old);
  const bool exists = lstat_err == 0;
  if (lstat_err && lstat_err != ENOENT) return errno_to_workspace_error(lstat_err);
  if (exists) {
    if (S_ISDIR(old.st_mode)) return error(WorkspaceErrc::is_directory);
    if (S_ISLNK(old.st_mode)) return error(WorkspaceErrc::symlink);
    if (!S_ISREG(old.st_mode)) return error(WorkspaceErrc::not_regular);
  }
  uint64_t old_size = exists ? static_cast<uint64_t>(old.st_size) : 0;

  // An append copies the current content into the temporary file, then appends: the same
  // all-or-nothing rename as a write, at the cost of copying (bounded by max_file_bytes).
  base::UniqueFd source;
  if (append && exists) {
    if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, source))
      return errno_to_workspace_error(err);
    struct stat st {};
    if (fstat(source.get(), &st) != 0) return errno_to_workspace_error(errno);
    if (!S_ISREG(st.st_mode) || st.st_ino != old.st_ino || st.st_dev != old.st_dev)
      return error(WorkspaceErrc::not_regular);
    old_size = static_cast<uint64_t>(st.st_size);
  }
  const uint64_t new_size = (append ? old_size : 0) + data.size();
  if (new_size > quota.max_file_bytes) return WorkspaceError{WorkspaceErrc::file_too_large, new_size};
  const uint64_t bytes = usage_->bytes - std::min(usage_->bytes, old_size) + new_size;
  const uint64_t entries = usage_->entries + (exists ? 0 : 1);
  if (auto ok = check_quota(quota, bytes, entries); !ok) return ok.error();
  if (auto ok = begin_change(); !ok) return ok.error();

  // Write a temporary file beside the target, make it durable, then rename it into place: readers
  // and concurrent writers see the old or the new content, never a mixture, and a failure (quota,
  // disk full, crash) leaves the old content untouched.
  const std::string temp = file_io::temporary_name();
  base::UniqueFd out(
      openat(parent, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode));
  if (!out) return errno_to_workspace_error(errno);
  int err = 0;
  // Both check the stop token between chunks: a large append or write ends at the deadline, and the
  // temporary is removed below, so the target keeps its old content and the totals stay exact.
  if (source) err = file_io::copy_bytes(source.get(), out.get(), old_size, &stop_);
  if (!err) err = file_io::write_all(out.get(), data.data(), data.size(), &stop_);
  if (!err && fsync(out.get()) != 0) err = errno;
  out.reset();
  // The copy and the write may take long (an append copies the whole file): the rename is the one
  // effect, so a limit reached meanwhile cancels it and the target keeps its old content.
  if (!err && stop_.stop_requested()) err = ECANCELED;
  if (!err && renameat(parent, temp.c_str(), parent, name.c_str()) != 0) err = errno;
  if (err) {
    unlinkat(parent, temp.c_str(), 0);
    return errno_to_workspace_error(err);
  }
  usage_->bytes = bytes;
  usage_->entries = entries;
  if (int sync_err = file_io::sync_directory(parent)) return errno_to_workspace_error(sync_err);
  return {};
}

WorkspaceResult<void> LocalWorkspaceSession::mkdir(std::string_view path, bool recursive,
                                                   const WorkspaceQuota& quota) {
  if (!is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
  if (auto ok = writable(); !ok) return ok.error();
  if (path == ".") {
    if (recursive) return {};
    return error(WorkspaceErrc::exists);
  }

  if (!recursive) {
    auto parent_or = open_parent(path);
    if (!parent_or) return std::move(parent_or.error());
    const int parent = parent_or->fd;
    const std::string name = last_name(path);
    MutationLock held(*this);
    if (auto ok = acquire(); !ok) return ok.error();
    struct stat st {};
    if (lstat_at(parent, name, st) == 0) {
      if (S_ISLNK(st.st_mode)) return error(WorkspaceErrc::symlink);
      return error(WorkspaceErrc::exists);
    }
    if (auto ok = check_quota(quota, usage_->bytes, usage_->entries + 1); !ok) return ok.error();
    if (auto ok = begin_change(); !ok) return ok.error();
    if (mkdirat(parent, name.c_str(), kDirMode) != 0) return errno_to_workspace_error(errno);
    ++usage_->entries;
    if (int err = file_io::sync_directory(parent)) return errno_to_workspace_error(err);
    return {};
  }

  // Recursive: walk down one component at a time from the root, creating what is missing; each
  // step opens the next directory beneath the previous one, so a symlink anywhere is refused.
  MutationLock held(*this);
  if (auto ok = acquire(); !ok) return ok.error();
  base::UniqueFd current;
  int dir = root_.get();
  const std::vector<std::string> components = components_of(path);
  for (size_t i = 0; i < components.size(); ++i) {
    const char* component = components[i].c_str();
    base::UniqueFd next;
    int err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    if (err == ENOENT) {
      if (auto ok = check_quota(quota, usage_->bytes, usage_->entries + 1); !ok) return ok.error();
      if (auto ok = begin_change(); !ok) return ok.error();
      if (mkdirat(dir, component, kDirMode) != 0) return errno_to_workspace_error(errno);
      ++usage_->entries;
      if (int sync_err = file_io::sync_directory(dir)) return errno_to_workspace_error(sync_err);
      err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    }
    if (err == ENOTDIR)
      return error(i + 1 == components.size() ? WorkspaceErrc::not_directory
                                              : WorkspaceErrc::not_a_directory);
    if (err) return errno_to_workspace_error(err);
    current = std::move(next);
    dir = current.get();
  }
  return {};
}

WorkspaceResult<void> LocalWorkspaceSession::remove(std::string_view path, bool recursive) {
  if (!is_workspace_path(path) || path == ".") return error(WorkspaceErrc::invalid_path);
  if (auto ok = writable(); !ok) return ok.error();
  auto parent_or = open_parent(path);
  if (!parent_or) return std::move(parent_or.error());
  const int parent = parent_or->fd;
  const std::string name = last_name(path);

  MutationLock held(*this);
  if (auto ok = acquire(); !ok) return ok.error();
  struct stat st {};
  if (int err = lstat_at(parent, name, st)) return errno_to_workspace_error(err);
  // Removing a symlink would not follow it, but every access through a name that is a symlink is
  // refused alike; a recursive remove of a directory deletes links inside it without following.
  if (S_ISLNK(st.st_mode)) return error(WorkspaceErrc::symlink);

  if (S_ISDIR(st.st_mode)) {
    if (recursive) {
      base::UniqueFd dir;
      if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_DIRECTORY, dir))
        return errno_to_workspace_error(err);
      if (auto ok = begin_change(); !ok) return ok.error();
      // Recount at the next mutation rather than tracking every unlink: exact even when the walk
      // stops half-way.
      usage_.reset();
      RemoveVisitor remover(stop_);
      if (int err = walk_tree(dir.get(), remover)) {
        if (err == ECANCELED) return error(WorkspaceErrc::stopped_partway);
        return errno_to_workspace_error(err);
      }
      if (stop_.stop_requested()) return error(WorkspaceErrc::stopped_emptied);
    } else if (auto ok = begin_change(); !ok) {
      return ok.error();
    }
    if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
      if (errno == ENOTEMPTY || errno == EEXIST) return error(WorkspaceErrc::not_empty);
      return errno_to_workspace_error(errno);
    }
  } else {
    if (auto ok = begin_change(); !ok) return ok.error();
    if (unlinkat(parent, name.c_str(), 0) != 0) return errno_to_workspace_error(errno);
    if (S_ISREG(st.st_mode)) usage_->bytes -= std::min(usage_->bytes, static_cast<uint64_t>(st.st_size));
  }
  if (usage_ && usage_->entries > 0) --usage_->entries;
  if (int err = file_io::sync_directory(parent)) return errno_to_workspace_error(err);
  return {};
}

WorkspaceResult<void> LocalWorkspaceSession::rename(std::string_view from, std::string_view to) {
  if (!is_workspace_path(from) || from == ".") return error(WorkspaceErrc::invalid_path);
  if (!is_workspace_path(to) || to == ".") return error(WorkspaceErrc::invalid_path, true);
  if (auto ok = writable(); !ok) return ok.error();
  auto from_parent_or = open_parent(from);
  if (!from_parent_or) return std::move(from_parent_or.error());
  auto to_parent_or = open_parent(to, true);
  if (!to_parent_or) return std::move(to_parent_or.error());
  const int from_parent = from_parent_or->fd;
  const int to_parent = to_parent_or->fd;
  const std::string from_name = last_name(from);
  const std::string to_name = last_name(to);

  MutationLock held(*this);
  if (auto ok = acquire(); !ok) return ok.error();
  struct stat src {};
  if (int err = lstat_at(from_parent, from_name, src)) return errno_to_workspace_error(err);
  if (S_ISLNK(src.st_mode)) return error(WorkspaceErrc::symlink);
  struct stat dst {};
  const int dst_err = lstat_at(to_parent, to_name, dst);
  if (dst_err && dst_err != ENOENT) return errno_to_workspace_error(dst_err, true);
  const bool replaces = dst_err == 0;
  if (replaces) {
    if (S_ISLNK(dst.st_mode)) return error(WorkspaceErrc::symlink, true);
    // Same file under both names (also `a` -> `a`): POSIX rename does nothing.
    if (dst.st_dev == src.st_dev && dst.st_ino == src.st_ino) return {};
    if (S_ISDIR(dst.st_mode) && !S_ISDIR(src.st_mode)) return error(WorkspaceErrc::file_over_directory, true);
    if (!S_ISDIR(dst.st_mode) && S_ISDIR(src.st_mode)) return error(WorkspaceErrc::directory_over_file, true);
  }
  if (auto ok = begin_change(); !ok) return ok.error();
  if (renameat(from_parent, from_name.c_str(), to_parent, to_name.c_str()) != 0) {
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST) return error(WorkspaceErrc::not_empty, true);
    if (err == EINVAL) return error(WorkspaceErrc::into_itself, true);
    return errno_to_workspace_error(err, true);
  }
  if (replaces) {
    if (S_ISREG(dst.st_mode)) usage_->bytes -= std::min(usage_->bytes, static_cast<uint64_t>(dst.st_size));
    if (usage_->entries > 0) --usage_->entries;
  }
  int err = file_io::sync_directory(to_parent);
  if (!err && from_parent != to_parent) err = file_io::sync_directory(from_parent);
  if (err) return errno_to_workspace_error(err, true);
  return {};
}

}  // namespace skillbox::state
