// base/errno_text.h — the text of an errno value, safe to call from any thread.
//
// std::strerror() may return a buffer shared by every thread (concurrency-mt-unsafe), and skills run
// on their own JS threads while the host reports errors on others.
#pragma once

#include <string>

namespace skillbox::base {

/// What std::strerror(err) says ("No such file or directory", "Unknown error 4242"), without its
/// shared buffer.
[[nodiscard]] std::string errno_text(int err);

}  // namespace skillbox::base
