// mcp/stdio.cpp — the MCP stdio transport (see stdio.h).
#include "mcp/stdio.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <climits>  // PIPE_BUF
#include <string_view>

#include "base/unique_fd.h"

namespace skillbox::mcp {

LineWriter::LineWriter(int fd) : fd_(fd), thread_([this] { run(); }) {}

LineWriter::~LineWriter() {
  finish();
}

namespace {

/// Writes all of `line` to `fd`; false when the descriptor fails (the reader closed its end).
bool write_line(int fd, const std::string& line) {
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// True when a write of `bytes` to `fd` cannot block: at most PIPE_BUF bytes, and poll finds room.
bool room_for(int fd, size_t bytes) {
  if (bytes > PIPE_BUF) return false;
  pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT) != 0;
}

}  // namespace

void LineWriter::push(std::string text) {
  text += '\n';
  {
    base::MutexLock lock(mu_);
    if (broken_) return;
    if (lines_.empty() && !writing_ && room_for(fd_, text.size())) {
      // In order: nothing is ahead of it, and the thread cannot take a line while mu_ is held.
      if (!write_line(fd_, text)) broken_ = true;
      return;
    }
    lines_.push_back(std::move(text));
  }
  wake_.notify_one();
}

void LineWriter::finish() {
  {
    base::MutexLock lock(mu_);
    finishing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void LineWriter::run() {
  bool broken = false;
  for (;;) {
    std::string line;
    {
      base::MutexLock lock(mu_);
      writing_ = false;
      if (broken) broken_ = true;  // the client closed its end: nobody reads what follows
      lock.wait(wake_, [this] {
        mu_.assert_held();
        return finishing_ || !lines_.empty();
      });
      if (lines_.empty()) return;
      line = std::move(lines_.front());
      lines_.pop_front();
      writing_ = true;
      broken = broken_;
    }
    if (!broken && !write_line(fd_, line)) broken = true;
  }
}

InputEnd read_messages(int fd, Session& session, const CancelToken& stop, size_t max_line_bytes) {
  base::UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) return InputEnd::error;
  // Cancelling only signals: the callback runs under the token's lock (CancelToken::subscribe).
  const int wake_fd = wake.get();
  CancelToken::Subscription subscription = stop.subscribe([wake_fd] {
    const uint64_t one = 1;
    (void)!::write(wake_fd, &one, sizeof one);
  });

  std::string line;
  bool oversized = false;  // skipping the rest of a line that passed the limit
  const auto deliver = [&] {
    if (oversized) {
      session.refuse(ErrorCode::invalid_request, "invalid request: the message is longer than " +
                                                     std::to_string(max_line_bytes) +
                                                     " bytes (the limit of one line); it was skipped");
      oversized = false;
    } else {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t\r") != std::string::npos) session.receive(line);
    }
    line.clear();
  };
  char buffer[65536];
  for (;;) {
    pollfd fds[2] = {{.fd = fd, .events = POLLIN, .revents = 0},
                     {.fd = wake_fd, .events = POLLIN, .revents = 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return InputEnd::error;
    }
    if (fds[1].revents != 0 || stop.cancelled()) return InputEnd::stopped;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return InputEnd::error;
    }
    if (n == 0) {
      if (!line.empty() || oversized) deliver();
      return InputEnd::eof;
    }
    std::string_view chunk(buffer, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t newline = chunk.find('\n');
      const std::string_view part = chunk.substr(0, newline);
      if (!oversized) {
        if (line.size() + part.size() > max_line_bytes) {
          oversized = true;
          line.clear();
          line.shrink_to_fit();
        } else {
          line.append(part);
        }
      }
      if (newline == std::string_view::npos) break;
      deliver();
      chunk.remove_prefix(newline + 1);
    }
  }
}

}  // namespace skillbox::mcp
