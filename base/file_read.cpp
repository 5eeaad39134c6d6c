// base/file_read.cpp — capped, non-blocking-open, regular-file-only whole-file reads.
#include "base/file_read.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "base/unique_fd.h"

namespace skillbox::base {
namespace {

// Bytes asked of one read(2): large enough that a 16 MiB input takes 256 calls.
constexpr size_t kChunkBytes = size_t{64} * 1024;

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

ReadError sys_error(ReadErrc code, const char* what, int error) {
  ReadError e;
  e.code = code;
  e.sys_errno = error;
  e.message = std::string(what) + errno_text(error);
  return e;
}

ReadError too_large(uint64_t max_bytes) {
  ReadError e;
  e.code = ReadErrc::too_large;
  e.max_bytes = max_bytes;
  e.message = "larger than " + std::to_string(max_bytes) + " bytes";
  return e;
}

// Anonymous pipes live on pipefs; named FIFOs on the filesystem that holds their name.
bool is_anonymous_pipe(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == PIPEFS_MAGIC;
}

// Waits up to `wait_ms` for a named FIFO's writer: data (POLLIN) or a writer that came and went
// (POLLHUP). Linux reports neither while no writer has opened the FIFO since we did.
bool writer_appeared(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, std::max(wait_ms, 0));
    if (n < 0 && errno == EINTR) continue;  // the wait restarts: bounded by the number of signals
    return n > 0;
  }
}

}  // namespace

Result<std::string, ReadError> read_fd(int fd, uint64_t max_bytes) {
  // One byte past the cap tells "exactly max_bytes" from "more"; clamp so that +1 cannot wrap.
  const uint64_t limit = max_bytes == UINT64_MAX ? max_bytes : max_bytes + 1;
  std::string out;
  std::string chunk(kChunkBytes, '\0');
  for (;;) {
    const uint64_t left = limit - out.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    const ssize_t n = ::read(fd, chunk.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLIN, 0};
      (void)::poll(&p, 1, -1);  // a non-blocking descriptor: block here as the contract says
      continue;
    }
    if (n < 0) return sys_error(ReadErrc::read_failed, "cannot read: ", errno);
    if (n == 0) return out;
    out.append(chunk.data(), static_cast<size_t>(n));
    if (out.size() > max_bytes) return too_large(max_bytes);
  }
}

Result<std::string, ReadError> read_file(const char* path, const ReadOptions& options) {
  // O_NONBLOCK: open() of a FIFO returns at once instead of waiting for a writer.
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return sys_error(ReadErrc::open_failed, "cannot open: ", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return sys_error(ReadErrc::read_failed, "cannot read: ", errno);
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !(pipe && options.allow_pipe)) {
    ReadError e;
    e.code = ReadErrc::not_regular;
    e.file_type = st.st_mode & S_IFMT;
    e.message = "not a regular file";
    return e;
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    return too_large(options.max_bytes);  // no need to read what is already known to be too much
  }
  if (pipe) {
    if (!is_anonymous_pipe(fd.get()) && !writer_appeared(fd.get(), options.fifo_wait_ms)) {
      ReadError e;
      e.code = ReadErrc::no_writer;
      e.message = "a FIFO that no process writes to (nothing arrived within " +
                  std::to_string(options.fifo_wait_ms) + " ms)";
      return e;
    }
    // A writer is known: from here on, reading blocks as the writer produces, like `cat` would.
    const int flags = ::fcntl(fd.get(), F_GETFL);
    if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
      return sys_error(ReadErrc::read_failed, "cannot read: ", errno);
    }
  }
  return read_fd(fd.get(), options.max_bytes);
}

}  // namespace skillbox::base
