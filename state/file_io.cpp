// state/file_io.cpp — the local backends' file helpers (file_io.h).
#include "state/file_io.h"

#include <fcntl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "state/workspace_backend.h"

namespace skillbox::state::file_io {

double mtime_ms(const struct stat& st) {
  return static_cast<double>(st.st_mtim.tv_sec) * 1000.0 + static_cast<double>(st.st_mtim.tv_nsec) / 1e6;
}

uint64_t random_u64() {
  uint64_t value = 0;
  if (getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    // getrandom cannot fail for 8 bytes once the pool is initialised; keep going regardless.
    const auto now = static_cast<uint64_t>(time(nullptr));
    value = (now * uint64_t{0x9E3779B97F4A7C15}) ^ static_cast<uint64_t>(getpid());
  }
  return value;
}

std::string temporary_name() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(kWorkspaceReservedPrefix);
  name += "tmp-";
  const uint64_t bits = random_u64();
  for (int shift = 60; shift >= 0; shift -= 4) name += kHex[(bits >> shift) & 0xF];
  return name;
}

int write_all(int fd, const uint8_t* data, size_t size, const bus::StopToken* stop) {
  while (size > 0) {
    if (stop != nullptr && stop->stop_requested()) return ECANCELED;
    const ssize_t n = write(fd, data, std::min(size, kIoChunkBytes));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

int copy_bytes(int from, int to, uint64_t size, const bus::StopToken* stop) {
  std::vector<uint8_t> buffer(size_t{64} * 1024);
  while (size > 0) {
    if (stop != nullptr && stop->stop_requested()) return ECANCELED;
    const size_t want = static_cast<size_t>(std::min<uint64_t>(size, buffer.size()));
    const ssize_t n = read(from, buffer.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;  // shrank while we held the lock: only the host can do that
    if (int err = write_all(to, buffer.data(), static_cast<size_t>(n))) return err;
    size -= static_cast<uint64_t>(n);
  }
  return 0;
}

int sync_directory(int fd) {
  if (fsync(fd) == 0 || errno == EINVAL || errno == EROFS) return 0;
  return errno;
}

int ensure_directory(int parent, const char* name, base::UniqueFd& out) {
  constexpr int kFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  out.reset(openat(parent, name, kFlags));  // the common case: it exists
  if (out) return 0;
  if (errno != ENOENT) return errno;
  if (mkdirat(parent, name, kDirMode) != 0 && errno != EEXIST) return errno;
  out.reset(openat(parent, name, kFlags));
  return out ? 0 : errno;
}

int open_data_directory(const std::filesystem::path& dir, base::UniqueFd& out) {
  out.reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (out) return 0;
  if (errno != ENOENT) return errno;
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (mkdir(partial.c_str(), kDirMode) != 0 && errno != EEXIST) return errno;
  }
  out.reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return out ? 0 : errno;
}

}  // namespace skillbox::state::file_io
