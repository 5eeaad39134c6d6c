// capabilities/fs/workspace.cpp — the eight `openhuman.fs` operations, served inside one skill's
// workspace.
//
// Layout on disk (DATA = the resolved data directory):
//   DATA/skills/<id>/workspace/       the workspace (0700), opened once as `root`
//   DATA/skills/<id>/workspace.lock   flock(2) serialising mutations; holds the change token
//
// Every skill path is parsed by parse_workspace_path() and then resolved by openat2 beneath `root`
// (beneath.h). Operations that act on a name (mkdirat, unlinkat, renameat) first open the parent
// directory that way and then act on the single final component relative to that parent fd, so no
// path is ever checked by name and used again later. The lock, usage and change-token protocol is
// workspace_lock.h's; the system-call helpers and errno mapping are workspace_io.h's.
#include "capabilities/fs/workspace.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "capabilities/fs/beneath.h"
#include "capabilities/fs/workspace_io.h"
#include "capabilities/fs/workspace_lock.h"
#include "capabilities/fs/workspace_path.h"

namespace skillbox::capabilities {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;
using workspace_io::Call;
using workspace_io::copy_bytes;
using workspace_io::errno_error;
using workspace_io::fail;
using workspace_io::kDirMode;
using workspace_io::kFileMode;
using workspace_io::mtime_ms;
using workspace_io::sync_directory;
using workspace_io::temporary_name;
using workspace_io::write_all;

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

/// The reply of a mutation cut short because the invocation reached a limit (bus/stop_token.h).
ErrorReply stopped(const Call& call, const char* left) {
  return fail(ErrorCode::Timeout, call, std::string("stopped: the invocation reached a limit; ") + left);
}

}  // namespace

// ---- construction --------------------------------------------------------------------------------------

Workspace::Workspace(std::filesystem::path data_dir, std::string skill_id, FsPolicy policy,
                     const bus::StopToken& stop, bus::MemoryBudget* memory)
    : impl_(std::make_unique<Impl>()) {
  impl_->memory = memory;
  impl_->data_dir = std::move(data_dir);
  impl_->skill_id = std::move(skill_id);
  impl_->policy = policy;
  impl_->stop = &stop;
}

Workspace::~Workspace() = default;

// Every handler follows the same order: mode, path syntax, open the workspace, resolve, act. The mode
// comes first so that a skill without the permission learns nothing about paths or files.

// ---- reading -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsReadFileRequest& r) {
  Impl& w = *impl_;
  const Call call{"readFile", r.path};
  if (auto ok = w.allow(Access::read, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (auto ok = w.open(call); !ok) return ok.error();

  // First an O_PATH descriptor, which never opens the file itself: a FIFO, socket or device
  // (placed by the host; skills cannot create them) is refused without blocking or side effects.
  base::UniqueFd probe;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, probe))
    return errno_error(err, call);
  struct stat probe_st {};
  if (fstat(probe.get(), &probe_st) != 0) return errno_error(errno, call);
  if (S_ISDIR(probe_st.st_mode)) return fail(ErrorCode::InvalidArgument, call, "is a directory; use readdir");
  if (S_ISLNK(probe_st.st_mode)) return Impl::symlink_refused(call);
  if (!S_ISREG(probe_st.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");

  base::UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, fd)) {
    return errno_error(err, call);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  // The decision is made on the descriptor actually read. It may be a newer file than the probe's
  // (a concurrent writeFile renamed one into place): any regular file is fine.
  if (!S_ISREG(st.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > w.policy.max_file_bytes) {
    return fail(ErrorCode::PayloadTooLarge, call,
                "the file is " + std::to_string(size) + " bytes; permissions.fs.max_file_bytes is " +
                    std::to_string(w.policy.max_file_bytes));
  }
  // The content is held in host memory until the skill has it as a value: reserved first.
  bus::BytesReply reply({}, bus::HostBytes(w.memory));
  if (!reply.held.grow(size))
    return fail(ErrorCode::PayloadTooLarge, call,
                "the file is " + std::to_string(size) + " bytes: " + w.memory->refusal(size));
  reply.data.resize(static_cast<size_t>(size));
  size_t done = 0;
  while (done < reply.data.size()) {
    if (w.stop->stop_requested()) return stopped(call, "nothing was read");
    const ssize_t n = read(fd.get(), reply.data.data() + done,
                           std::min(reply.data.size() - done, workspace_io::kIoChunkBytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno_error(errno, call);
    }
    if (n == 0) break;  // shrank meanwhile (only the host writes in place): return what is there
    done += static_cast<size_t>(n);
  }
  reply.data.resize(done);
  return reply;
}

bus::Reply Workspace::handle(const bus::FsReaddirRequest& r) {
  Impl& w = *impl_;
  const Call call{"readdir", r.path};
  if (auto ok = w.allow(Access::read, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (auto ok = w.open(call); !ok) return ok.error();

  // O_DIRECTORY makes the kernel refuse anything else before opening it (no FIFO/device open).
  base::UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_RDONLY | O_DIRECTORY, fd)) {
    if (err == ENOTDIR) {
      base::UniqueFd probe;
      if (open_beneath(w.root.get(), path.relative().c_str(), O_PATH, probe) == 0) {
        return fail(ErrorCode::InvalidArgument, call, "not a directory");
      }
    }
    return errno_error(err, call);
  }
  std::vector<DirectoryEntry> listing;
  if (int err = list_directory(fd.get(), listing)) return errno_error(err, call);

  bus::FsReaddirReply reply;
  reply.entries.reserve(listing.size());
  size_t seen = 0;
  for (DirectoryEntry& e : listing) {
    if (++seen % 256 == 0 && w.stop->stop_requested()) return stopped(call, "nothing was listed");
    // Temporaries are the host's; names a skill could not pass back as a path are not listed.
    if (!is_visible_name(e.name)) continue;
    unsigned char type = e.type;
    if (type == DT_UNKNOWN) {
      struct stat st {};
      if (Impl::lstat_at(fd.get(), e.name, st) != 0) continue;  // gone meanwhile
      type = S_ISREG(st.st_mode) ? DT_REG : S_ISDIR(st.st_mode) ? DT_DIR : DT_LNK;
    }
    const bus::FsEntryType t = type == DT_REG   ? bus::FsEntryType::file
                               : type == DT_DIR ? bus::FsEntryType::directory
                                                : bus::FsEntryType::other;
    reply.entries.push_back(bus::FsDirEntry{std::move(e.name), t});
  }
  std::sort(reply.entries.begin(), reply.entries.end(),
            [](const bus::FsDirEntry& a, const bus::FsDirEntry& b) { return a.name < b.name; });
  return reply;
}

bus::Reply Workspace::handle(const bus::FsStatRequest& r) {
  Impl& w = *impl_;
  const Call call{"stat", r.path};
  if (auto ok = w.allow(Access::read, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (auto ok = w.open(call); !ok) return ok.error();

  base::UniqueFd fd;
  if (int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, fd))
    return errno_error(err, call);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
  if (S_ISREG(st.st_mode))
    return bus::FsStatReply{bus::FsEntryType::file, static_cast<uint64_t>(st.st_size), mtime_ms(st)};
  if (S_ISDIR(st.st_mode)) return bus::FsStatReply{bus::FsEntryType::directory, 0, mtime_ms(st)};
  return fail(ErrorCode::PermissionDenied, call, "not a regular file or directory");
}

bus::Reply Workspace::handle(const bus::FsExistsRequest& r) {
  Impl& w = *impl_;
  const Call call{"exists", r.path};
  if (auto ok = w.allow(Access::read, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (auto ok = w.open(call); !ok) return ok.error();

  base::UniqueFd fd;
  const int err = open_beneath(w.root.get(), path.relative().c_str(), O_PATH, fd);
  if (err == ENOENT || err == ENOTDIR) return bus::BoolReply{false};
  // A symlink or an escape is not "absent": it is refused, like every other access through it.
  if (err) return errno_error(err, call);
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return errno_error(errno, call);
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
  return bus::BoolReply{true};
}

// ---- writing -------------------------------------------------------------------------------------------

bus::Reply Workspace::handle(const bus::FsWriteFileRequest& r) {
  Impl& w = *impl_;
  const Call call{r.append ? "appendFile" : "writeFile", r.path};
  if (auto ok = w.allow(Access::write, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (path.is_root()) return fail(ErrorCode::InvalidArgument, call, "is a directory");
  if (!r.append && r.data.size() > w.policy.max_file_bytes) return w.file_too_large(call, r.data.size());
  if (auto ok = w.open(call); !ok) return ok.error();
  auto parent_or = w.open_parent(path, call);
  if (!parent_or) return std::move(parent_or.error());
  const int parent = parent_or->fd;
  const std::string& name = path.name();

  Impl::MutationLock held(w);
  if (auto ok = w.acquire(call); !ok) return ok.error();

  struct stat old {};
  const int lstat_err = Impl::lstat_at(parent, name, old);
  const bool exists = lstat_err == 0;
  if (lstat_err && lstat_err != ENOENT) return errno_error(lstat_err, call);
  if (exists) {
    if (S_ISDIR(old.st_mode)) return fail(ErrorCode::InvalidArgument, call, "is a directory");
    if (S_ISLNK(old.st_mode)) return Impl::symlink_refused(call);
    if (!S_ISREG(old.st_mode)) return fail(ErrorCode::PermissionDenied, call, "not a regular file");
  }
  uint64_t old_size = exists ? static_cast<uint64_t>(old.st_size) : 0;

  // appendFile copies the current content into the temporary file, then appends: the same
  // all-or-nothing rename as writeFile, at the cost of copying (bounded by max_file_bytes).
  base::UniqueFd source;
  if (r.append && exists) {
    if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY, source)) {
      return errno_error(err, call);
    }
    struct stat st {};
    if (fstat(source.get(), &st) != 0) return errno_error(errno, call);
    if (!S_ISREG(st.st_mode) || st.st_ino != old.st_ino || st.st_dev != old.st_dev) {
      return fail(ErrorCode::PermissionDenied, call, "not a regular file");
    }
    old_size = static_cast<uint64_t>(st.st_size);
  }
  const uint64_t new_size = (r.append ? old_size : 0) + r.data.size();
  if (new_size > w.policy.max_file_bytes) return w.file_too_large(call, new_size);
  const uint64_t bytes = w.usage->bytes - std::min(w.usage->bytes, old_size) + new_size;
  const uint64_t entries = w.usage->entries + (exists ? 0 : 1);
  if (auto ok = w.check_quota(call, bytes, entries); !ok) return ok.error();
  if (auto ok = w.begin_change(call); !ok) return ok.error();

  // Write a temporary file beside the target, make it durable, then rename it into place: readers
  // and concurrent writers see the old or the new content, never a mixture, and a failure (quota,
  // disk full, crash) leaves the old content untouched.
  const std::string temp = temporary_name();
  base::UniqueFd out(
      openat(parent, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode));
  if (!out) return errno_error(errno, call);
  int err = 0;
  // Both check the stop token between chunks: a large append or write ends at the deadline, and the
  // temporary is removed below, so the target keeps its old content and the totals stay exact.
  if (source) err = copy_bytes(source.get(), out.get(), old_size, w.stop);
  if (!err) err = write_all(out.get(), r.data.data(), r.data.size(), w.stop);
  if (!err && fsync(out.get()) != 0) err = errno;
  out.reset();
  // The copy and the write may take long (an append copies the whole file): the rename is the one
  // effect, so a limit reached meanwhile cancels it and the target keeps its old content.
  if (!err && w.stop->stop_requested()) err = ECANCELED;
  if (!err && renameat(parent, temp.c_str(), parent, name.c_str()) != 0) err = errno;
  if (err) {
    unlinkat(parent, temp.c_str(), 0);
    if (err == ECANCELED) return stopped(call, "the file was not changed");
    return errno_error(err, call);
  }
  w.usage->bytes = bytes;
  w.usage->entries = entries;
  if (int sync_err = sync_directory(parent)) return errno_error(sync_err, call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsMkdirRequest& r) {
  Impl& w = *impl_;
  const Call call{"mkdir", r.path};
  if (auto ok = w.allow(Access::write, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (auto ok = w.open(call); !ok) return ok.error();
  if (path.is_root()) {
    if (r.recursive) return bus::OkReply{};
    return fail(ErrorCode::AlreadyExists, call, "already exists");
  }

  if (!r.recursive) {
    auto parent_or = w.open_parent(path, call);
    if (!parent_or) return std::move(parent_or.error());
    const int parent = parent_or->fd;
    Impl::MutationLock held(w);
    if (auto ok = w.acquire(call); !ok) return ok.error();
    struct stat st {};
    if (Impl::lstat_at(parent, path.name(), st) == 0) {
      if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);
      return fail(ErrorCode::AlreadyExists, call, "already exists");
    }
    if (auto ok = w.check_quota(call, w.usage->bytes, w.usage->entries + 1); !ok) return ok.error();
    if (auto ok = w.begin_change(call); !ok) return ok.error();
    if (mkdirat(parent, path.name().c_str(), kDirMode) != 0) return errno_error(errno, call);
    ++w.usage->entries;
    if (int err = sync_directory(parent)) return errno_error(err, call);
    return bus::OkReply{};
  }

  // Recursive: walk down one component at a time from the root, creating what is missing; each
  // step opens the next directory beneath the previous one, so a symlink anywhere is refused.
  Impl::MutationLock held(w);
  if (auto ok = w.acquire(call); !ok) return ok.error();
  base::UniqueFd current;
  int dir = w.root.get();
  const auto& components = path.components();
  for (size_t i = 0; i < components.size(); ++i) {
    const char* component = components[i].c_str();
    base::UniqueFd next;
    int err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    if (err == ENOENT) {
      if (auto ok = w.check_quota(call, w.usage->bytes, w.usage->entries + 1); !ok) return ok.error();
      if (auto ok = w.begin_change(call); !ok) return ok.error();
      if (mkdirat(dir, component, kDirMode) != 0) return errno_error(errno, call);
      ++w.usage->entries;
      if (int sync_err = sync_directory(dir)) return errno_error(sync_err, call);
      err = open_beneath(dir, component, O_RDONLY | O_DIRECTORY, next);
    }
    if (err == ENOTDIR) {
      return fail(i + 1 == components.size() ? ErrorCode::AlreadyExists : ErrorCode::NotFound, call,
                  i + 1 == components.size() ? "already exists and is not a directory"
                                             : "a component of the path is not a directory");
    }
    if (err) return errno_error(err, call);
    current = std::move(next);
    dir = current.get();
  }
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRemoveRequest& r) {
  Impl& w = *impl_;
  const Call call{"remove", r.path};
  if (auto ok = w.allow(Access::write, call); !ok) return ok.error();
  auto parsed = parse_workspace_path(call.op, r.path);
  if (!parsed) return std::move(parsed.error());
  const WorkspacePath& path = *parsed;
  if (path.is_root()) {
    return fail(ErrorCode::InvalidArgument, call, "the workspace root cannot be removed; remove its entries");
  }
  if (auto ok = w.open(call); !ok) return ok.error();
  auto parent_or = w.open_parent(path, call);
  if (!parent_or) return std::move(parent_or.error());
  const int parent = parent_or->fd;
  const std::string& name = path.name();

  Impl::MutationLock held(w);
  if (auto ok = w.acquire(call); !ok) return ok.error();
  struct stat st {};
  if (int err = Impl::lstat_at(parent, name, st)) return errno_error(err, call);
  // Removing a symlink would not follow it, but every access through a name that is a symlink is
  // refused alike; a recursive remove of a directory deletes links inside it without following.
  if (S_ISLNK(st.st_mode)) return Impl::symlink_refused(call);

  if (S_ISDIR(st.st_mode)) {
    if (r.recursive) {
      base::UniqueFd dir;
      if (int err = open_beneath(parent, name.c_str(), O_RDONLY | O_DIRECTORY, dir))
        return errno_error(err, call);
      if (auto ok = w.begin_change(call); !ok) return ok.error();
      // Recount at the next mutation rather than tracking every unlink: exact even when the walk
      // stops half-way.
      w.usage.reset();
      RemoveVisitor remover(*w.stop);
      if (int err = walk_tree(dir.get(), remover)) {
        if (err == ECANCELED) return stopped(call, "the directory is partly removed (still a valid tree)");
        return errno_error(err, call);
      }
      if (w.stop->stop_requested()) return stopped(call, "the directory is emptied but not removed");
    } else if (auto ok = w.begin_change(call); !ok) {
      return ok.error();
    }
    if (unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0) {
      if (errno == ENOTEMPTY || errno == EEXIST) {
        return fail(ErrorCode::NotEmpty, call,
                    "the directory is not empty; pass {recursive: true} to remove it");
      }
      return errno_error(errno, call);
    }
  } else {
    if (auto ok = w.begin_change(call); !ok) return ok.error();
    if (unlinkat(parent, name.c_str(), 0) != 0) return errno_error(errno, call);
    if (S_ISREG(st.st_mode)) w.usage->bytes -= std::min(w.usage->bytes, static_cast<uint64_t>(st.st_size));
  }
  if (w.usage && w.usage->entries > 0) --w.usage->entries;
  if (int err = sync_directory(parent)) return errno_error(err, call);
  return bus::OkReply{};
}

bus::Reply Workspace::handle(const bus::FsRenameRequest& r) {
  Impl& w = *impl_;
  const Call from_call{"rename", r.from};
  const Call to_call{"rename", r.to};
  if (auto ok = w.allow(Access::write, from_call); !ok) return ok.error();
  auto from_parsed = parse_workspace_path(from_call.op, r.from);
  if (!from_parsed) return std::move(from_parsed.error());
  const WorkspacePath& from = *from_parsed;
  auto to_parsed = parse_workspace_path(to_call.op, r.to);
  if (!to_parsed) return std::move(to_parsed.error());
  const WorkspacePath& to = *to_parsed;
  if (from.is_root())
    return fail(ErrorCode::InvalidArgument, from_call, "the workspace root cannot be renamed");
  if (to.is_root()) return fail(ErrorCode::InvalidArgument, to_call, "the workspace root cannot be replaced");
  if (auto ok = w.open(from_call); !ok) return ok.error();
  auto from_parent_or = w.open_parent(from, from_call);
  if (!from_parent_or) return std::move(from_parent_or.error());
  auto to_parent_or = w.open_parent(to, to_call);
  if (!to_parent_or) return std::move(to_parent_or.error());
  const int from_parent = from_parent_or->fd;
  const int to_parent = to_parent_or->fd;

  Impl::MutationLock held(w);
  if (auto ok = w.acquire(from_call); !ok) return ok.error();
  struct stat src {};
  if (int err = Impl::lstat_at(from_parent, from.name(), src)) return errno_error(err, from_call);
  if (S_ISLNK(src.st_mode)) return Impl::symlink_refused(from_call);
  struct stat dst {};
  const int dst_err = Impl::lstat_at(to_parent, to.name(), dst);
  if (dst_err && dst_err != ENOENT) return errno_error(dst_err, to_call);
  const bool replaces = dst_err == 0;
  if (replaces) {
    if (S_ISLNK(dst.st_mode)) return Impl::symlink_refused(to_call);
    // Same file under both names (also `a` -> `a`): POSIX rename does nothing.
    if (dst.st_dev == src.st_dev && dst.st_ino == src.st_ino) return bus::OkReply{};
    if (S_ISDIR(dst.st_mode) && !S_ISDIR(src.st_mode)) {
      return fail(ErrorCode::InvalidArgument, to_call, "is a directory; a file cannot replace it");
    }
    if (!S_ISDIR(dst.st_mode) && S_ISDIR(src.st_mode)) {
      return fail(ErrorCode::InvalidArgument, to_call, "is not a directory; a directory cannot replace it");
    }
  }
  if (auto ok = w.begin_change(from_call); !ok) return ok.error();
  if (renameat(from_parent, from.name().c_str(), to_parent, to.name().c_str()) != 0) {
    const int err = errno;
    if (err == ENOTEMPTY || err == EEXIST)
      return fail(ErrorCode::NotEmpty, to_call, "is a directory that is not empty");
    if (err == EINVAL)
      return fail(ErrorCode::InvalidArgument, to_call, "a directory cannot move into itself");
    return errno_error(err, to_call);
  }
  if (replaces) {
    if (S_ISREG(dst.st_mode)) w.usage->bytes -= std::min(w.usage->bytes, static_cast<uint64_t>(dst.st_size));
    if (w.usage->entries > 0) --w.usage->entries;
  }
  int err = sync_directory(to_parent);
  if (!err && from_parent != to_parent) err = sync_directory(from_parent);
  if (err) return errno_error(err, to_call);
  return bus::OkReply{};
}

}  // namespace skillbox::capabilities
