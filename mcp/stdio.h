// mcp/stdio.h — the MCP stdio transport: newline-delimited JSON-RPC messages on two file descriptors.
//
// MCP "Transports" (stdio): each message is one line of UTF-8 JSON with no newline inside it; the server
// writes nothing to stdout that is not a message (its own notes go to stderr). The session's messages
// leave from a writer thread, so a skill's log line never waits for the client to read.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "mcp/session.h"
#include "skillbox/skillbox.h"

namespace skillbox::mcp {

/// Longest message line read, in bytes (without its newline). A longer line is refused with one
/// Invalid Request error (id null) and skipped up to its newline; the session goes on.
inline constexpr size_t kMaxLineBytes = 4u << 20;

/// Writes lines to a file descriptor, in the order pushed. A line goes out at once from the pushing
/// thread when nothing is queued or being written and the descriptor has room for it (a pipe that is
/// not full takes up to PIPE_BUF bytes without blocking; poll says so); else it is queued for the
/// writer thread. Handing every response to another thread cost a wake-up per call (docs/benchmarks.md
/// "MCP").
class LineWriter {
 public:
  explicit LineWriter(int fd);
  /// finish().
  ~LineWriter();
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;

  /// Writes or queues `text` and a newline. Never blocks on the descriptor. Any thread.
  void push(std::string text);
  /// Writes everything queued, then stops the thread. Idempotent. A descriptor that fails (the reader
  /// went away) drops what is left.
  void finish();

 private:
  void run();

  const int fd_;
  base::Mutex mu_;
  std::condition_variable wake_;
  std::deque<std::string> lines_ SKILLBOX_GUARDED_BY(mu_);
  bool writing_ SKILLBOX_GUARDED_BY(mu_) = false;  // the thread is writing a line it took
  bool broken_ SKILLBOX_GUARDED_BY(mu_) = false;   // a write failed: the reader is gone
  bool finishing_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

/// How read_messages() ended.
enum class InputEnd : uint8_t { eof, stopped, error };

/// Reads message lines from `fd` and hands each to `session.receive` until end of file, a read error or
/// `stop` being cancelled. A "\r" before the newline is dropped; blank lines are skipped; the last line
/// needs no newline.
[[nodiscard]] InputEnd read_messages(int fd, Session& session, const CancelToken& stop,
                                     size_t max_line_bytes = kMaxLineBytes);

}  // namespace skillbox::mcp
