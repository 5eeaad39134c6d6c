#include "isolation/fd_hygiene.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/unique_fd.h"

namespace skillbox::isolation {
namespace {

struct KeptSet {
  std::array<int, kMaxKeptFds> fds{};
  std::size_t count = 0;

  [[nodiscard]] bool contains(int fd) const {
    return std::find(fds.begin(), fds.begin() + static_cast<std::ptrdiff_t>(count), fd) !=
           fds.begin() + static_cast<std::ptrdiff_t>(count);
  }
};

Error fd_error(int err, const char* what) {
  return Error{Step::close_fds, err, what, false};
}

// Copies `keep` into a sorted, duplicate-free stack array.
bool make_kept_set(std::span<const int> keep, KeptSet& out) {
  if (keep.size() > kMaxKeptFds) return false;
  for (const int fd : keep) {
    if (fd < 0) return false;
    if (!out.contains(fd)) out.fds[out.count++] = fd;
  }
  std::sort(out.fds.begin(), out.fds.begin() + static_cast<std::ptrdiff_t>(out.count));
  return true;
}

long close_range_syscall(unsigned first, unsigned last) {
  return syscall(SYS_close_range, first, last, 0U);
}

// Parses a /proc/self/fd entry name; -1 for "." and "..".
int parse_fd_name(const char* name) {
  if (*name == '\0') return -1;
  long value = 0;
  for (const char* p = name; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return -1;
    value = value * 10 + (*p - '0');
    if (value > INT_MAX) return -1;
  }
  return static_cast<int>(value);
}

}  // namespace

Status close_fds_except(std::span<const int> keep) {
  KeptSet kept;
  if (!make_kept_set(keep, kept)) return Status(fd_error(EINVAL, "invalid set of descriptors to keep"));
  unsigned next = 0;
  for (std::size_t i = 0; i <= kept.count; ++i) {
    const bool tail = i == kept.count;
    const unsigned end = tail ? UINT_MAX : static_cast<unsigned>(kept.fds[i]);
    if (tail || end > next) {
      const unsigned last = tail ? UINT_MAX : end - 1;
      if (close_range_syscall(next, last) != 0) {
        // Kernel before 5.9, or an outer seccomp profile that refuses close_range (either answers the
        // first call, so nothing is half done): list the table instead.
        if (errno == ENOSYS || errno == EPERM) return close_fds_except_by_listing(keep);
        return Status(fd_error(errno, "close_range"));
      }
    }
    if (!tail) next = end + 1;
  }
  return Status();
}

Status close_fds_except_by_listing(std::span<const int> keep) {
  KeptSet kept;
  if (!make_kept_set(keep, kept)) return Status(fd_error(EINVAL, "invalid set of descriptors to keep"));
  const base::UniqueFd dir(open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return Status(fd_error(errno, "cannot list /proc/self/fd to close descriptors"));
  // /proc/PID/fd lists the descriptor table by position, so closing entries while reading it skips
  // none of the others.
  alignas(std::uint64_t) std::array<char, 4096> buffer;
  for (;;) {
    const long got = syscall(SYS_getdents64, dir.get(), buffer.data(), buffer.size());
    if (got < 0) return Status(fd_error(errno, "getdents64 on /proc/self/fd"));
    if (got == 0) break;
    for (long offset = 0; offset < got;) {
      // linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, char name[].
      unsigned short reclen = 0;
      std::memcpy(&reclen, buffer.data() + offset + 16, sizeof reclen);
      const int fd = parse_fd_name(buffer.data() + offset + 19);
      if (fd >= 0 && fd != dir.get() && !kept.contains(fd)) close(fd);
      offset += reclen;
    }
  }
  return Status();
}

Result<std::vector<int>> list_open_fds(pid_t pid) {
  const std::string path = pid == 0 ? "/proc/self/fd" : "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return Error{Step::close_fds, errno, "cannot read /proc/PID/fd", false};
  const int own = pid == 0 ? dirfd(dir) : -1;
  std::vector<int> fds;
  // readdir() is only unsafe for a directory stream shared between threads (glibc: "MT-Unsafe
  // race:dirstream"; POSIX.1-2024 asks thread safety of it for distinct streams); `dir` is this call's.
  while (const dirent* entry = readdir(dir)) {  // NOLINT(concurrency-mt-unsafe): stream is local
    const int fd = parse_fd_name(entry->d_name);
    if (fd >= 0 && fd != own) fds.push_back(fd);
  }
  closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

}  // namespace skillbox::isolation
