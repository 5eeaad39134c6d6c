// state/beneath.cpp — openat2 beneath a directory fd, directory listing and the tree walk (beneath.h).
#include "state/beneath.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace skillbox::state {

static_assert(kResolveBeneath ==
                  (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV),
              "kResolveBeneath must match <linux/openat2.h>");

int open_beneath(int dirfd, const char* path, int flags, base::UniqueFd& out) {
  open_how how{};
  // No O_NOFOLLOW: RESOLVE_NO_SYMLINKS already refuses a trailing symlink with ELOOP, whereas
  // O_PATH | O_NOFOLLOW would hand back a descriptor of the symlink itself.
  how.flags = static_cast<uint64_t>(static_cast<unsigned>(flags | O_CLOEXEC));
  how.resolve = kResolveBeneath;
  // The kernel answers EAGAIN when a rename elsewhere races with `..` resolution; a few retries
  // settle it, and an endless race ends as an error rather than a hang.
  for (int attempt = 0; attempt < 32; ++attempt) {
    const long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (fd >= 0) {
      out.reset(static_cast<int>(fd));
      return 0;
    }
    if (errno != EAGAIN && errno != EINTR) return errno;
  }
  return EAGAIN;
}

int list_directory(int fd, std::vector<DirectoryEntry>& out) {
  out.clear();
  // 32 KiB holds a few hundred entries per getdents64 call; on the heap, as this may run on a
  // thread with a small stack. uint64_t elements keep dirent64 records aligned.
  std::vector<uint64_t> storage(size_t{32} * 1024 / sizeof(uint64_t));
  char* buffer = reinterpret_cast<char*>(storage.data());
  for (;;) {
    const ssize_t n = getdents64(fd, buffer, storage.size() * sizeof(uint64_t));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;
    for (ssize_t offset = 0; offset < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buffer + offset);
      offset += d->d_reclen;
      const char* name = d->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      out.push_back(DirectoryEntry{name, d->d_type});
    }
  }
}

namespace {

struct Level {
  std::vector<DirectoryEntry> entries;
  size_t next = 0;
  struct stat st {};  // of this directory
  std::string name;   // in its parent (empty for the start directory)
};

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

int walk_tree(int start, TreeVisitor& visitor) {
  base::UniqueFd current;
  if (int err = open_beneath(start, ".", O_RDONLY | O_DIRECTORY, current)) return err;
  std::vector<Level> levels(1);
  if (fstat(current.get(), &levels[0].st) != 0) return errno;
  if (int err = list_directory(current.get(), levels[0].entries)) return err;

  for (;;) {
    Level& top = levels.back();
    if (top.next == top.entries.size()) {
      if (levels.size() == 1) return 0;
      // Back up one level through `..`: plain openat is fine because we verify where it led.
      base::UniqueFd up(openat(current.get(), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!up) return errno;
      struct stat up_st {};
      if (fstat(up.get(), &up_st) != 0) return errno;
      if (!same_file(up_st, levels[levels.size() - 2].st)) return ESTALE;
      Level done = std::move(levels.back());
      levels.pop_back();
      current = std::move(up);
      if (int err = visitor.leave(current.get(), done.name, done.st)) return err;
      continue;
    }
    const std::string name = top.entries[top.next++].name;
    struct stat st {};
    if (fstatat(current.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // gone since listing
      return errno;
    }
    bool descend = false;
    if (int err = visitor.entry(current.get(), name, st, descend)) return err;
    if (!descend || !S_ISDIR(st.st_mode)) continue;

    base::UniqueFd child;
    if (int err = open_beneath(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY, child)) return err;
    Level next;
    if (fstat(child.get(), &next.st) != 0) return errno;
    if (!same_file(next.st, st)) return ESTALE;  // swapped between lstat and open
    if (int err = list_directory(child.get(), next.entries)) return err;
    next.name = name;
    levels.push_back(std::move(next));  // invalidates `top`; not used below
    current = std::move(child);
  }
}

}  // namespace skillbox::state
