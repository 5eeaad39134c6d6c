// policy/http_allow.cpp — checks and normalizes `permissions.http.allow` entries (the one parser of
// them), and HttpAllowList, which runs every entry through it once.
#include "policy/http_allow.h"

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/ceilings.h"

namespace skillbox::policy {
namespace {

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
char upper(char c) {
  return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_hex(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_alnum_lower(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z');
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  return parts;
}

/// A label that a WHATWG URL parser would read as a number, making the host an IPv4 address
/// ("127.1", "0x7f.1", "2130706433"): such hosts must be written as canonical dotted quads.
bool looks_numeric(std::string_view label) {
  if (label.empty()) return false;
  if (label.size() >= 2 && label[0] == '0' && (label[1] == 'x' || label[1] == 'X')) {
    for (char c : label.substr(2)) {
      if (!is_hex(c)) return false;
    }
    return true;
  }
  for (char c : label) {
    if (!is_digit(c)) return false;
  }
  return true;
}

}  // namespace

bool is_canonical_ipv4(std::string_view host) {
  const auto parts = split(host, '.');
  if (parts.size() != 4) return false;
  for (std::string_view p : parts) {
    if (p.empty() || p.size() > 3) return false;
    if (p.size() > 1 && p[0] == '0') return false;  // "010" is octal to some parsers
    int value = 0;
    for (char c : p) {
      if (!is_digit(c)) return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
  }
  return true;
}

bool host_reads_as_ipv4(std::string_view host) {
  if (host.ends_with('.')) host.remove_suffix(1);
  const size_t dot = host.rfind('.');
  return looks_numeric(dot == std::string_view::npos ? host : host.substr(dot + 1));
}

namespace {

constexpr std::string_view kHostRule =
    "the host must be a DNS name (letters, digits, '-' and '.'), an IPv4 address like 192.0.2.1 or a "
    "bracketed IPv6 address";

/// Checks a lower-cased DNS name or IPv4 address, optionally with a leading "*." wildcard label, and
/// stores it in `entry` (host without the "*.", subdomains).
std::optional<Error> check_dns_host(std::string_view name, HttpAllowEntry& entry) {
  const bool wildcard = name.starts_with("*.");
  if (wildcard) name.remove_prefix(2);
  if (name.find('*') != std::string_view::npos) {
    return Error{"'*' is only allowed as a whole leading label, as in https://*.example.org/"};
  }
  if (name.empty()) return Error{"missing host"};
  if (name.back() == '.') return Error{"remove the trailing '.' from the host"};
  if (name.size() > 253) return Error{"the host is longer than 253 characters"};
  const auto labels = split(name, '.');
  for (std::string_view label : labels) {
    if (label.empty() || label.size() > 63) return Error{std::string(kHostRule)};
    for (char c : label) {
      if (!is_alnum_lower(c) && c != '-') return Error{std::string(kHostRule)};
    }
    if (label.front() == '-' || label.back() == '-') return Error{std::string(kHostRule)};
  }
  if (looks_numeric(labels.back())) {
    if (wildcard) return Error{"a wildcard cannot be combined with an IP address"};
    if (!is_canonical_ipv4(name)) {
      return Error{"write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"};
    }
  } else if (wildcard && labels.size() < 2) {
    return Error{"a wildcard must be followed by at least two labels, as in *.example.org"};
  }
  entry.host = std::string(name);
  entry.subdomains = wildcard;
  return std::nullopt;
}

/// Checks "[v6]" and returns it in inet_ntop's canonical (RFC 5952) form.
Result<std::string> check_ipv6_host(std::string_view bracketed) {
  const std::string inner(bracketed.substr(1, bracketed.size() - 2));
  std::array<unsigned char, 16> addr{};
  if (inner.empty() || inet_pton(AF_INET6, inner.c_str(), addr.data()) != 1) {
    return Error{"the IPv6 address in brackets is not valid (zone ids are not allowed)"};
  }
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (inet_ntop(AF_INET6, addr.data(), text.data(), text.size()) == nullptr) {
    return Error{"the IPv6 address in brackets is not valid"};
  }
  // Appended, not `"[" + std::string(...) + "]"`: GCC 12 at -O3 reports a false -Wrestrict on that.
  std::string out = "[";
  out += text.data();
  out += ']';
  return out;
}

/// RFC 3986 pchar plus '/', with percent-escapes normalized to upper case. Dot segments are refused
/// (also when percent-encoded): "/v1/../admin" must not read as a prefix of "/admin".
Result<std::string> check_path(std::string_view path) {
  constexpr std::string_view kAllowed = "-._~!$&'()*+,;=:@/";
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '%') {
      if (i + 2 >= path.size() || !is_hex(path[i + 1]) || !is_hex(path[i + 2])) {
        return Error{"'%' in the path must start an escape like %2F"};
      }
      out += '%';
      out += upper(path[i + 1]);
      out += upper(path[i + 2]);
      i += 2;
      continue;
    }
    const bool ok = is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    kAllowed.find(c) != std::string_view::npos;
    if (!ok)
      return Error{std::string("the character '") + c + "' is not allowed in the path; percent-encode it"};
    out += c;
  }
  for (std::string_view segment : split(out, '/')) {
    std::string decoded;
    for (size_t i = 0; i < segment.size(); ++i) {
      if (segment.substr(i, 3) == "%2E") {
        decoded += '.';
        i += 2;
      } else {
        decoded += segment[i];
      }
    }
    if (decoded == "." || decoded == "..") return Error{"'.' and '..' path segments are not allowed"};
  }
  return out;
}

}  // namespace

Result<HttpAllowEntry> parse_http_allow_entry(std::string_view entry) {
  if (entry.size() > kMaxHttpAllowEntryBytes) {
    return Error{"longer than " + std::to_string(kMaxHttpAllowEntryBytes) + " bytes"};
  }
  for (char ch : entry) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == ' ') return Error{"spaces are not allowed"};
    if (c < 0x20 || c == 0x7F) return Error{"control characters are not allowed"};
    if (c >= 0x80) {
      return Error{
          "only ASCII is allowed: write international host names in their xn-- form and "
          "percent-encode the path"};
    }
    if (c == '\\') return Error{"backslashes are not allowed"};
  }
  const size_t scheme_end = entry.find("://");
  if (scheme_end == std::string_view::npos) return Error{"missing scheme: start with https:// or http://"};
  HttpAllowEntry out;
  out.scheme = to_lower(entry.substr(0, scheme_end));
  if (out.scheme != "http" && out.scheme != "https") return Error{"the scheme must be http or https"};
  const std::string_view rest = entry.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Error{"query strings and fragments ('?', '#') are not allowed"};
  }
  const size_t path_start = rest.find('/');
  const std::string_view authority = rest.substr(0, path_start);
  const std::string_view path = path_start == std::string_view::npos ? "/" : rest.substr(path_start);
  if (authority.find('@') != std::string_view::npos) {
    return Error{"user names and passwords ('@') are not allowed"};
  }

  std::string_view host_part = authority;
  std::string_view port_part;
  bool has_port = false;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Error{"missing ']' after the IPv6 address"};
    host_part = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Error{"unexpected characters after the IPv6 address"};
      has_port = true;
      port_part = after.substr(1);
    }
  } else {
    const size_t colon = authority.find(':');
    if (colon != std::string_view::npos) {
      if (authority.find(':', colon + 1) != std::string_view::npos) {
        return Error{"write IPv6 addresses in brackets, as in http://[2001:db8::1]/"};
      }
      host_part = authority.substr(0, colon);
      has_port = true;
      port_part = authority.substr(colon + 1);
    }
  }
  if (host_part.empty()) return Error{"missing host"};

  const uint16_t default_port = out.scheme == "https" ? 443 : 80;
  out.port = default_port;
  if (has_port) {
    if (port_part.empty() || port_part.size() > 5) return Error{"the port must be a number from 1 to 65535"};
    uint32_t value = 0;
    for (char c : port_part) {
      if (!is_digit(c)) return Error{"the port must be a number from 1 to 65535"};
      value = value * 10 + static_cast<uint32_t>(c - '0');
    }
    if (value < 1 || value > 65535) return Error{"the port must be a number from 1 to 65535"};
    out.port = static_cast<uint16_t>(value);
  }

  if (host_part.starts_with('[')) {
    Result<std::string> host = check_ipv6_host(host_part);
    if (!host) return host.error();
    out.host = std::move(*host);
  } else if (std::optional<Error> bad = check_dns_host(to_lower(host_part), out)) {
    return *bad;
  }
  Result<std::string> normalized_path = check_path(path);
  if (!normalized_path) return normalized_path.error();
  out.path_prefix = std::move(*normalized_path);

  out.text = out.scheme + "://" + (out.subdomains ? "*." : "") + out.host;
  if (out.port != default_port) out.text += ":" + std::to_string(out.port);
  out.text += out.path_prefix;
  return out;
}

Result<std::string> normalize_http_allow_entry(std::string_view entry) {
  Result<HttpAllowEntry> parsed = parse_http_allow_entry(entry);
  if (!parsed) return parsed.error();
  return std::move(parsed->text);
}

}  // namespace skillbox::policy

// ---- HttpAllowList (skillbox/policy.h) ---------------------------------------------------------------

namespace skillbox {

HttpAllowList::HttpAllowList(std::initializer_list<std::string> texts) {
  for (const std::string& text : texts) push_back(text);
}

HttpAllowList::HttpAllowList(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) push_back(text);
}

std::optional<std::string> HttpAllowList::push_back(std::string_view text) {
  Result<HttpAllowEntry> entry = policy::parse_http_allow_entry(text);
  if (!entry) {
    texts_.emplace_back(text);
    valid_.push_back(false);
    return entry.error().message;
  }
  texts_.push_back(entry->text);
  entries_.push_back(std::move(*entry));
  valid_.push_back(true);
  return std::nullopt;
}

void HttpAllowList::pop_back() {
  if (texts_.empty()) return;
  if (valid_.back()) entries_.pop_back();
  valid_.pop_back();
  texts_.pop_back();
}

void HttpAllowList::clear() {
  texts_.clear();
  entries_.clear();
  valid_.clear();
}

}  // namespace skillbox
