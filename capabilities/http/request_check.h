// capabilities/http/request_check.h — checks on a request's method and headers.
//
// The request line and header block are built by libcurl from the method and the header list checked
// here. The rules keep a skill from splitting requests (CR/LF in a value), from speaking for the host
// about framing and routing (Host, Content-Length, Transfer-Encoding, hop-by-hop headers, RFC 9110 §7.6.1)
// and from switching protocols (Upgrade, CONNECT).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bus/messages.h"
#include "skillbox/result.h"

namespace skillbox::capabilities::http {

/// Longest method name, in bytes. Registered methods are at most 17 bytes (VERSION-CONTROL).
inline constexpr size_t kMaxMethodBytes = 32;
/// Most request headers a skill may set.
inline constexpr size_t kMaxRequestHeaders = 100;
/// Largest total of header names + values a skill may set, in bytes. Common servers refuse header
/// blocks above 8-64 KiB anyway; this keeps a request inside that.
inline constexpr size_t kMaxRequestHeaderBytes = size_t{32} * 1024;

using Header = std::pair<std::string, std::string>;

/// Returns the method as it will be sent. As in the Fetch standard, DELETE, GET, HEAD, OPTIONS, PATCH,
/// POST and PUT are matched case-insensitively and upper-cased; any other method must be an RFC 9110
/// token and is kept as given. CONNECT, TRACE and TRACK are always refused (tunnels and cross-site
/// tracing). Errors are InvalidArgument, messages without the "http: " prefix.
[[nodiscard]] Result<std::string, bus::ErrorReply> normalize_method(std::string_view method);

/// Checks request headers and returns them with leading/trailing blanks of each value removed.
/// Names must be RFC 9110 tokens. Values may not hold NUL, CR, LF or other control characters (HTAB
/// is allowed). Refused names (any case): Host, Content-Length, Transfer-Encoding, Connection,
/// Keep-Alive, Proxy-*, TE, Trailer, Upgrade, HTTP2-Settings, Expect, Accept-Encoding (skillbox
/// negotiates encodings itself so that the response cap counts decoded bytes). Errors are
/// InvalidArgument, or PayloadTooLarge for the count/size caps above.
[[nodiscard]] Result<std::vector<Header>, bus::ErrorReply> check_request_headers(
    const std::vector<Header>& headers);

/// True for RFC 9110 `token` (method and header-name syntax).
[[nodiscard]] bool is_token(std::string_view s);

/// ASCII lower-case copy.
[[nodiscard]] std::string ascii_lower(std::string_view s);

}  // namespace skillbox::capabilities::http
