// Tests of the `permissions.http.allow` entry syntax (policy/http_allow.cpp).
#include "policy/http_allow.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace skillbox::policy {
namespace {

TEST(HttpAllowEntry, NormalizesCaseDefaultPortsPathAndEscapes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"https://api.example.com/v1/", "https://api.example.com/v1/"},
      {"HTTPS://API.EXAMPLE.COM", "https://api.example.com/"},
      {"http://example.com:80/", "http://example.com/"},
      {"https://example.com:443/x", "https://example.com/x"},
      {"http://example.com:443/", "http://example.com:443/"},
      {"https://example.com:8443/a/b", "https://example.com:8443/a/b"},
      {"https://*.Example.org/", "https://*.example.org/"},
      {"http://192.0.2.1:8080/", "http://192.0.2.1:8080/"},
      {"http://[::1]:8080/", "http://[::1]:8080/"},
      {"http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/"},
      {"https://example.com/a%2fb%7E", "https://example.com/a%2Fb%7E"},
      {"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
      {"https://example.com/a@b", "https://example.com/a@b"},
  };
  for (const auto& [in, out] : cases) {
    Result<std::string> r = normalize_http_allow_entry(in);
    ASSERT_TRUE(r.ok()) << in << ": " << r.error().message;
    EXPECT_EQ(*r, out) << in;
  }
}

TEST(HttpAllowEntry, RefusesAmbiguousAndForeignSpellingsWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"api.example.com/", "missing scheme: start with https:// or http://"},
      {"file:///etc/passwd", "the scheme must be http or https"},
      {"gopher://example.com/", "the scheme must be http or https"},
      {" https://example.com/", "spaces are not allowed"},
      {"https://example.com/\t", "control characters are not allowed"},
      {"https://exa\r\nmple.com/", "control characters are not allowed"},
      {"https://allowed.example\\@evil.example/", "backslashes are not allowed"},
      {"http://allowed.example@evil.example/", "user names and passwords ('@') are not allowed"},
      {"http://evil.example#@allowed.example/", "query strings and fragments ('?', '#') are not allowed"},
      {"https://b\xC3\xBC"
       "cher.example/",
       "only ASCII is allowed: write international host names in their xn-- "
       "form and percent-encode the path"},
      {"https:///path", "missing host"},
      {"https://:443/", "missing host"},
      {"https://example.com./", "remove the trailing '.' from the host"},
      {"https://exa_mple.com/",
       "the host must be a DNS name (letters, digits, '-' and '.'), an IPv4 address like "
       "192.0.2.1 or a bracketed IPv6 address"},
      {"https://-example.com/",
       "the host must be a DNS name (letters, digits, '-' and '.'), an IPv4 address like "
       "192.0.2.1 or a bracketed IPv6 address"},
      {"https://a..example.com/",
       "the host must be a DNS name (letters, digits, '-' and '.'), an IPv4 address "
       "like 192.0.2.1 or a bracketed IPv6 address"},
      {"https://*/", "'*' is only allowed as a whole leading label, as in https://*.example.org/"},
      {"https://*.org/", "a wildcard must be followed by at least two labels, as in *.example.org"},
      {"https://*example.org/", "'*' is only allowed as a whole leading label, as in https://*.example.org/"},
      {"https://*.*.example.org/",
       "'*' is only allowed as a whole leading label, as in https://*.example.org/"},
      {"http://*.10.0.0.1/", "a wildcard cannot be combined with an IP address"},
      {"http://2130706433/",
       "write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"},
      {"http://0x7f000001/",
       "write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"},
      {"http://0177.0.0.1/",
       "write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"},
      {"http://256.0.0.1/",
       "write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"},
      {"http://0/", "write IPv4 addresses as four decimal numbers without leading zeros, like 192.0.2.1"},
      {"http://::1/", "write IPv6 addresses in brackets, as in http://[2001:db8::1]/"},
      {"http://[::1/", "missing ']' after the IPv6 address"},
      {"http://[fe80::1%25eth0]/", "the IPv6 address in brackets is not valid (zone ids are not allowed)"},
      {"http://[::1]x/", "unexpected characters after the IPv6 address"},
      {"http://example.com:0/", "the port must be a number from 1 to 65535"},
      {"http://example.com:/", "the port must be a number from 1 to 65535"},
      {"http://example.com:+80/", "the port must be a number from 1 to 65535"},
      {"https://example.com/v1/../admin", "'.' and '..' path segments are not allowed"},
      {"https://example.com/v1/%2e%2E/admin", "'.' and '..' path segments are not allowed"},
      {"https://example.com/./x", "'.' and '..' path segments are not allowed"},
      {"https://example.com/a%zz", "'%' in the path must start an escape like %2F"},
      {"https://example.com/a%2", "'%' in the path must start an escape like %2F"},
      {"https://example.com/a\"b", "the character '\"' is not allowed in the path; percent-encode it"},
      {"https://" + std::string(2100, 'a'), "longer than 2048 bytes"},
      {"https://" + std::string(64, 'a') + ".example/",
       "the host must be a DNS name (letters, digits, '-' and '.'), "
       "an IPv4 address like 192.0.2.1 or a bracketed IPv6 address"},
  };
  for (const auto& [in, reason] : cases) {
    Result<std::string> r = normalize_http_allow_entry(in);
    ASSERT_FALSE(r.ok()) << in << " -> " << *r;
    EXPECT_EQ(r.error().message, reason) << in;
  }
}

TEST(HttpAllowEntry, AHundredThousandAtSignsAreRefusedQuicklyAndTheNextEntryIsFine) {
  // docs/security.md "Parser confusion": a URL with 100,000 '@' (linear scan, no backtracking).
  Result<std::string> r = normalize_http_allow_entry("http://" + std::string(100000, '@') + "example.com/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "longer than 2048 bytes");
  r = normalize_http_allow_entry("http://" + std::string(2000, '@') + "example.com/");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "user names and passwords ('@') are not allowed");
  r = normalize_http_allow_entry("https://api.example.com/v1/");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "https://api.example.com/v1/");
}

}  // namespace
}  // namespace skillbox::policy
