// capabilities/http/url_check.cpp — URL checks around libcurl's URL parser, and allowlist matching.
#include "capabilities/http/url_check.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>
#include <optional>

#include "policy/http_allow.h"

namespace skillbox::capabilities::http {
namespace {

using bus::ErrorCode;
using bus::ErrorReply;

ErrorReply invalid(std::string message) {
  return ErrorReply{ErrorCode::InvalidArgument, std::move(message)};
}
ErrorReply denied(std::string message) {
  return ErrorReply{ErrorCode::PermissionDenied, std::move(message)};
}

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string to_lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), lower);
  return s;
}

bool starts_with_icase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (lower(s[i]) != prefix[i]) return false;
  return true;
}

// Reads one part of a parsed handle. Missing parts (no query, no user) come back as nullopt.
std::optional<std::string> get_part(CURLU* h, CURLUPart part, unsigned flags = 0) {
  char* out = nullptr;
  if (curl_url_get(h, part, &out, flags) != CURLUE_OK || out == nullptr) return std::nullopt;
  std::string s(out);
  curl_free(out);
  return s;
}

// Checks done on the raw text, before libcurl sees it. Every byte is looked at once.
Result<void, ErrorReply> check_raw(std::string_view text, std::string_view what) {
  if (text.empty()) return invalid(std::string(what) + " is empty");
  if (text.size() > kMaxUrlBytes)
    return invalid(std::string(what) + " is " + std::to_string(text.size()) + " bytes long; the limit is " +
                   std::to_string(kMaxUrlBytes) + " bytes");
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    // Leading/trailing blanks and embedded CR/LF/NUL are how request splitting and "trimmed by one
    // parser, not the other" confusions start; refuse them instead of trimming.
    if (c <= 0x20 || c == 0x7f)
      return invalid(std::string(what) + " contains a space or control character at offset " +
                     std::to_string(i) + "; percent-encode it");
    if (c >= 0x80)
      return invalid(std::string(what) + " contains a non-ASCII byte at offset " + std::to_string(i) +
                     "; percent-encode it (encodeURI) and write host names in punycode (xn--)");
    // WHATWG URL treats '\' as '/', RFC 3986 parsers do not: a classic allowlist bypass.
    if (c == '\\') return invalid(std::string(what) + " contains a backslash; use '/' or percent-encode it");
  }
  return {};
}

bool host_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

bool ipv6_literal_ok(std::string_view host) {
  if (host.size() < 4 || host.front() != '[' || host.back() != ']') return false;
  for (char c : host.substr(1, host.size() - 2))
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.')) return false;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Percent-decodes one path segment (invalid escapes are kept as they are).
std::string decode_segment(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_value(s[i + 1]) >= 0 && hex_value(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(s[i + 1]) * 16 + hex_value(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool has_encoded_dot_segment(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view seg = path.substr(start, end - start);
    if (seg.find('%') != std::string_view::npos) {
      const std::string d = decode_segment(seg);
      if (d == "." || d == "..") return true;
    }
    start = end + 1;
  }
  return false;
}

bool has_encoded_separator(std::string_view path) {
  for (size_t i = 0; i + 2 < path.size(); ++i) {
    if (path[i] != '%') continue;
    const char a = path[i + 1];
    const char b = lower(path[i + 2]);
    if ((a == '2' && b == 'f') || (a == '5' && b == 'c')) return true;
  }
  return false;
}

std::string_view default_port_text(std::string_view scheme) {
  return scheme == "https" ? "443" : "80";
}

}  // namespace

std::string ParsedUrl::text() const {
  return get_part(handle_.get(), CURLUPART_URL).value_or(std::string());
}

std::string ParsedUrl::display() const {
  std::string s = scheme_ + "://" + host_;
  if (std::to_string(port_) != default_port_text(scheme_)) s += ":" + std::to_string(port_);
  constexpr size_t kMaxDisplayPath = 160;
  s += path_.size() > kMaxDisplayPath ? path_.substr(0, kMaxDisplayPath) + "..." : path_;
  return s;
}

bool ParsedUrl::same_origin(const ParsedUrl& other) const {
  return scheme_ == other.scheme_ && host_ == other.host_ && port_ == other.port_;
}

namespace {

// Absolute URLs only, spelled out: no "http:/x" or "http:///x" leniency, so the text a skill (or its
// reviewer) reads names the host that is connected to.
Result<void, ErrorReply> check_absolute_spelling(std::string_view text) {
  {
    const bool http = starts_with_icase(text, "http://");
    const bool https = starts_with_icase(text, "https://");
    if (!http && !https) {
      const size_t colon = text.find(':');
      const bool has_scheme =
          colon != std::string_view::npos && colon > 0 && colon < 32 &&
          std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(colon), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
          });
      const std::string scheme = has_scheme ? to_lower(std::string(text.substr(0, colon))) : std::string();
      if (has_scheme && scheme != "http" && scheme != "https")
        return denied("scheme \"" + scheme +
                      ":\" is not allowed; only http: and https: URLs can be requested");
      return invalid("url must be absolute and start with http:// or https://");
    }
    const size_t after = http ? 7 : 8;
    if (text.size() > after && text[after] == '/')
      return invalid("url has more than two slashes after the scheme");
  }
  return {};
}

}  // namespace

Result<ParsedUrl, ErrorReply> parse_url(std::string_view text, const ParsedUrl* base) {
  const std::string_view what = base == nullptr ? "url" : "redirect location";
  if (auto raw = check_raw(text, what); !raw) return raw.error();
  if (base == nullptr) {
    if (auto spelled = check_absolute_spelling(text); !spelled) return spelled.error();
  }

  ParsedUrl url;
  url.handle_.reset(base == nullptr ? curl_url() : curl_url_dup(base->handle()));
  if (!url.handle_) return ErrorReply{ErrorCode::IoError, "out of memory while parsing a url"};
  const std::string copy(text);  // curl_url_set wants a terminated string
  // CURLU_DISALLOW_USER: refuse userinfo at parse time (`allowed.example@evil.example`). No
  // CURLU_NON_SUPPORT_SCHEME/GUESS_SCHEME/DEFAULT_SCHEME: the scheme must be given and known.
  const CURLUcode rc = curl_url_set(url.handle_.get(), CURLUPART_URL, copy.c_str(), CURLU_DISALLOW_USER);
  if (rc == CURLUE_USER_NOT_ALLOWED)
    return denied(
        std::string(what) +
        " contains userinfo (user:password@); credentials in URLs are refused, send an Authorization "
        "header instead");
  if (rc != CURLUE_OK) return invalid(std::string(what) + " is not a valid URL: " + curl_url_strerror(rc));

  CURLU* h = url.handle_.get();
  url.scheme_ = to_lower(get_part(h, CURLUPART_SCHEME).value_or(""));
  if (url.scheme_ != "http" && url.scheme_ != "https")
    return denied(std::string(what) + " has scheme \"" + url.scheme_ +
                  ":\"; only http: and https: URLs can be requested");
  if (get_part(h, CURLUPART_USER) || get_part(h, CURLUPART_PASSWORD) || get_part(h, CURLUPART_OPTIONS))
    return denied(std::string(what) + " contains userinfo; credentials in URLs are refused");
  if (get_part(h, CURLUPART_ZONEID))
    return invalid(std::string(what) + " has an IPv6 zone ID, which is not allowed");

  // The host as libcurl will resolve it: percent-escapes decoded, IPv4 spellings normalised
  // (0x7f000001 -> 127.0.0.1). Anything but plain ASCII here would go through IDN conversion later.
  const std::string host = to_lower(get_part(h, CURLUPART_HOST).value_or(""));
  if (host.empty()) return invalid(std::string(what) + " has no host");
  if (host.front() == '[') {
    if (!ipv6_literal_ok(host)) return invalid(std::string(what) + " has a malformed IPv6 host");
  } else if (!std::all_of(host.begin(), host.end(), host_char_ok)) {
    return invalid(
        std::string(what) +
        " has a host that is not plain ASCII letters, digits, '.', '-' or '_' after decoding; write "
        "international names in punycode (xn--)");
  }
  // libcurl normalises IPv4 spellings before it decodes percent-escapes, so "1%2E0" stays the name
  // "1.0" here while the resolver reads it as 1.0.0.0: the check and the connection would disagree
  // about the host. A host that still reads as a number must be a canonical dotted quad.
  if (host.front() != '[' && policy::host_reads_as_ipv4(host) && !policy::is_canonical_ipv4(host))
    return invalid(std::string(what) + " has a host (\"" + host +
                   "\" after decoding) that reads as an IPv4 address; write IPv4 addresses as four "
                   "decimal numbers without leading zeros, like 192.0.2.1");
  url.host_ = host;

  const std::string port = get_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT).value_or("");
  unsigned port_value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_value);
  if (ec != std::errc() || end != port.data() + port.size() || port_value == 0 || port_value > 65535)
    return invalid(std::string(what) + " has an invalid port");
  url.port_ = static_cast<uint16_t>(port_value);

  url.path_ = get_part(h, CURLUPART_PATH).value_or("/");
  if (url.path_.empty() || url.path_.front() != '/') url.path_.insert(url.path_.begin(), '/');
  // libcurl removes literal dot segments; encoded ones survive it and some servers decode them after
  // routing, which would walk out of an allowlisted path prefix (`/v1/%2e%2e/admin`).
  if (has_encoded_dot_segment(url.path_))
    return invalid(std::string(what) + " has a percent-encoded '.' or '..' path segment");

  // Fragments are never sent; drop it so the reported final URL is what was requested.
  curl_url_set(h, CURLUPART_FRAGMENT, nullptr, 0);
  return url;
}

// ---- allowlist ------------------------------------------------------------------------------------

bool Allowlist::allows(const ParsedUrl& url) const {
  const std::string& h = url.host();
  for (const HttpAllowEntry& e : entries_) {
    if (e.scheme != url.scheme() || e.port != url.port()) continue;
    if (e.subdomains) {
      if (h.size() <= e.host.size() + 1 || h.compare(h.size() - e.host.size(), e.host.size(), e.host) != 0 ||
          h[h.size() - e.host.size() - 1] != '.')
        continue;
    } else if (e.host != h) {
      continue;
    }
    const std::string& p = url.path();
    const std::string& prefix = e.path_prefix;
    assert(!prefix.empty() && prefix.front() == '/');  // parse_http_allow_entry's promise
    if (prefix == "/") return true;
    if (has_encoded_separator(p)) continue;
    if (prefix.back() == '/') {
      if (p.compare(0, prefix.size(), prefix) == 0) return true;
    } else if (p == prefix || (p.size() > prefix.size() && p.compare(0, prefix.size(), prefix) == 0 &&
                               p[prefix.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace skillbox::capabilities::http
