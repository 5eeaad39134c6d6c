#include "capabilities/http/url_check.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillbox::capabilities::http {
namespace {

using bus::ErrorCode;

// "ok <url as it will be requested>" or "<ErrorName>: <message>".
std::string check(std::string_view text) {
  auto r = parse_url(text, nullptr);
  if (!r) return std::string(bus::error_name(r.error().code)) + ": " + r.error().message;
  return "ok " + r->text();
}

ParsedUrl parse(std::string_view text) {
  auto r = parse_url(text, nullptr);
  EXPECT_TRUE(r.ok()) << text;
  return std::move(*r);
}

bool allowed(const std::vector<std::string>& allow, std::string_view url) {
  return Allowlist(allow).allows(parse(url));
}

TEST(UrlCheck, ParsesAndNormalisesPlainUrls) {
  EXPECT_EQ(check("https://api.example.com/v1/items?q=1"), "ok https://api.example.com/v1/items?q=1");
  EXPECT_EQ(check("HTTP://API.Example.COM/a/./b/../c"), "ok http://API.Example.COM/a/c");
  ParsedUrl u = parse("HTTP://API.Example.COM:0080/x#frag");
  EXPECT_EQ(u.scheme(), "http");
  EXPECT_EQ(u.host(), "api.example.com");
  EXPECT_EQ(u.port(), 80);
  EXPECT_EQ(u.path(), "/x");
  EXPECT_EQ(u.text().find('#'), std::string::npos);  // fragments are never sent
  EXPECT_EQ(parse("https://h.example").port(), 443);
  EXPECT_EQ(parse("https://h.example").path(), "/");
  EXPECT_EQ(parse("http://[::1]:8080/").host(), "[::1]");
}

TEST(UrlCheck, AlternateIpv4SpellingsParseToTheAddressTheyMean) {
  // The allowlist and the connect-time check see what libcurl will connect to, not the spelling.
  EXPECT_EQ(parse("http://2130706433/").host(), "127.0.0.1");
  EXPECT_EQ(parse("http://0x7f000001/").host(), "127.0.0.1");
  EXPECT_EQ(parse("http://0177.0.0.1/").host(), "127.0.0.1");
  EXPECT_EQ(parse("http://127.1/").host(), "127.0.0.1");
  EXPECT_EQ(parse("http://0/").host(), "0.0.0.0");
  EXPECT_EQ(parse("http://[::ffff:127.0.0.1]/").host(), "[::ffff:127.0.0.1]");
  EXPECT_EQ(parse("http://%31%32%37.0.0.1/").host(), "127.0.0.1");
}

// Found by fuzz/url_policy (fuzz/regressions/url_policy/): libcurl normalises IPv4 spellings before it
// decodes percent-escapes, so "1%2E0" was the name "1.0" to the check and 1.0.0.0 to the resolver.
TEST(UrlCheck, EncodedHostsThatReadAsIpv4MustBeCanonicalAfterDecoding) {
  const std::string rule =
      "\" after decoding) that reads as an IPv4 address; write IPv4 addresses as four decimal numbers "
      "without leading zeros, like 192.0.2.1";
  EXPECT_EQ(check("http://1%2E0/"), "InvalidArgument: url has a host (\"1.0" + rule);
  EXPECT_EQ(check("http://127%2e1/x"), "InvalidArgument: url has a host (\"127.1" + rule);
  EXPECT_EQ(check("http://0x7f%2E1/"), "InvalidArgument: url has a host (\"0x7f.1" + rule);
  EXPECT_EQ(check("http://1.2.3.01%30/"), "InvalidArgument: url has a host (\"1.2.3.010" + rule);
  EXPECT_EQ(check("http://1%2E0/%2p://:oe%2e/see/se"), "InvalidArgument: url has a host (\"1.0" + rule);
  // Decoded to a canonical address, or to a name: as before.
  EXPECT_EQ(parse("http://127%2E0%2E0%2E1/").host(), "127.0.0.1");
  EXPECT_EQ(parse("http://api%2Eexample.com/").host(), "api.example.com");
  EXPECT_EQ(parse("http://1.0/").host(), "1.0.0.0");  // unencoded: libcurl normalised it
  // A redirect's Location goes through the same check.
  const ParsedUrl base = parse("http://api.example.com/a");
  auto hop = parse_url("http://127%2E1/", &base);
  ASSERT_FALSE(hop.ok());
  EXPECT_EQ(hop.error().message, "redirect location has a host (\"127.1" + rule);
}

TEST(UrlCheck, RefusesParserConfusion) {
  EXPECT_EQ(check("http://allowed.example\\@evil.example/"),
            "InvalidArgument: url contains a backslash; use '/' or percent-encode it");
  EXPECT_EQ(
      check("http://allowed.example@evil.example/"),
      "PermissionDenied: url contains userinfo (user:password@); credentials in URLs are refused, send an "
      "Authorization header instead");
  EXPECT_EQ(check("http://user:pw@evil.example/").rfind("PermissionDenied: url contains userinfo", 0), 0u);
  // The fragment trick parses to evil.example, which the allowlist then judges.
  EXPECT_EQ(parse("http://evil.example#@allowed.example/").host(), "evil.example");
  std::string at_flood = "http://" + std::string(100000, '@') + "allowed.example/";
  EXPECT_EQ(check(at_flood), "InvalidArgument: url is 100023 bytes long; the limit is 8192 bytes");
  std::string long_ok = "http://a.example/" + std::string(kMaxUrlBytes - 17, 'a');
  EXPECT_EQ(long_ok.size(), kMaxUrlBytes);
  EXPECT_EQ(check(long_ok).rfind("ok ", 0), 0u);
  EXPECT_EQ(check(long_ok + "a").rfind("InvalidArgument: url is 8193 bytes long", 0), 0u);
}

TEST(UrlCheck, RefusesOddInput) {
  EXPECT_EQ(check(" http://a.example/"),
            "InvalidArgument: url contains a space or control character at offset 0; percent-encode it");
  EXPECT_EQ(check("\thttp://a.example/")
                .rfind("InvalidArgument: url contains a space or control character at "
                       "offset 0",
                       0),
            0u);
  EXPECT_EQ(check("http://a.example/ ").rfind("InvalidArgument: url contains a space", 0), 0u);
  EXPECT_EQ(check("http://a.example/\r\nX: y")
                .rfind("InvalidArgument: url contains a space or control character "
                       "at offset 17",
                       0),
            0u);
  EXPECT_EQ(check(std::string("http://a.example/\0/../x", 23))
                .rfind("InvalidArgument: url contains a space or "
                       "control",
                       0),
            0u);
  EXPECT_EQ(check("http://a.example/\x7f").rfind("InvalidArgument: url contains a space or control", 0), 0u);
  EXPECT_EQ(check("http://\xc3\xa9.example/")
                .rfind("InvalidArgument: url contains a non-ASCII byte at offset 7", 0),
            0u);
  EXPECT_EQ(
      check("http://%C3%A9.example/").rfind("InvalidArgument: url has a host that is not plain ASCII", 0),
      0u);
  EXPECT_EQ(check("").rfind("InvalidArgument: url is empty", 0), 0u);
  EXPECT_EQ(check("/relative/path"),
            "InvalidArgument: url must be absolute and start with http:// or https://");
  EXPECT_EQ(check("//a.example/"),
            "InvalidArgument: url must be absolute and start with http:// or https://");
  EXPECT_EQ(check("http:/a.example/"),
            "InvalidArgument: url must be absolute and start with http:// or https://");
  EXPECT_EQ(check("http:///a.example/"), "InvalidArgument: url has more than two slashes after the scheme");
  EXPECT_EQ(check("http://a.example:0/"), "InvalidArgument: url has an invalid port");
  EXPECT_EQ(check("http://a.example:65536/").rfind("InvalidArgument: url is not a valid URL", 0), 0u);
  EXPECT_EQ(check("http://[fe80::1%25eth0]/"),
            "InvalidArgument: url has an IPv6 zone ID, which is not allowed");
  EXPECT_EQ(check("http://a.example/v1/%2e%2e/admin"),
            "InvalidArgument: url has a percent-encoded '.' or '..' path segment");
  EXPECT_EQ(check("http://a.example/v1/.%2E/admin"),
            "InvalidArgument: url has a percent-encoded '.' or '..' path segment");
  EXPECT_EQ(check("http://a.example/v1/%2e/x"),
            "InvalidArgument: url has a percent-encoded '.' or '..' path segment");
  EXPECT_EQ(check("http://a.example/v1/%2e%2ex/ok").rfind("ok ", 0), 0u);  // not a dot segment
}

TEST(UrlCheck, RefusesEverySchemeButHttpAndHttps) {
  for (const char* url :
       {"file:///etc/passwd", "gopher://a.example/", "ftp://a.example/", "dict://a.example:11211/",
        "ldap://a.example/", "javascript:alert(1)", "data:text/plain,hi", "FILE:///etc/passwd",
        "ws://a.example/", "telnet://a.example/"}) {
    EXPECT_EQ(check(url).rfind("PermissionDenied: scheme \"", 0), 0u) << url << " -> " << check(url);
  }
  EXPECT_EQ(check("file:///etc/passwd"),
            "PermissionDenied: scheme \"file:\" is not allowed; only http: and https: URLs can be requested");
}

TEST(UrlCheck, ResolvesRedirectLocationsAgainstTheCurrentUrlAndChecksThemAgain) {
  ParsedUrl base = parse("https://a.example/x/y?q=1");
  auto resolve = [&](std::string_view loc) {
    auto r = parse_url(loc, &base);
    if (!r) return std::string(bus::error_name(r.error().code)) + ": " + r.error().message;
    return r->text();
  };
  EXPECT_EQ(resolve("../z"), "https://a.example/z");
  EXPECT_EQ(resolve("/abs"), "https://a.example/abs");
  EXPECT_EQ(resolve("//b.example/p"), "https://b.example/p");
  EXPECT_EQ(resolve("http://c.example:81/"), "http://c.example:81/");
  EXPECT_EQ(resolve("file:///etc/passwd"),
            "PermissionDenied: redirect location has scheme \"file:\"; only http: and https: URLs can be "
            "requested");
  EXPECT_EQ(resolve("//u:p@b.example/").rfind("PermissionDenied: redirect location contains userinfo", 0),
            0u);
  EXPECT_EQ(resolve("/a b").rfind("InvalidArgument: redirect location contains a space", 0), 0u);
  EXPECT_EQ(resolve("").rfind("InvalidArgument: redirect location is empty", 0), 0u);
  // The base handle itself is untouched by resolving against it.
  EXPECT_EQ(base.text(), "https://a.example/x/y?q=1");
}

TEST(Allowlist, MatchesSchemeHostPortExactly) {
  const std::vector<std::string> allow = {"https://api.example.com/"};
  EXPECT_TRUE(allowed(allow, "https://api.example.com/"));
  EXPECT_TRUE(allowed(allow, "https://API.EXAMPLE.com:443/anything?x=1"));
  EXPECT_FALSE(allowed(allow, "http://api.example.com/"));        // scheme
  EXPECT_FALSE(allowed(allow, "https://api.example.com:8443/"));  // port
  EXPECT_FALSE(allowed(allow, "https://api.example.com.evil.example/"));
  EXPECT_FALSE(allowed(allow, "https://evilapi.example.com/"));
  EXPECT_FALSE(allowed(allow, "https://x.api.example.com/"));
  EXPECT_FALSE(allowed(allow, "https://api.example.com./"));  // exact as parsed: the trailing dot differs
  EXPECT_FALSE(allowed(allow, "https://evil.example#@api.example.com/"));
  EXPECT_TRUE(allowed({"http://127.0.0.1:8080/"}, "http://2130706433:8080/"));  // same address, as parsed
  EXPECT_TRUE(allowed({"http://[::1]:8080/"}, "http://[0:0::1]:8080/x"));
}

TEST(Allowlist, WildcardMatchesSubdomainsOnly) {
  const std::vector<std::string> allow = {"https://*.example.org/"};
  EXPECT_TRUE(allowed(allow, "https://a.example.org/"));
  EXPECT_TRUE(allowed(allow, "https://a.b.example.org/x"));
  EXPECT_FALSE(allowed(allow, "https://example.org/"));
  EXPECT_FALSE(allowed(allow, "https://aexample.org/"));
  EXPECT_FALSE(allowed(allow, "https://a.example.org.evil.example/"));
  EXPECT_FALSE(allowed(allow, "http://a.example.org/"));
}

TEST(Allowlist, PathPrefixMatchesOnSegmentBoundaries) {
  EXPECT_TRUE(allowed({"https://a.example/v1"}, "https://a.example/v1"));
  EXPECT_TRUE(allowed({"https://a.example/v1"}, "https://a.example/v1/items"));
  EXPECT_TRUE(allowed({"https://a.example/v1"}, "https://a.example/v1?x"));
  EXPECT_FALSE(allowed({"https://a.example/v1"}, "https://a.example/v1beta"));
  EXPECT_FALSE(allowed({"https://a.example/v1"}, "https://a.example/"));
  EXPECT_TRUE(allowed({"https://a.example/v1/"}, "https://a.example/v1/items"));
  EXPECT_FALSE(allowed({"https://a.example/v1/"}, "https://a.example/v1"));
  // Dot segments are removed before matching, so they cannot climb out of the prefix.
  EXPECT_FALSE(allowed({"https://a.example/v1/"}, "https://a.example/v1/../admin"));
  // Encoded separators could become '/' on the server: no match under a path prefix.
  EXPECT_FALSE(allowed({"https://a.example/v1/"}, "https://a.example/v1/..%2fadmin"));
  EXPECT_FALSE(allowed({"https://a.example/v1/"}, "https://a.example/v1/..%5Cadmin"));
  EXPECT_TRUE(allowed({"https://a.example/"}, "https://a.example/group%2Fproject"));
  // Case matters in paths.
  EXPECT_FALSE(allowed({"https://a.example/v1/"}, "https://a.example/V1/x"));
}

// Entries are parsed by the policy layer's one parser (HttpAllowList, policy/http_allow.cpp); the
// reasons below are its messages. tests/capabilities/http/allow_entry_equivalence_test.cpp shows that
// the manifest and the capability accept the same entries.
std::optional<std::string> entry_error(std::string_view entry) {
  HttpAllowList list;
  return list.push_back(entry);
}

TEST(Allowlist, InvalidEntriesAreReportedAndNeverMatch) {
  EXPECT_FALSE(entry_error("https://api.example.com/v1/"));
  EXPECT_FALSE(entry_error("http://*.example.org"));
  EXPECT_EQ(*entry_error("api.example.com"), "missing scheme: start with https:// or http://");
  EXPECT_EQ(*entry_error("ftp://a.example/"), "the scheme must be http or https");
  EXPECT_EQ(*entry_error("https://a.example/?q=1"), "query strings and fragments ('?', '#') are not allowed");
  EXPECT_EQ(*entry_error("https://*/"),
            "'*' is only allowed as a whole leading label, as in https://*.example.org/");
  EXPECT_EQ(*entry_error("https://a.*.example/"),
            "'*' is only allowed as a whole leading label, as in https://*.example.org/");
  EXPECT_EQ(*entry_error("https://*.10.0.0.1/"), "a wildcard cannot be combined with an IP address");
  EXPECT_TRUE(entry_error("https://u:p@a.example/"));
  EXPECT_TRUE(entry_error("https://a.example/ x"));
  Allowlist list({"ftp://a.example/", "not a url", "https://*/"});
  EXPECT_TRUE(list.empty());  // no valid entry left
  EXPECT_FALSE(list.allows(parse("https://a.example/")));
  EXPECT_TRUE(Allowlist({}).empty());
}

}  // namespace
}  // namespace skillbox::capabilities::http
