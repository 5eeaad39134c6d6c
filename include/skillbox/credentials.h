// skillbox/credentials.h — credentials of OpenHuman bundles, held by the host and never by the skill.
//
// The operator supplies them in a JSON file (`skillbox call --credentials FILE`, docs/openhuman.md
// "Secrets"), one entry per skill id:
//
//   { "notion": { "auth":  { "mode": "self_hosted", "credentials": { "api_token": "..." },
//                            "hosts": ["https://api.notion.com/"] } },
//     "gmail":  { "oauth": { "credentialId": "c1", "accessToken": "...",
//                            "baseUrl": "https://proxy.example/gmail", "hosts": ["https://proxy.example/"] }
//                            } }
//
// Every string inside `credentials`, and `accessToken`, is a secret. `hosts` are URL prefixes in
// allowlist syntax (docs/manifest.md "Allow entries"): the only places the real value may be sent.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "skillbox/result.h"

namespace skillbox {

/// A managed OAuth credential (`oauth`).
struct OAuthCredential {
  std::string credential_id;
  std::string access_token;  // secret
  std::string base_url;      // oauth.fetch(path) goes to base_url + path
  /// Prefixes the token may be sent to. Empty: the prefix of base_url (its origin and path).
  std::vector<std::string> hosts;
};

/// A self-hosted or text credential (`auth`).
struct AuthCredential {
  std::string mode;                                // "self_hosted", "text", "managed"
  std::map<std::string, std::string> credentials;  // every value is a secret
  /// Prefixes the values may be sent to. Empty: the apiBaseUrl of the bundle's setup mode `mode`.
  std::vector<std::string> hosts;
};

struct SkillCredentials {
  std::optional<OAuthCredential> oauth;
  std::optional<AuthCredential> auth;
};

/// Parses a credentials document (the shape above; unknown keys are errors, since a misspelt
/// `hosts` would silently bind a secret nowhere). Messages name the key path and never show a
/// secret value.
Result<std::map<std::string, SkillCredentials>> parse_credentials(std::string_view json_text);

/// The credentials document (the shape above, compact JSON) that parse_credentials reads back as
/// `credentials`: for storing them elsewhere (the PostgreSQL vault seals one skill's document). Holds
/// the secrets: never log it.
[[nodiscard]] std::string credentials_document(const std::map<std::string, SkillCredentials>& credentials);

/// Reads (regular file, at most 1 MiB) and parses a credentials file.
Result<std::map<std::string, SkillCredentials>> load_credentials_file(const std::filesystem::path& file);

}  // namespace skillbox
