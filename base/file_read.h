// base/file_read.h — the one way skillbox reads a whole file: capped, never blocking on open, and
// regular files only unless the caller opts in to pipes.
//
// Attacks and mistakes this answers: a FIFO planted where a file is expected would block open() or
// read() forever (O_NONBLOCK, then fstat on the opened descriptor: no check-then-open race); a device
// such as /dev/zero or a huge log file would exhaust host memory (the cap stops reading at
// max_bytes + 1 and never allocates more than that).
#pragma once

#include <cstdint>
#include <string>

#include "skillbox/result.h"

namespace skillbox::base {

/// Why a whole-file read failed.
enum class ReadErrc : uint8_t {
  open_failed,  // open(2) failed; `sys_errno` says why (ENOENT, EACCES, ...)
  not_regular,  // not a regular file (nor an allowed pipe); `file_type` holds st_mode & S_IFMT
  too_large,    // more than `max_bytes` bytes
  read_failed,  // fstat(2) or read(2) failed; `sys_errno` says why
  no_writer,    // a named FIFO with no writer (nothing arrived within `fifo_wait_ms`)
};

/// A failed read. `message` is a short lower-case description without the path, such as
/// "not a regular file" or "larger than 1048576 bytes"; callers prefix the path or flag.
struct ReadError {
  ReadErrc code = ReadErrc::read_failed;
  int sys_errno = 0;       // for open_failed and read_failed
  uint32_t file_type = 0;  // for not_regular: st_mode & S_IFMT (S_IFDIR, S_IFCHR, ...)
  uint64_t max_bytes = 0;  // for too_large: the cap that was passed
  std::string message;
};

/// Named FIFOs: how long read_file waits for a writer to open its end and write (or close) before it
/// gives up with ReadErrc::no_writer. Two seconds covers a writer started just before skillbox
/// (`mkfifo f; producer > f & skillbox ... f`) while a FIFO nobody writes fails promptly.
inline constexpr int kDefaultFifoWaitMs = 2000;

/// How read_file treats what it opens.
struct ReadOptions {
  /// Cap in bytes: a longer file fails with too_large. Reading stops after max_bytes + 1 bytes.
  uint64_t max_bytes = 0;
  /// Opt-in: also accept pipes (S_IFIFO). An anonymous pipe (`<(cmd)`, `/dev/stdin` fed by `|`) has
  /// a writer from its creation and is read to its end, blocking as the writer produces. A named FIFO
  /// is read only once a writer shows up within fifo_wait_ms; otherwise no_writer.
  bool allow_pipe = false;
  /// Milliseconds to wait for a named FIFO's writer (allow_pipe only). At least 0.
  int fifo_wait_ms = kDefaultFifoWaitMs;
};

/// Reads all of the file at `path` (followed through symbolic links, as open(2) does). Opens with
/// O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, so open() never waits for a FIFO's writer; fstat on
/// the open descriptor then refuses anything but a regular file (or a pipe, when allowed). EINTR is
/// retried. Returns the bytes, at most options.max_bytes of them.
[[nodiscard]] Result<std::string, ReadError> read_file(const char* path, const ReadOptions& options);

/// Reads the already open `fd` to its end (blocking as it blocks), at most `max_bytes` bytes, else
/// too_large without reading the rest. Does not close `fd`. For stdin and descriptors the caller owns.
[[nodiscard]] Result<std::string, ReadError> read_fd(int fd, uint64_t max_bytes);

}  // namespace skillbox::base
