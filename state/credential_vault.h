// state/credential_vault.h — where a tenant's credentials for OpenHuman bundles are kept.
//
// The operator's secrets by skill id (docs/openhuman.md "Secrets"). The vault only stores them: the
// runner's SecretBroker (runner/secret_broker.h) puts placeholders in front of the skill and real values
// into requests to the hosts they are bound to. Secrets never leave the host process: nothing here is
// sent to a worker.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "skillbox/credentials.h"
#include "skillbox/result.h"

namespace skillbox::state {

class CredentialVault {
 public:
  virtual ~CredentialVault() = default;
  /// The credentials granted to skill `skill_id`, nullopt when it has none. An error (the vault could
  /// not be read) ends the invocation before it starts; its message never holds a secret. Thread-safe.
  [[nodiscard]] virtual Result<std::optional<SkillCredentials>> find(std::string_view skill_id) const = 0;
};

/// A vault holding `credentials` in this process's memory (what `--credentials FILE` loads once).
[[nodiscard]] std::shared_ptr<CredentialVault> make_memory_credential_vault(
    std::map<std::string, SkillCredentials> credentials);

}  // namespace skillbox::state
