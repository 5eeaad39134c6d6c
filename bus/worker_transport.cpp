#include "bus/worker_transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "base/errno_text.h"

namespace skillbox::bus {
namespace {

using Clock = std::chrono::steady_clock;

uint32_t read_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

std::array<uint8_t, kFrameHeaderBytes> le32(size_t n) {
  const auto v = static_cast<uint32_t>(n);
  return {static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 24)};
}

int poll_timeout_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(left + 1, 60'000));
}

}  // namespace

FrameReader::Status FrameReader::fill(int fd) {
  // Keep the buffer from growing without bound across many small frames.
  if (pos_ > 0 && pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  }
  for (;;) {
    // Read no more than the current frame still needs (or a modest chunk when the header is not
    // complete yet): the buffer grows with bytes that arrived, never with a length a worker claims.
    size_t want = 64 * 1024;
    const size_t have = buf_.size() - pos_;
    if (have >= kFrameHeaderBytes) {
      const uint32_t len = read_le32(buf_.data() + pos_);
      if (len > max_) {
        error_ = "a frame of " + std::to_string(len) + " bytes is larger than the limit of " +
                 std::to_string(max_) + " bytes";
        return Status::error;
      }
      const size_t need = kFrameHeaderBytes + len - std::min<size_t>(have, kFrameHeaderBytes + len);
      want = std::max<size_t>(need, 4096);
      want = std::min<size_t>(want, 1024 * 1024);
    }
    const size_t old = buf_.size();
    buf_.resize(old + want);
    const ssize_t n = ::read(fd, buf_.data() + old, want);
    if (n < 0) {
      buf_.resize(old);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::progress;
      error_ = "reading the worker socket failed: " + base::errno_text(errno);
      return Status::error;
    }
    buf_.resize(old + static_cast<size_t>(n));
    if (n == 0) return Status::eof;
    // Check a freshly completed header at once, so an oversized length is refused before the body.
    if (buf_.size() - pos_ >= kFrameHeaderBytes && read_le32(buf_.data() + pos_) > max_) {
      error_ = "a frame of " + std::to_string(read_le32(buf_.data() + pos_)) +
               " bytes is larger than the limit of " + std::to_string(max_) + " bytes";
      return Status::error;
    }
    if (static_cast<size_t>(n) < want) return Status::progress;
  }
}

bool FrameReader::next(Bytes& out) {
  const size_t have = buf_.size() - pos_;
  if (have < kFrameHeaderBytes) return false;
  const uint32_t len = read_le32(buf_.data() + pos_);
  if (len > max_ || have < kFrameHeaderBytes + len) return false;
  const auto* begin = buf_.data() + pos_ + kFrameHeaderBytes;
  out.assign(begin, begin + len);
  pos_ += kFrameHeaderBytes + len;
  return true;
}

Result<void, Error> write_frames(int fd, std::span<const Bytes* const> frames, Clock::time_point deadline) {
  constexpr size_t kMaxFrames = 4;
  if (frames.size() > kMaxFrames) return Error{"internal error: too many frames in one write"};
  std::array<std::array<uint8_t, kFrameHeaderBytes>, kMaxFrames> headers{};
  std::array<iovec, 2 * kMaxFrames> iov{};
  size_t count = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    headers[i] = le32(frames[i]->size());
    iov[count++] = iovec{headers[i].data(), kFrameHeaderBytes};
    if (!frames[i]->empty()) iov[count++] = iovec{const_cast<uint8_t*>(frames[i]->data()), frames[i]->size()};
  }
  size_t first = 0;
  while (first < count) {
    msghdr msg{};
    msg.msg_iov = &iov[first];
    msg.msg_iovlen = count - first;
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        return Error{"writing the worker socket failed: " + base::errno_text(errno)};
      if (Clock::now() >= deadline) return Error{"the deadline passed while writing to the worker"};
      pollfd p{fd, POLLOUT, 0};
      if (::poll(&p, 1, poll_timeout_ms(deadline)) < 0 && errno != EINTR)
        return Error{"poll on the worker socket failed: " + base::errno_text(errno)};
      continue;
    }
    auto left = static_cast<size_t>(n);
    while (first < count && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < count && left > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return {};
}

Result<Bytes, Error> read_frame_blocking(int fd, size_t max_frame_bytes) {
  auto read_exact = [fd](uint8_t* p, size_t n) -> bool {
    while (n > 0) {
      const ssize_t r = ::read(fd, p, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  std::array<uint8_t, kFrameHeaderBytes> header{};
  if (!read_exact(header.data(), header.size())) return Error{"the supervisor closed the socket"};
  const uint32_t len = read_le32(header.data());
  if (len > max_frame_bytes) return Error{"a frame larger than the limit"};
  Bytes out(len);
  if (!read_exact(out.data(), out.size())) return Error{"the supervisor closed the socket mid-frame"};
  return out;
}

bool send_control(int fd, const ControlMessage& message, std::span<const int> fds) {
  if (fds.size() > 2) {
    errno = EINVAL;
    return false;
  }
  iovec iov{const_cast<ControlMessage*>(&message), sizeof(message)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(2 * sizeof(int))> control{};
  if (!fds.empty()) {
    msg.msg_control = control.data();
    msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  for (;;) {
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    return n == static_cast<ssize_t>(sizeof(message));
  }
}

int recv_control(int fd, ControlMessage& message, std::vector<base::UniqueFd>& fds) {
  fds.clear();
  iovec iov{&message, sizeof(message)};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) std::array<char, CMSG_SPACE(4 * sizeof(int))> control{};
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  ssize_t n = 0;
  for (;;) {
    n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  if (n < 0) return -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received = -1;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      fds.emplace_back(received);  // owned at once, so every one is closed if refused below
    }
  }
  if (n == 0 && fds.empty()) return 0;
  if (n != static_cast<ssize_t>(sizeof(message)) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
      fds.size() > 2) {
    fds.clear();
    return -1;
  }
  message.text[sizeof(message.text) - 1] = '\0';
  return 1;
}

}  // namespace skillbox::bus
