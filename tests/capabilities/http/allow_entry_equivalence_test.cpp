// The manifest and the http capability accept exactly the same `permissions.http.allow` entries, and
// mean the same thing by each.
//
// There is one entry parser (policy/http_allow.cpp, behind HttpAllowList); the capability matches only
// the HttpAllowEntry values it produces (capabilities/http/url_check.h). These tests pin that down from
// the outside: for a table of tricky entries, Skill::parse_manifest and a policy built in code (as an
// embedder writes it) accept and reject the same ones and hold the same normalized entries; the real
// HttpCapability admits and refuses the same URLs for both; and every accepted entry, read back as a URL
// by the request-side parser (libcurl), names the same scheme, host, port and path as its normalized
// form.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "capabilities/http/http_capability.h"
#include "capabilities/http/url_check.h"
#include "skillbox/skillbox.h"

namespace skillbox::capabilities::http {
namespace {

class NullSink : public bus::CompletionSink {
 public:
  void complete(uint64_t /*id*/, bus::Reply /*reply*/) override { ADD_FAILURE() << "no request may start"; }
};

/// The manifest side: `permissions.http.allow` after Skill::parse_manifest, or nullopt when the
/// manifest is refused.
std::optional<HttpAllowList> from_manifest(const std::string& entry) {
  const std::string manifest = R"({"id": "a", "entry": "a.js", "permissions": {"http": {"allow": [)" +
                               nlohmann::json(entry).dump() + "]}}}";
  Result<Manifest> m = Skill::parse_manifest(manifest);
  if (!m) return std::nullopt;
  return m->permissions.http.allow;
}

/// What the real capability decides about a DELETE of `url` under `allow` with only GET granted:
/// "allowed" when the allowlist let it through (the method check comes next and refuses it, so no
/// request ever starts), else the refusal.
std::string capability_verdict(const HttpAllowList& allow, const std::string& url) {
  HttpPolicy policy;
  policy.allow = allow;
  policy.methods = {"GET"};
  NullSink sink;
  bus::BusCounters counters;
  HttpCapability cap(std::move(policy), {}, sink, counters);
  bus::HttpRequest request;
  request.method = "DELETE";
  request.url = url;
  std::optional<bus::Reply> reply = cap.start(1, std::move(request));
  if (!reply) return "started";  // a bug: NullSink reports it as well
  const auto* error = std::get_if<bus::ErrorReply>(&*reply);
  if (error == nullptr) return "not an error";
  if (error->message == "http: method DELETE is not in permissions.http.methods") return "allowed";
  return error->message;
}

/// `text` with a wildcard's "*." replaced by a concrete subdomain: a URL the entry names.
std::string as_url(const std::string& text) {
  std::string url = text;
  if (const size_t star = url.find("://*."); star != std::string::npos) url.replace(star + 3, 1, "sub");
  return url;
}

struct Case {
  std::string entry;
  std::optional<std::string> normalized;  // nullopt: refused by both sides
  std::vector<std::string> matches = {};  // URLs the entry must admit (besides itself)
  std::vector<std::string> misses = {};   // URLs it must refuse
};

// Ports, `*.`, trailing slashes, case, IPv4 and IPv6 literals, %-escapes, userinfo, queries and
// fragments, and the entries that the capability's former second parser judged differently from the
// manifest (`_` in a host and `*` in a path).
const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      // ports
      {"https://a.example:443/", "https://a.example/", {"https://a.example/x"}, {"https://a.example:8443/"}},
      {"https://a.example:8443",
       "https://a.example:8443/",
       {"https://a.example:8443/x"},
       {"https://a.example/x"}},
      {"http://a.example:443/", "http://a.example:443/", {"http://a.example:443/"}, {"https://a.example/"}},
      {"http://a.example:08080/",
       "http://a.example:8080/",
       {"http://a.example:8080/"},
       {"http://a.example/"}},
      {"http://a.example:65535/", "http://a.example:65535/"},
      {"http://a.example:0/", std::nullopt},
      {"http://a.example:65536/", std::nullopt},
      {"http://a.example:/", std::nullopt},
      {"http://a.example:+80/", std::nullopt},
      {"http://a.example:80:80/", std::nullopt},
      // wildcards
      {"https://*.example.org",
       "https://*.example.org/",
       {"https://a.example.org/", "https://a.b.example.org/x", "https://A.Example.ORG/"},
       {"https://example.org/", "https://aexample.org/", "https://a.example.org.evil.example/",
        "http://a.example.org/"}},
      {"https://*.Example.org/v1/",
       "https://*.example.org/v1/",
       {"https://a.example.org/v1/x"},
       {"https://a.example.org/v2/"}},
      {"https://*/", std::nullopt},
      {"https://*.org/", std::nullopt},
      {"https://*example.org/", std::nullopt},
      {"https://a.*.example/", std::nullopt},
      {"https://*.*.example.org/", std::nullopt},
      {"https://*.10.0.0.1/", std::nullopt},
      {"https://*.[::1]/", std::nullopt},
      // trailing slash and path prefixes
      {"https://a.example", "https://a.example/", {"https://a.example/anything?q=1"}},
      {"https://a.example/v1",
       "https://a.example/v1",
       {"https://a.example/v1/items", "https://a.example/v1?x"},
       {"https://a.example/v1beta", "https://a.example/"}},
      {"https://a.example/v1/",
       "https://a.example/v1/",
       {"https://a.example/v1/items"},
       {"https://a.example/v1", "https://a.example/v1/../admin", "https://a.example/v1/..%2fadmin"}},
      {"https://a.example./", std::nullopt},
      {"https://a.example/v1/../admin", std::nullopt},
      {"https://a.example/./x", std::nullopt},
      // case
      {"HTTPS://API.Example.COM/V1/",
       "https://api.example.com/V1/",
       {"https://api.example.com/V1/x", "https://API.EXAMPLE.com:443/V1/x"},
       {"https://api.example.com/v1/x"}},
      // IPv4 literals
      {"http://192.0.2.1:8080/",
       "http://192.0.2.1:8080/",
       {"http://3221225985:8080/", "http://192.0.2.1:8080/x"}},
      {"http://127.1/", std::nullopt},
      {"http://2130706433/", std::nullopt},
      {"http://0x7f.0.0.1/", std::nullopt},
      {"http://010.0.0.1/", std::nullopt},
      // IPv6 literals
      {"http://[::1]:8080/", "http://[::1]:8080/", {"http://[0:0::1]:8080/x"}, {"http://[::2]:8080/"}},
      {"http://[0:0::1]:80/", "http://[::1]/", {"http://[::1]/"}},
      {"http://[2001:DB8:0:0:0:0:0:1]/", "http://[2001:db8::1]/", {"http://[2001:db8::1]/x"}},
      {"http://[::ffff:192.0.2.1]/", "http://[::ffff:192.0.2.1]/"},
      {"http://[fe80::1%25eth0]/", std::nullopt},
      {"http://::1/", std::nullopt},
      {"http://[::1/", std::nullopt},
      {"http://[::1]x/", std::nullopt},
      {"http://[192.0.2.1]/", std::nullopt},
      // percent-escapes
      {"https://a.example/caf%c3%a9/", "https://a.example/caf%C3%A9/", {"https://a.example/caf%C3%A9/menu"}},
      {"https://a.example/%7Euser/", "https://a.example/%7Euser/", {"https://a.example/%7Euser/x"}},
      // an encoded separator in the prefix: accepted, but no URL can both match it and pass the
      // "no %2F under a prefix" rule, on either side
      {"https://a.example/a%2fb", "https://a.example/a%2Fb", {}, {"https://a.example/a%2Fb"}},
      {"https://a.example/v1/%2e%2E/admin", std::nullopt},
      {"https://a.example/a%zz", std::nullopt},
      {"https://a.example/a%2", std::nullopt},
      // userinfo
      {"https://u:p@a.example/", std::nullopt},
      {"https://a.example@evil.example/", std::nullopt},
      {"https://a.example/x@y", "https://a.example/x@y", {"https://a.example/x@y/z"}},
      // query and fragment
      {"https://a.example/?q=1", std::nullopt},
      {"https://a.example/#top", std::nullopt},
      {"https://a.example?", std::nullopt},
      {"http://evil.example#@a.example/", std::nullopt},
      // formerly accepted by one parser only
      {"https://a.example/v1/*",
       "https://a.example/v1/*",
       {"https://a.example/v1/*/x"},
       {"https://a.example/v1/x"}},
      {"https://exa_mple.com/", std::nullopt},
      {"http://*.localhost/", std::nullopt},
      // everything else
      {"api.example.com", std::nullopt},
      {"ftp://a.example/", std::nullopt},
      {"https://a.example/ x", std::nullopt},
      {"https://a.example\\@evil.example/", std::nullopt},
      {"https://b\xC3\xBC"
       "cher.example/",
       std::nullopt},
      {"https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
      {"https:///path", std::nullopt},
      {"", std::nullopt},
  };
  return kCases;
}

TEST(AllowEntryEquivalence, ManifestAndCodeBuiltPoliciesAcceptTheSameEntries) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.entry);
    const std::optional<HttpAllowList> manifest = from_manifest(c.entry);
    HttpPolicy code;
    const std::optional<std::string> error = code.allow.push_back(c.entry);
    EXPECT_EQ(manifest.has_value(), c.normalized.has_value());
    EXPECT_EQ(!error.has_value(), c.normalized.has_value()) << error.value_or("");
    if (!c.normalized) {
      EXPECT_TRUE(code.allow.entries().empty());
      EXPECT_EQ(code.allow.texts(), std::vector<std::string>{c.entry});  // kept as given, matches nothing
      continue;
    }
    ASSERT_TRUE(manifest);
    EXPECT_EQ(*manifest, std::vector<std::string>{*c.normalized});
    EXPECT_EQ(code.allow, std::vector<std::string>{*c.normalized});
    EXPECT_EQ(manifest->entries(), code.allow.entries());
    // Normalizing is idempotent: the normalized text is an entry with the same value.
    const HttpAllowList again = {*c.normalized};
    EXPECT_EQ(again.entries(), code.allow.entries());
  }
}

TEST(AllowEntryEquivalence, TheCapabilityAdmitsTheSameUrlsForBothAndNothingForARefusedEntry) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.entry);
    const HttpAllowList code = {c.entry};
    if (!c.normalized) {
      // Whatever URL the entry seems to name, the capability has no valid entry to match it with.
      EXPECT_EQ(capability_verdict(code, "https://a.example/"),
                "http: no network access is granted (permissions.http.allow has no valid entry)");
      continue;
    }
    const HttpAllowList manifest = from_manifest(c.entry).value_or(HttpAllowList{});
    std::vector<std::string> urls = c.matches;
    const bool dead = c.entry.find("%2f") != std::string::npos;  // see the table
    if (!dead) urls.push_back(as_url(*c.normalized));
    for (const std::string& url : urls) {
      EXPECT_EQ(capability_verdict(code, url), "allowed") << url;
      EXPECT_EQ(capability_verdict(manifest, url), "allowed") << url;
    }
    for (const std::string& url : c.misses) {
      EXPECT_NE(capability_verdict(code, url), "allowed") << url;
      EXPECT_NE(capability_verdict(manifest, url), "allowed") << url;
    }
  }
}

TEST(AllowEntryEquivalence, EveryAcceptedEntryNamesWhatTheRequestParserReadsInIt) {
  // Entries built from every combination of the parts below; each one that validates, written out
  // normalized and parsed as a request URL, has the entry's scheme, host, port and path.
  const std::vector<std::string> schemes = {"http", "HTTPS"};
  const std::vector<std::string> hosts = {"a.example",
                                          "API.Example.COM",
                                          "*.example.org",
                                          "192.0.2.1",
                                          "[2001:DB8::1]",
                                          "[::ffff:192.0.2.1]",
                                          "[2001:db8:0:0:1:0:0:1]",
                                          "localhost",
                                          "xn--bcher-kva.example",
                                          "a-b.c-d.example",
                                          "exa_mple.com",
                                          "127.1"};
  const std::vector<std::string> ports = {"", ":80", ":443", ":8080", ":0", ":65535"};
  const std::vector<std::string> paths = {"",     "/",        "/v1",         "/v1/",  "/a%2fb",
                                          "/x@y", "/~u/(x)/", "/v1/*",       "/%7e/", "/a;b=c,d",
                                          "/?",   "/#",       "/v1/%2e%2e/", "/a b"};
  size_t accepted = 0;
  for (const std::string& scheme : schemes) {
    for (const std::string& host : hosts) {
      for (const std::string& port : ports) {
        for (const std::string& path : paths) {
          const std::string entry = scheme + "://" + host + port + path;
          SCOPED_TRACE(entry);
          const HttpAllowList list = {entry};
          EXPECT_EQ(from_manifest(entry).has_value(), !list.entries().empty());
          if (list.entries().empty()) continue;
          ++accepted;
          const HttpAllowEntry& e = list.entries().front();
          auto parsed = parse_url(as_url(e.text), nullptr);
          ASSERT_TRUE(parsed.ok()) << as_url(e.text) << ": " << parsed.error().message;
          const ParsedUrl& url = *parsed;
          EXPECT_EQ(url.scheme(), e.scheme);
          EXPECT_EQ(url.host(), e.subdomains ? "sub." + e.host : e.host);
          EXPECT_EQ(url.port(), e.port);
          EXPECT_EQ(url.path(), e.path_prefix);
          const bool dead = e.path_prefix.find("%2F") != std::string::npos;
          EXPECT_EQ(Allowlist(list).allows(url), !dead);
        }
      }
    }
  }
  EXPECT_GT(accepted, 300u);  // the grid is mostly valid entries, not mostly refusals
}

}  // namespace
}  // namespace skillbox::capabilities::http
