// runner/credential_vault.h — the credentials of one invocation, and the only place their secrets live.
//
// The bundle asks for its credential (bus::CredentialRequest) and gets the same shape with every
// secret replaced by a placeholder unique to this invocation ("skillbox-secret:<id>/<kind>/<field>/"
// followed by 128 random bits in hex). The http route of the HostEndpoint hands each request to
// prepare() before the http capability sees it: a placeholder in a header value of a request whose
// URL matches the hosts its credential is bound to becomes the real value; a placeholder anywhere else
// (another host, the URL, the body, a header name) refuses the request. Responses pass through
// redact() before they reach the sandbox: any secret a server echoes is replaced by its placeholder.
// In worker mode the vault lives in the supervisor, beside the capabilities: secrets never cross into
// the worker. docs/openhuman.md "Secrets".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bus/messages.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

class CredentialVault {
 public:
  /// `credentials`: the operator's entry for skill `skill_id` (none: the bundle sees null).
  /// `setup_modes`: the bundle's, for the apiBaseUrl an auth credential without `hosts` is bound to.
  CredentialVault(const std::optional<SkillCredentials>& credentials, const std::string& skill_id,
                  const std::vector<BundleSetupMode>& setup_modes);

  /// getCredential (JSON with placeholders, or null) and revoke (OkReply; the credential is gone for
  /// the rest of the invocation: getCredential is null and its placeholders are no longer replaced).
  bus::Reply handle(const bus::CredentialRequest& request);

  /// Replaces bound placeholders in header values of `request`. Returns why the request is refused
  /// (PermissionDenied) when it carries a placeholder anywhere it may not go. Sets `carries_secret`
  /// when a real value was put in.
  std::optional<bus::ErrorReply> prepare(bus::HttpRequest& request, bool& carries_secret) const;

  /// Replaces every secret in a reply (body, headers, status text, URL, error message) by its
  /// placeholder. Thread-safe (called on the http I/O thread): reads only what the constructor made.
  void redact(bus::Reply& reply) const;

  /// True when there is no secret at all (no request needs looking at).
  [[nodiscard]] bool empty() const { return secrets_.empty(); }

 private:
  struct Secret {
    std::string placeholder;
    std::string
        nonce;  // the placeholder's random part: survives percent-encoding, so it is what is looked for
    std::string value;
    HttpAllowList hosts;  // where `value` may be sent
    int kind = 0;         // 0 oauth, 1 auth
  };
  std::vector<Secret> secrets_;
  std::optional<std::string> oauth_json_;  // what getCredential returns
  std::optional<std::string> auth_json_;
  bool oauth_revoked_ = false;
};

}  // namespace skillbox::runner
