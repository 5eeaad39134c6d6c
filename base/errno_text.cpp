// base/errno_text.cpp — errno text through the GNU strerror_r (the build is Linux/glibc only).
#include "base/errno_text.h"

#include <array>
#include <cstring>

namespace skillbox::base {

std::string errno_text(int err) {
  // Longer than any glibc message; the GNU strerror_r truncates to the buffer rather than fail.
  std::array<char, 256> buffer{};
  // The GNU variant returns the text: a static string or `buffer`, never null.
  return ::strerror_r(err, buffer.data(), buffer.size());
}

}  // namespace skillbox::base
