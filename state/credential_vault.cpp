// state/credential_vault.cpp — the in-memory CredentialVault.
#include "state/credential_vault.h"

#include <utility>

namespace skillbox::state {
namespace {

class MemoryCredentialVault final : public CredentialVault {
 public:
  explicit MemoryCredentialVault(std::map<std::string, SkillCredentials> credentials)
      : credentials_(std::move(credentials)) {}

  Result<std::optional<SkillCredentials>> find(std::string_view skill_id) const override {
    // Read-only after construction: safe from any thread.
    if (auto it = credentials_.find(std::string(skill_id)); it != credentials_.end())
      return std::optional<SkillCredentials>(it->second);
    return std::optional<SkillCredentials>();
  }

 private:
  const std::map<std::string, SkillCredentials> credentials_;
};

}  // namespace

std::shared_ptr<CredentialVault> make_memory_credential_vault(
    std::map<std::string, SkillCredentials> credentials) {
  return std::make_shared<MemoryCredentialVault>(std::move(credentials));
}

}  // namespace skillbox::state
