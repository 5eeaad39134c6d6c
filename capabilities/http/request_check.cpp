// capabilities/http/request_check.cpp — method and request-header rules.
#include "capabilities/http/request_check.h"

#include <algorithm>
#include <array>

#include "base/utf8.h"

namespace skillbox::capabilities::http {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

ErrorReply invalid(std::string message) {
  return ErrorReply{ErrorCode::InvalidArgument, std::move(message)};
}

bool tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Shown in messages: printable ASCII as is, everything else escaped, bounded.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  if (s.size() > 64) out += "...";
  return out;
}

constexpr std::array<std::string_view, 11> kRefusedHeaders = {
    "host",    "content-length", "transfer-encoding", "connection", "keep-alive",      "te",
    "trailer", "upgrade",        "http2-settings",    "expect",     "accept-encoding",
};

}  // namespace

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), tchar);
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

Result<std::string, ErrorReply> normalize_method(std::string_view method) {
  if (method.empty()) return invalid("method is empty");
  if (method.size() > kMaxMethodBytes)
    return invalid("method is longer than " + std::to_string(kMaxMethodBytes) + " bytes");
  if (!is_token(method)) return invalid("method \"" + printable(method) + "\" is not a valid HTTP token");
  std::string upper(method);
  for (char& c : upper)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  // Tunnels and cross-site tracing are never a skill's business, whatever the manifest lists.
  if (upper == "CONNECT" || upper == "TRACE" || upper == "TRACK")
    return invalid("method " + upper + " is never allowed");
  for (std::string_view known : {"DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"})
    if (upper == known) return upper;
  return std::string(method);
}

Result<std::vector<Header>, ErrorReply> check_request_headers(const std::vector<Header>& headers) {
  if (headers.size() > kMaxRequestHeaders)
    return ErrorReply{ErrorCode::PayloadTooLarge, std::to_string(headers.size()) +
                                                      " request headers; the limit is " +
                                                      std::to_string(kMaxRequestHeaders)};
  std::vector<Header> out;
  out.reserve(headers.size());
  size_t total = 0;
  for (const auto& [name, raw_value] : headers) {
    if (!is_token(name))
      return invalid("request header name \"" + printable(name) + "\" is not a valid HTTP token");
    const std::string lname = ascii_lower(name);
    if (std::find(kRefusedHeaders.begin(), kRefusedHeaders.end(), lname) != kRefusedHeaders.end() ||
        lname.rfind("proxy-", 0) == 0)
      return invalid(
          "request header \"" + name +
          "\" is set by skillbox and may not be given (Host, framing, hop-by-hop and proxy headers are "
          "refused)");
    for (size_t i = 0; i < raw_value.size(); ++i) {
      const auto c = static_cast<unsigned char>(raw_value[i]);
      // Header injection / request splitting: a CR or LF would start a new header or request.
      if ((c < 0x20 && c != '\t') || c == 0x7f)
        return invalid("request header \"" + name +
                       "\" contains a control character (CR, LF, NUL, ...) at offset " + std::to_string(i));
    }
    // Text that leaves the sandbox is well-formed UTF-8: a lone surrogate of a JS string arrives as
    // its 3-byte WTF-8 form, which no server should be sent as a header byte sequence.
    if (!base::utf8::is_valid(raw_value))
      return invalid("request header \"" + name +
                     "\" is not valid UTF-8 (an unpaired surrogate?); send well-formed text");
    const size_t first = raw_value.find_first_not_of(" \t");
    const size_t last = raw_value.find_last_not_of(" \t");
    std::string value =
        first == std::string::npos ? std::string() : raw_value.substr(first, last - first + 1);
    total += name.size() + value.size();
    if (total > kMaxRequestHeaderBytes)
      return ErrorReply{
          ErrorCode::PayloadTooLarge,
          "request headers exceed " + std::to_string(kMaxRequestHeaderBytes) + " bytes in total"};
    out.emplace_back(name, std::move(value));
  }
  return out;
}

}  // namespace skillbox::capabilities::http
