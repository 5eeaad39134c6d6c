// fuzz/url_policy.cpp — the allowlist entry parser and the request URL check.
//
// The input is split at the first newline: an allowlist entry, then a request URL.
// Invariants: an accepted entry's normalized text parses again to the same text (normalization is
// idempotent); an accepted URL's own text parses again to the same scheme, host, port and path, and
// the allowlist decision is the same for both (no parse differential between the check and the
// request); a URL the allowlist accepts has the entry's scheme, host (or a subdomain of a `*.` entry)
// and port.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "capabilities/http/url_check.h"
#include "fuzz/fuzz_check.h"
#include "policy/http_allow.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace http = skillbox::capabilities::http;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t newline = input.find('\n');
  std::string_view entry_text = input.substr(0, newline);
  std::string_view url_text =
      newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);

  auto entry = skillbox::policy::parse_http_allow_entry(entry_text);
  if (entry) {
    auto again = skillbox::policy::parse_http_allow_entry(entry->text);
    FUZZ_CHECK(again.ok());
    FUZZ_CHECK(again->text == entry->text);
  }

  auto url = http::parse_url(url_text, nullptr);
  if (!url) {
    return 0;
  }
  auto reparsed = http::parse_url(url->text(), nullptr);
  FUZZ_CHECK(reparsed.ok());
  FUZZ_CHECK(reparsed->scheme() == url->scheme());
  FUZZ_CHECK(reparsed->host() == url->host());
  FUZZ_CHECK(reparsed->port() == url->port());
  FUZZ_CHECK(reparsed->path() == url->path());
  if (entry) {
    http::Allowlist allow(skillbox::HttpAllowList{std::string(entry_text)});
    bool allowed = allow.allows(*url);
    FUZZ_CHECK(allowed == allow.allows(*reparsed));
    if (allowed) {
      FUZZ_CHECK(url->scheme() == entry->scheme);
      FUZZ_CHECK(url->port() == entry->port);
      const std::string& host = url->host();
      if (entry->subdomains) {
        FUZZ_CHECK(host.size() > entry->host.size() + 1);
        FUZZ_CHECK(host.ends_with("." + entry->host));
      } else {
        FUZZ_CHECK(host == entry->host);
      }
      FUZZ_CHECK(url->path().starts_with(entry->path_prefix.substr(0, entry->path_prefix.size() - 1)));
    }
  }
  return 0;
}
