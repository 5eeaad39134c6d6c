// pg/credential_vault.h — OpenHuman bundles' credentials in PostgreSQL, sealed (docs/scale-out.md
// "Credentials on PostgreSQL").
//
// One row per (tenant, skill) in table `credentials`: the skill's credentials document
// ({"<skill>": {"oauth": ..., "auth": ...}}, skillbox/credentials.h) sealed with XChaCha20-Poly1305
// (libsodium's crypto_aead_xchacha20poly1305_ietf) under the operator's vault key, a fresh random nonce
// per row, and the tenant and the skill as associated data: a row copied to another tenant or skill, or
// changed at all, does not open. The key never reaches the database; each row names the key that
// sealed it by a key id (a keyed BLAKE2b hash of nothing, which reveals nothing of the key), so that a
// server started with another key says so instead of "cannot decrypt".
//
// The vault key is a file the operator names: 64 hex digits (32 bytes; `openssl rand -hex 32`), on its
// own or with white space around, readable by its owner only (mode 0600 or 0400).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pg/connection.h"
#include "pg/pool.h"
#include "skillbox/credentials.h"
#include "skillbox/result.h"
#include "state/credential_vault.h"

namespace skillbox::pg {

/// The operator's vault key, wiped from memory when destroyed.
class VaultKey {
 public:
  /// Reads `file`. Errors name the file and say what is wrong (not a regular file, readable by group
  /// or others, not 64 hex digits); they never show a byte of it.
  static Result<std::shared_ptr<const VaultKey>> load(const std::filesystem::path& file);
  /// A key from its 32 bytes (tests).
  explicit VaultKey(const std::array<uint8_t, 32>& bytes);
  ~VaultKey();
  VaultKey(const VaultKey&) = delete;
  VaultKey& operator=(const VaultKey&) = delete;

  /// 16 hex digits naming the key (not secret).
  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const std::array<uint8_t, 32>& bytes() const { return bytes_; }

 private:
  std::array<uint8_t, 32> bytes_{};
  std::string id_;
};

/// Seals and stores `credentials` as `skill`'s of `tenant`, replacing what was there. `skill` must be a
/// skill id. Errors never show a secret.
PgResult<void> put_credentials(Connection& conn, const VaultKey& key, const std::string& tenant,
                               const std::string& skill, const SkillCredentials& credentials);
/// Removes `skill`'s credentials of `tenant`; false when there were none.
PgResult<bool> remove_credentials(Connection& conn, const std::string& tenant, const std::string& skill);
/// The skill ids of `tenant` that have credentials, sorted, with the id of the key that sealed each.
PgResult<std::vector<std::pair<std::string, std::string>>> list_credentials(Connection& conn,
                                                                            const std::string& tenant);

/// The vault of `tenant` in the database of `pool`, opened with `key`. find() of an id that is not a
/// skill id, or has no row, is "none"; a row sealed with another key, or that does not open, is an
/// error naming the tenant and the skill (never a secret).
[[nodiscard]] std::shared_ptr<state::CredentialVault> make_pg_credential_vault(
    std::shared_ptr<Pool> pool, std::string tenant, std::shared_ptr<const VaultKey> key);

}  // namespace skillbox::pg
