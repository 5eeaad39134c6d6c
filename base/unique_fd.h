// base/unique_fd.h — sole ownership of one file descriptor.
#pragma once

#include <unistd.h>

#include <utility>

namespace skillbox::base {

/// Owns a file descriptor and closes it exactly once. -1 means empty. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  /// Takes ownership of `fd` (any negative value means empty).
  explicit UniqueFd(int fd) : fd_(fd < 0 ? -1 : fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  /// The descriptor, -1 when empty. Ownership stays here.
  [[nodiscard]] int get() const { return fd_; }
  /// True when a descriptor is held.
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }

  /// Gives up ownership without closing; returns the descriptor (-1 when empty) and leaves this empty.
  int release() { return std::exchange(fd_, -1); }

  /// Closes the current descriptor (if any) and takes `fd`. close() is not retried on EINTR: on
  /// Linux the descriptor is released either way, and a retry could close someone else's.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd < 0 ? -1 : fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace skillbox::base
