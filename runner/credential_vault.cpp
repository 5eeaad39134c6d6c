// runner/credential_vault.cpp — CredentialVault (credential_vault.h).
#include "runner/credential_vault.h"

#include <sys/random.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>
#include <variant>

#include "capabilities/http/url_check.h"

namespace skillbox::runner {
namespace {

using json = nlohmann::json;

std::string random_hex() {
  unsigned char bytes[16] = {};
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got < sizeof bytes) throw std::runtime_error("no randomness for credential placeholders");
  std::string out;
  char buf[3];
  for (unsigned char b : bytes) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

bool contains(std::string_view haystack, std::string_view needle) {
  return !needle.empty() && haystack.find(needle) != std::string_view::npos;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

void replace_all(bus::Bytes& b, std::string_view from, std::string_view to) {
  std::string s(b.begin(), b.end());
  if (s.find(from) == std::string::npos) return;
  replace_all(s, from, to);
  b.assign(s.begin(), s.end());
}

HttpAllowList bound_hosts(const std::vector<std::string>& hosts, const std::string& fallback) {
  HttpAllowList list;
  if (!hosts.empty()) {
    for (const std::string& h : hosts) (void)list.push_back(h);
  } else if (!fallback.empty()) {
    (void)list.push_back(fallback);  // an invalid prefix matches nothing: the secret goes nowhere
  }
  return list;
}

}  // namespace

CredentialVault::CredentialVault(const std::optional<SkillCredentials>& credentials, const std::string& id,
                                 const std::vector<BundleSetupMode>& setup_modes) {
  if (!credentials) return;
  if (credentials->oauth) {
    const OAuthCredential& o = *credentials->oauth;
    const std::string nonce = random_hex();
    Secret s{"skillbox-secret:" + id + "/oauth/accessToken/" + nonce, nonce, o.access_token,
             bound_hosts(o.hosts, o.base_url), 0};
    json shown = {{"credentialId", o.credential_id}, {"accessToken", s.placeholder}, {"baseUrl", o.base_url}};
    oauth_json_ = shown.dump(-1, ' ', false, json::error_handler_t::replace);
    secrets_.push_back(std::move(s));
  }
  if (credentials->auth) {
    const AuthCredential& a = *credentials->auth;
    std::string base;
    for (const BundleSetupMode& m : setup_modes)
      if (m.type == a.mode && !m.api_base_url.empty()) base = m.api_base_url;
    json fields = json::object();
    for (const auto& [name, value] : a.credentials) {
      const std::string nonce = random_hex();
      Secret s{"skillbox-secret:" + id + "/auth/" + name + "/" + nonce, nonce, value,
               bound_hosts(a.hosts, base), 1};
      fields[name] = s.placeholder;
      secrets_.push_back(std::move(s));
    }
    json shown = {{"mode", a.mode}, {"credentials", fields}};
    auth_json_ = shown.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

bus::Reply CredentialVault::handle(const bus::CredentialRequest& request) {
  const bool oauth = request.kind == bus::CredentialKind::oauth;
  if (request.revoke) {
    if (oauth) oauth_revoked_ = true;
    return bus::OkReply{};
  }
  if (oauth) return bus::OptionalStringReply{oauth_revoked_ ? std::nullopt : oauth_json_};
  return bus::OptionalStringReply{auth_json_};
}

std::optional<bus::ErrorReply> CredentialVault::prepare(bus::HttpRequest& request,
                                                        bool& carries_secret) const {
  carries_secret = false;
  if (secrets_.empty()) return std::nullopt;
  const std::string_view body(reinterpret_cast<const char*>(request.body.data()), request.body.size());
  for (const Secret& s : secrets_) {
    const auto refuse = [&](const std::string& where) {
      return bus::ErrorReply{bus::ErrorCode::PermissionDenied,
                             "http: the request carries a credential placeholder in " + where +
                                 "; credentials go only into header values of requests to the hosts they are "
                                 "bound to (docs/openhuman.md \"Secrets\")"};
    };
    if (contains(request.url, s.nonce)) return refuse("its URL");
    if (contains(body, s.nonce)) return refuse("its body");
    for (const auto& [name, value] : request.headers)
      if (contains(name, s.nonce)) return refuse("a header name");
  }
  // Placeholders in header values: only to a URL the credential is bound to, and never once revoked.
  auto url = capabilities::http::parse_url(request.url, nullptr);
  for (auto& [name, value] : request.headers) {
    for (const Secret& s : secrets_) {
      if (!contains(value, s.nonce)) continue;
      const bool bound =
          url && !(s.kind == 0 && oauth_revoked_) && capabilities::http::Allowlist(s.hosts).allows(*url);
      if (!bound)
        return bus::ErrorReply{
            bus::ErrorCode::PermissionDenied,
            "http: header \"" + name.substr(0, 64) +
                "\" carries a credential placeholder to a URL its credential is not bound to" +
                (s.kind == 0 && oauth_revoked_ ? " (it was revoked)" : "") + "; the request was not sent"};
      if (contains(value, s.placeholder)) carries_secret = true;
      replace_all(value, s.placeholder, s.value);
    }
  }
  return std::nullopt;
}

void CredentialVault::redact(bus::Reply& reply) const {
  if (secrets_.empty()) return;
  for (const Secret& s : secrets_) {
    if (s.value.empty()) continue;
    if (auto* r = std::get_if<bus::HttpResponseReply>(&reply)) {
      replace_all(r->body, s.value, s.placeholder);
      replace_all(r->status_text, s.value, s.placeholder);
      replace_all(r->url, s.value, s.placeholder);
      for (auto& [name, value] : r->headers) {
        replace_all(name, s.value, s.placeholder);
        replace_all(value, s.value, s.placeholder);
      }
    } else if (auto* e = std::get_if<bus::ErrorReply>(&reply)) {
      replace_all(e->message, s.value, s.placeholder);
    }
  }
}

}  // namespace skillbox::runner
