// capabilities/http/url_check.h — the one place a skill's URL is checked and parsed.
//
// A URL is parsed exactly once, by libcurl's URL API (curl_url), and the parsed handle is what the
// transfer connects with (CURLOPT_CURLU). Nothing re-parses the text, so the allowlist decision and the
// connection cannot disagree about the host (parser-confusion attacks such as
// `http://allowed.example\@evil.example/`, see docs/http.md "URLs"). Redirect targets go through the
// same function, resolved against the URL of the hop that sent them. The allowlist side is the mirror
// image: its entries are parsed once, by the policy layer, and arrive here as HttpAllowEntry values.
#pragma once

#include <curl/curl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "bus/messages.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"

namespace skillbox::capabilities::http {

/// Longest URL text accepted, in bytes. RFC 9110 §4.1 asks every recipient to support at least 8000
/// octets; anything longer is refused before parsing, which also bounds the parser's work on
/// hostile input (a URL of 100,000 '@').
inline constexpr size_t kMaxUrlBytes = 8192;

/// A URL that passed every syntactic check, with its libcurl handle. Move-only.
class ParsedUrl {
 public:
  /// The handle to pass to CURLOPT_CURLU. Owned by this object; keep it alive for the transfer.
  [[nodiscard]] CURLU* handle() const { return handle_.get(); }
  [[nodiscard]] const std::string& scheme() const { return scheme_; }  // "http" or "https"
  [[nodiscard]] const std::string& host() const { return host_; }      // lower-cased; IPv6 in brackets
  [[nodiscard]] uint16_t port() const { return port_; }                // default port filled in
  [[nodiscard]] const std::string& path() const { return path_; }      // dot segments removed
  /// The whole URL as libcurl will request it, without a fragment (fragments are never sent).
  [[nodiscard]] std::string text() const;
  /// `scheme://host[:port]/path` for error messages: no query, at most ~200 bytes.
  [[nodiscard]] std::string display() const;
  /// True when scheme, host and port are equal (RFC 6454 origin).
  [[nodiscard]] bool same_origin(const ParsedUrl& other) const;

 private:
  struct Free {
    void operator()(CURLU* h) const { curl_url_cleanup(h); }
  };
  friend Result<ParsedUrl, bus::ErrorReply> parse_url(std::string_view, const ParsedUrl*);
  std::unique_ptr<CURLU, Free> handle_;
  std::string scheme_, host_, path_;
  uint16_t port_ = 0;
};

/// Checks `text` and parses it. With `base` == nullptr `text` must be an absolute
/// `http://` or `https://` URL; otherwise it is a redirect Location resolved against `base`.
///
/// Refused, before parsing: empty or longer than kMaxUrlBytes; spaces, tabs, CR, LF, NUL or other
/// control characters anywhere; bytes outside ASCII; backslashes (parsers disagree on them). After
/// parsing: schemes other than http/https, userinfo (`user:pass@`), IPv6 zone IDs, port 0, host names
/// that are not plain ASCII letters/digits/`.`/`-`/`_` after percent-decoding, and percent-encoded
/// dot segments (`/%2e%2e/`) that a server could resolve after the allowlist matched.
///
/// Errors: PermissionDenied for the scheme and userinfo rules, InvalidArgument otherwise. Messages do
/// not start with "http: "; callers add the context.
[[nodiscard]] Result<ParsedUrl, bus::ErrorReply> parse_url(std::string_view text, const ParsedUrl* base);

/// Matches parsed URLs against `permissions.http.allow`. The entries come already parsed and
/// normalized by the policy layer (HttpAllowList, skillbox/policy.h; the one entry parser is
/// policy/http_allow.cpp): nothing here reads entry text. An entry `scheme://host[:port][/path-prefix]`,
/// host possibly `*.` + domain (any subdomain, not the domain itself), matches a URL when scheme, host
/// and port are equal as parsed (default ports filled in, host lower-case) and the URL's path starts
/// with the prefix on a segment boundary: `/v1` matches `/v1` and `/v1/x` but not `/v1beta`; `/v1/`
/// matches `/v1/` and below. Under a prefix other than `/`, a path holding an encoded `/` or `\` (%2F,
/// %5C) does not match, since a server may decode it into a separator.
class Allowlist {
 public:
  /// Keeps the valid entries of `allow` (a text that did not parse never matches anything).
  explicit Allowlist(const HttpAllowList& allow) : entries_(allow.entries()) {}

  /// True when no entry is valid: no URL can match.
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] bool allows(const ParsedUrl& url) const;

 private:
  std::vector<HttpAllowEntry> entries_;
};

}  // namespace skillbox::capabilities::http
