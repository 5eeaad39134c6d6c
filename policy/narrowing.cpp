// policy/narrowing.cpp — per-run narrowing of a skill's permissions (PolicyNarrowing, skillbox/policy.h).
//
// The allow list is narrowed by intersecting entries, so that the result is an ordinary allow list:
// every reader of `http.allow` (the request check, each redirect hop, the origin map) applies the
// narrowing without knowing it exists. Each allow entry matches a "subtree" of URLs (one scheme and
// port, one host or every subdomain of one, one path prefix on segment boundaries), so two entries
// either do not overlap or one's set holds the other's, host part and path part each; the
// intersection is then the narrower one, rebuilt as text and parsed again by the one entry parser.
#include <optional>
#include <string>

#include "policy/http_allow.h"

namespace skillbox {
namespace {

// Whether every host `inner` matches is also matched by `outer` (hosts of one entry each).
bool host_within(const HttpAllowEntry& inner, const HttpAllowEntry& outer) {
  const auto ends_with_dot = [](const std::string& h, const std::string& suffix) {
    return h.size() > suffix.size() + 1 && h.compare(h.size() - suffix.size(), suffix.size(), suffix) == 0 &&
           h[h.size() - suffix.size() - 1] == '.';
  };
  if (!outer.subdomains) return !inner.subdomains && inner.host == outer.host;
  // outer is "*.H": any host ending in ".H"; a wildcard inner "*.G" is within when G is H or ends in ".H".
  if (inner.subdomains) return inner.host == outer.host || ends_with_dot(inner.host, outer.host);
  return ends_with_dot(inner.host, outer.host);
}

// Whether every path `inner` matches is also matched by `outer` (the rule of Allowlist::allows:
// "/" matches everything, "/a/" what starts with it, "/a" itself and what starts with "/a/").
bool path_within(const std::string& inner, const std::string& outer) {
  if (outer == "/") return true;
  if (outer.back() == '/') return inner.starts_with(outer);
  return inner == outer || inner.starts_with(outer + "/");
}

// The entry matching exactly what both match, or nullopt when they match nothing in common.
std::optional<HttpAllowEntry> intersect(const HttpAllowEntry& a, const HttpAllowEntry& b) {
  if (a.scheme != b.scheme || a.port != b.port) return std::nullopt;
  const HttpAllowEntry* host = host_within(a, b) ? &a : host_within(b, a) ? &b : nullptr;
  const std::string* path = path_within(a.path_prefix, b.path_prefix)   ? &a.path_prefix
                            : path_within(b.path_prefix, a.path_prefix) ? &b.path_prefix
                                                                        : nullptr;
  if (host == nullptr || path == nullptr) return std::nullopt;
  const std::string text = host->scheme + "://" + (host->subdomains ? "*." : "") + host->host + ":" +
                           std::to_string(host->port) + *path;
  auto parsed = policy::parse_http_allow_entry(text);
  if (!parsed) return std::nullopt;  // cannot happen for parts of two valid entries; matches nothing
  return *parsed;
}

FsMode meet(FsMode a, FsMode b) {
  const auto bits = [](FsMode m) {
    return (m == FsMode::read || m == FsMode::readwrite ? 1 : 0) |
           (m == FsMode::write || m == FsMode::readwrite ? 2 : 0);
  };
  switch (bits(a) & bits(b)) {
    case 1:
      return FsMode::read;
    case 2:
      return FsMode::write;
    case 3:
      return FsMode::readwrite;
    default:
      return FsMode::none;
  }
}

}  // namespace

std::optional<std::string> narrowing_error(const PolicyNarrowing& narrowing) {
  for (const std::string& text : narrowing.allow_http) {
    if (auto parsed = policy::parse_http_allow_entry(text); !parsed)
      return "allow-http entry \"" + text + "\": " + parsed.error().message;
  }
  return std::nullopt;
}

Policy narrow_policy(Policy policy, const PolicyNarrowing& narrowing) {
  if (narrowing.deny_net) {
    policy.http.allow.clear();
    policy.http.allow_narrowed = true;
  } else if (!narrowing.allow_http.empty()) {
    HttpAllowList asked_list;  // each asked text parsed once; an invalid one adds no entry
    for (const std::string& text : narrowing.allow_http) (void)asked_list.push_back(text);
    HttpAllowList narrowed;
    for (const HttpAllowEntry& granted : policy.http.allow.entries()) {
      for (const HttpAllowEntry& asked : asked_list.entries()) {
        if (auto both = intersect(granted, asked)) {
          bool seen = false;
          for (const HttpAllowEntry& e : narrowed.entries()) seen = seen || e == *both;
          if (!seen) (void)narrowed.push_back(both->text);
        }
      }
    }
    policy.http.allow = std::move(narrowed);
    policy.http.allow_narrowed = true;
  }
  if (narrowing.fs_mode) {
    const FsMode mode = meet(policy.fs.mode, *narrowing.fs_mode);
    if (mode != policy.fs.mode) {
      policy.fs.mode = mode;
      policy.fs.mode_narrowed = true;
    }
  }
  if (narrowing.deny_env) {
    policy.env.clear();
    policy.env_narrowed = true;
  }
  return policy;
}

}  // namespace skillbox
