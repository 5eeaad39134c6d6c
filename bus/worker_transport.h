// bus/worker_transport.h — bytes on the sockets between supervisor, zygote and worker.
//
// Here, below both sides, because the supervisor (runner/) and the zygote and worker (worker/) must agree
// on it and neither may link the other.
//
// Two sockets, two framings:
//   - the worker socket (AF_UNIX SOCK_STREAM, one per worker): each frame of bus/worker_frames.h as a
//     4-byte little-endian length followed by that many bytes. A stream, because a frame may be far
//     larger than a datagram (http bodies, file contents);
//   - the control socket (AF_UNIX SOCK_SEQPACKET, supervisor <-> zygote): one fixed-size
//     ControlMessage per datagram, with descriptors attached by SCM_RIGHTS.
//
// A worker is hostile, so the supervisor's FrameReader refuses a length above its limit before it
// allocates anything, and grows its buffer only as bytes actually arrive. The zygote is our own
// unsandboxed code, but its messages are still checked for size and type.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "bus/messages.h"
#include "skillbox/result.h"

namespace skillbox::bus {

/// The descriptor a worker's socket has in the worker (0–2 are closed): RLIMIT_NOFILE is sized from it.
inline constexpr int kWorkerSocketFd = 3;

/// Bytes of the length prefix before each worker frame.
inline constexpr size_t kFrameHeaderBytes = 4;

/// Exit status of a worker whose native allocation failed outside the engine's accounting (it
/// caught std::bad_alloc): the supervisor reports `memory_limit`.
inline constexpr int kWorkerExitOutOfMemory = 75;
/// Exit status of a worker that got a frame it cannot accept from its supervisor.
inline constexpr int kWorkerExitBadFrame = 76;

/// Collects length-prefixed frames from a non-blocking stream.
class FrameReader {
 public:
  /// Frames longer than `max_frame_bytes` are refused.
  explicit FrameReader(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  enum class Status : uint8_t { progress, eof, error };
  /// Reads what `fd` has now (until EAGAIN) into the buffer. `eof` once the peer closed (bytes read
  /// before it are kept); `error` with error() set on a failed read or a length above the limit.
  Status fill(int fd);
  /// Moves the next complete frame into `out`; false when none is complete yet.
  bool next(Bytes& out);
  /// Bytes of an incomplete frame (or header) still buffered.
  [[nodiscard]] size_t pending_bytes() const { return buf_.size() - pos_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  size_t max_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0;
  std::string error_;
};

/// Writes each frame with its length prefix, all of them, to the non-blocking `fd`, waiting with
/// poll until `deadline`. Error when the deadline passes, the peer is gone or a write fails.
Result<void, Error> write_frames(int fd, std::span<const Bytes* const> frames,
                                 std::chrono::steady_clock::time_point deadline);

/// Worker side, blocking descriptor: reads one whole frame. Error on EOF, a failed read or a length
/// above `max_frame_bytes`.
Result<Bytes, Error> read_frame_blocking(int fd, size_t max_frame_bytes);

// ---- the control socket ---------------------------------------------------------------------------

enum class ControlType : uint32_t {
  hello = 1,         // zygote -> supervisor, first: status 0 ready (value = Landlock ABI), else text
  spawn = 2,         // supervisor -> zygote: fork a sandboxed worker with rlimits for these limits
  spawned = 3,       // zygote -> supervisor: pid; descriptors [worker socket, pidfd]
  spawn_failed = 4,  // zygote -> supervisor: status = errno, text says which call
  exited = 5,        // zygote -> supervisor: pid was reaped; status = wait status
};

/// One datagram of the control socket. Fixed size: a datagram of any other size is refused.
struct ControlMessage {
  uint32_t type = 0;  // ControlType
  uint32_t reserved = 0;
  uint64_t token = 0;         // spawn: chosen by the supervisor, echoed in spawned/spawn_failed
  int64_t pid = 0;            // spawned, exited
  int64_t status = 0;         // see ControlType
  uint64_t value = 0;         // hello: Landlock ABI
  uint64_t memory_bytes = 0;  // spawn: heap limit its rlimits derive from (the ceiling: it lowers them)
  uint64_t timeout_ms = 0;    // spawn: deadline RLIMIT_CPU derives from (the ceiling, likewise)
  char text[512] = {};        // NUL-terminated message (hello failure, spawn_failed)
};

/// Sends `message` with `fds` attached (at most 2). Blocking. False on failure (errno set).
bool send_control(int fd, const ControlMessage& message, std::span<const int> fds = {});

/// Receives one message and up to 2 descriptors (close-on-exec; any more are closed). 1 on a
/// message, 0 at EOF, -1 on an error or a datagram of the wrong size (its descriptors are closed).
int recv_control(int fd, ControlMessage& message, std::vector<base::UniqueFd>& fds);

}  // namespace skillbox::bus
