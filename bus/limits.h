// bus/limits.h — limits that are part of the wire: both sides of the bus hold a request to them.
//
// A binding refuses to build a request beyond these limits (so a hostile argument is never copied
// into host memory or into a frame), and the capability behind the Endpoint refuses it again with the
// same message (a worker's frames are untrusted). Keeping the numbers here, below both bindings/ and
// capabilities/, is what lets the two agree without either including the other.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "bus/messages.h"

namespace skillbox::bus {

/// Longest path an fs request may carry, in bytes (Linux PATH_MAX, including room for the
/// terminator). docs/fs.md "Paths".
inline constexpr size_t kMaxPathBytes = 4096;

/// Longest log message, in bytes after escaping, suffix included. 8 KiB keeps one entry readable and
/// lets 32 maximal messages fit the log capability's run budget. Bindings format at most this much.
inline constexpr size_t kMaxLogMessageBytes = size_t{8} * 1024;

/// The refusal of a path longer than kMaxPathBytes, from `op` ("readFile"): InvalidArgument with
/// `op "<first 200 bytes>...": path is N bytes long; the limit is 4096`. Reads only the first bytes
/// of `given` that it quotes. The same text whether the binding or the workspace refuses.
[[nodiscard]] ErrorReply path_too_long(std::string_view op, std::string_view given);

}  // namespace skillbox::bus
