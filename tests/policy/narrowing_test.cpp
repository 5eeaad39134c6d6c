// Per-run narrowing of permissions (narrow_policy, skillbox/policy.h): it only ever takes away. The
// allow list is the entry-by-entry intersection, checked here against the matcher the http capability
// uses, so "narrowed" means "matches no URL the manifest's list does not match".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capabilities/http/url_check.h"
#include "skillbox/policy.h"

namespace skillbox {
namespace {

std::vector<std::string> narrowed_allow(const std::vector<std::string>& manifest,
                                        const std::vector<std::string>& asked) {
  Policy p;
  p.http.allow = manifest;
  PolicyNarrowing n;
  n.allow_http = asked;
  return narrow_policy(p, n).http.allow.texts();
}

bool allows(const HttpAllowList& list, const std::string& url) {
  auto parsed = capabilities::http::parse_url(url, nullptr);
  return parsed && capabilities::http::Allowlist(list).allows(*parsed);
}

TEST(PolicyNarrowing, TheAllowListIsTheIntersectionOfBothLists) {
  using V = std::vector<std::string>;
  EXPECT_EQ(narrowed_allow({"https://api.example.com/"}, {"https://api.example.com/v1/"}),
            V{"https://api.example.com/v1/"});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/v1/"}, {"https://api.example.com/"}),
            V{"https://api.example.com/v1/"});
  EXPECT_EQ(narrowed_allow({"https://*.example.com/"}, {"https://api.example.com/x"}),
            V{"https://api.example.com/x"});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/"}, {"https://*.example.com/"}),
            V{"https://api.example.com/"});
  EXPECT_EQ(narrowed_allow({"https://*.example.com/"}, {"https://*.eu.example.com/"}),
            V{"https://*.eu.example.com/"});
  // No overlap: another scheme, port, host, sibling path, or the wildcard's own apex.
  EXPECT_EQ(narrowed_allow({"https://api.example.com/"}, {"http://api.example.com/"}), V{});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/"}, {"https://api.example.com:8443/"}), V{});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/"}, {"https://evil.example/"}), V{});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/a/"}, {"https://api.example.com/b/"}), V{});
  EXPECT_EQ(narrowed_allow({"https://*.example.com/"}, {"https://example.com/"}), V{});
  EXPECT_EQ(narrowed_allow({"https://api.example.com/v1"}, {"https://api.example.com/v10"}), V{});
  // Several entries each way: every overlapping pair, once.
  EXPECT_EQ(narrowed_allow({"https://a.example/", "https://b.example/"},
                           {"https://b.example/x/", "https://a.example/", "https://a.example/"}),
            (V{"https://a.example/", "https://b.example/x/"}));
}

TEST(PolicyNarrowing, ANarrowedListMatchesOnlyWhatBothListsMatch) {
  const std::vector<std::string> manifest = {"https://*.example.com/api/", "http://127.0.0.1:8080/"};
  const std::vector<std::string> asked = {"https://eu.example.com/", "http://127.0.0.1:8080/v1",
                                          "https://other.example/"};
  Policy p;
  p.http.allow = manifest;
  PolicyNarrowing n;
  n.allow_http = asked;
  const Policy narrowed = narrow_policy(p, n);
  EXPECT_TRUE(narrowed.http.allow_narrowed);
  HttpAllowList m = manifest, a = asked;
  for (const char* url :
       {"https://eu.example.com/api/x", "https://eu.example.com/", "https://us.example.com/api/x",
        "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/x", "http://127.0.0.1:8080/v2",
        "http://127.0.0.1:8080/v1x", "https://other.example/", "https://x.eu.example.com/api/"}) {
    EXPECT_EQ(allows(narrowed.http.allow, url), allows(m, url) && allows(a, url)) << url;
  }
}

TEST(PolicyNarrowing, DenyNetFsModeAndDenyEnvOnlyTakeAway) {
  Policy p;
  p.http.allow = {"https://api.example.com/"};
  p.fs.mode = FsMode::readwrite;
  p.env = {"API_KEY"};
  PolicyNarrowing n;
  n.deny_net = true;
  n.fs_mode = FsMode::read;
  n.deny_env = true;
  Policy q = narrow_policy(p, n);
  EXPECT_TRUE(q.http.allow.empty());
  EXPECT_TRUE(q.http.allow_narrowed);
  EXPECT_EQ(q.fs.mode, FsMode::read);
  EXPECT_TRUE(q.fs.mode_narrowed);
  EXPECT_TRUE(q.env.empty());
  EXPECT_TRUE(q.env_narrowed);

  // The mode is the meet of both: never more than the manifest grants.
  const FsMode modes[] = {FsMode::none, FsMode::read, FsMode::write, FsMode::readwrite};
  const auto grants = [](FsMode m, bool write) {
    return write ? (m == FsMode::write || m == FsMode::readwrite)
                 : (m == FsMode::read || m == FsMode::readwrite);
  };
  for (FsMode granted : modes) {
    for (FsMode asked : modes) {
      Policy g;
      g.fs.mode = granted;
      PolicyNarrowing a;
      a.fs_mode = asked;
      const FsMode got = narrow_policy(g, a).fs.mode;
      for (bool write : {false, true})
        EXPECT_EQ(grants(got, write), grants(granted, write) && grants(asked, write))
            << to_string(granted) << " narrowed by " << to_string(asked);
    }
  }
  // Nothing asked: nothing changes.
  Policy same = narrow_policy(p, PolicyNarrowing{});
  EXPECT_EQ(same.http.allow, p.http.allow);
  EXPECT_FALSE(same.http.allow_narrowed);
  EXPECT_EQ(same.fs.mode, FsMode::readwrite);
  EXPECT_FALSE(same.fs.mode_narrowed);
}

TEST(PolicyNarrowing, AnInvalidAllowEntryIsNamed) {
  PolicyNarrowing n;
  n.allow_http = {"https://ok.example/", "ftp://files.example/"};
  const auto problem = narrowing_error(n);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "allow-http entry \"ftp://files.example/\": the scheme must be http or https");
  n.allow_http = {"https://ok.example/"};
  EXPECT_FALSE(narrowing_error(n).has_value());
}

}  // namespace
}  // namespace skillbox
