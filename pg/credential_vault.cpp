// pg/credential_vault.cpp — see credential_vault.h.
#include "pg/credential_vault.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "base/skill_id.h"
#include "pg/bytea.h"

namespace skillbox::pg {
namespace {

constexpr size_t kKeyBytes = crypto_aead_xchacha20poly1305_ietf_KEYBYTES;
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
static_assert(kKeyBytes == 32);

const std::string kPut =
    "INSERT INTO credentials (tenant, skill, key_id, nonce, sealed) VALUES ($1, $2, $3, $4::bytea, "
    "$5::bytea) "
    "ON CONFLICT (tenant, skill) DO UPDATE SET key_id = EXCLUDED.key_id, nonce = EXCLUDED.nonce, "
    "sealed = EXCLUDED.sealed, updated_at = now()";
const std::string kRemove = "DELETE FROM credentials WHERE tenant = $1 AND skill = $2";
const std::string kList =
    "SELECT skill, key_id FROM credentials WHERE tenant = $1 ORDER BY skill COLLATE \"C\"";
const std::string kFind = "SELECT key_id, nonce, sealed FROM credentials WHERE tenant = $1 AND skill = $2";

void init_sodium() {
  static const int ready = sodium_init();
  if (ready < 0) std::abort();
}

/// The associated data of a row: what it belongs to. A row moved to another tenant or skill does not
/// open.
std::string associated_data(const std::string& tenant, const std::string& skill) {
  return "skillbox credentials v1\n" + tenant + "\n" + skill;
}

const unsigned char* u8(const std::string& s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string hex(const unsigned char* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class PgCredentialVault final : public state::CredentialVault {
 public:
  PgCredentialVault(std::shared_ptr<Pool> pool, std::string tenant, std::shared_ptr<const VaultKey> key)
      : pool_(std::move(pool)), tenant_(std::move(tenant)), key_(std::move(key)) {}

  Result<std::optional<SkillCredentials>> find(std::string_view skill_id) const override {
    // No row can have another id (put_credentials refuses it); and an id with a NUL would reach the
    // server cut short.
    if (!base::is_valid_skill_id(skill_id)) return std::optional<SkillCredentials>();
    const std::string skill(skill_id);
    auto conn = pool_->acquire(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    if (!conn) return Error{"the credential vault could not be read: " + conn.error().message};
    auto rows = (*conn)->exec("reading credentials", kFind, {tenant_, skill});
    if (!rows) return Error{"the credential vault could not be read: " + rows.error().message};
    if (rows->empty()) return std::optional<SkillCredentials>();
    const std::string where = "the credentials of skill " + skill + " (tenant " + tenant_ + ")";
    const std::optional<std::string> key_id = rows->at(0, 0);
    if (key_id != key_->id()) {
      return Error{where + " were sealed with another vault key (key id " + key_id.value_or("none") +
                   "); this server's key has id " + key_->id() +
                   ": start it with the key that sealed them, or store them again with this one"};
    }
    const std::optional<std::string> nonce = from_bytea(rows->at(0, 1));
    const std::optional<std::string> sealed = from_bytea(rows->at(0, 2));
    if (!nonce || nonce->size() != kNonceBytes || !sealed ||
        sealed->size() < crypto_aead_xchacha20poly1305_ietf_ABYTES) {
      return Error{where + " are damaged in the database (their row is not what skillbox writes)"};
    }
    std::string plain(sealed->size() - crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
    unsigned long long plain_size = 0;
    const std::string ad = associated_data(tenant_, skill);
    const int opened = crypto_aead_xchacha20poly1305_ietf_decrypt(
        reinterpret_cast<unsigned char*>(plain.data()), &plain_size, nullptr, u8(*sealed), sealed->size(),
        u8(ad), ad.size(), u8(*nonce), key_->bytes().data());
    if (opened != 0) {
      return Error{where +
                   " do not open with this server's vault key: the row was changed, or copied from "
                   "another tenant or skill; store them again"};
    }
    plain.resize(static_cast<size_t>(plain_size));
    Result<std::map<std::string, SkillCredentials>> doc = parse_credentials(plain);
    sodium_memzero(plain.data(), plain.size());
    if (!doc || doc->size() != 1 || doc->begin()->first != skill) {
      return Error{where + " opened but are not a credentials document for that skill; store them again"};
    }
    return std::optional<SkillCredentials>(std::move(doc->begin()->second));
  }

 private:
  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
  const std::shared_ptr<const VaultKey> key_;
};

}  // namespace

VaultKey::VaultKey(const std::array<uint8_t, 32>& bytes) : bytes_(bytes) {
  init_sodium();
  static constexpr std::string_view kIdContext = "skillbox vault key id";
  std::array<unsigned char, 8> id{};
  crypto_generichash(id.data(), id.size(), reinterpret_cast<const unsigned char*>(kIdContext.data()),
                     kIdContext.size(), bytes_.data(), bytes_.size());
  id_ = hex(id.data(), id.size());
}

VaultKey::~VaultKey() {
  sodium_memzero(bytes_.data(), bytes_.size());
}

Result<std::shared_ptr<const VaultKey>> VaultKey::load(const std::filesystem::path& file) {
  const std::string shown = "the vault key file " + file.string();
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return Error{shown + " cannot be opened: " + std::string(std::strerror(errno))};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{shown + " is not a regular file"};
  }
  if (st.st_uid != ::geteuid()) {
    ::close(fd);
    return Error{shown + " belongs to another user (uid " + std::to_string(st.st_uid) +
                 "); the vault key must be the file of the user that runs skillbox"};
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Error{shown + " can be read by other users (mode " + mode +
                 "); make it the owner's only: chmod 600 " + file.string()};
  }
  std::array<char, 256> text{};
  ssize_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - static_cast<size_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += n;
    if (static_cast<size_t>(got) == text.size()) break;
  }
  ::close(fd);
  std::array<uint8_t, 32> bytes{};
  size_t digits = 0;
  bool bad = static_cast<size_t>(got) == text.size();  // longer than any key file with white space
  for (ssize_t i = 0; i < got && !bad; ++i) {
    const char c = text[static_cast<size_t>(i)];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    const int v = hex_digit(c);
    if (v < 0 || digits >= 64) {
      bad = true;
      break;
    }
    bytes[digits / 2] = static_cast<uint8_t>(digits % 2 == 0 ? v << 4 : bytes[digits / 2] | v);
    ++digits;
  }
  sodium_memzero(text.data(), text.size());
  if (bad || digits != 64) {
    sodium_memzero(bytes.data(), bytes.size());
    return Error{shown +
                 " must hold 64 hex digits (32 bytes) and nothing else but white space; make one with "
                 "'openssl rand -hex 32 > FILE'"};
  }
  auto key = std::make_shared<const VaultKey>(bytes);
  sodium_memzero(bytes.data(), bytes.size());
  return std::shared_ptr<const VaultKey>(std::move(key));
}

PgResult<void> put_credentials(Connection& conn, const VaultKey& key, const std::string& tenant,
                               const std::string& skill, const SkillCredentials& credentials) {
  init_sodium();
  if (!base::is_valid_skill_id(skill))
    return PgError{"", "\"" + skill.substr(0, 80) + "\" is not a skill id; nothing was stored", false};
  std::string plain = credentials_document({{skill, credentials}});
  std::string nonce(kNonceBytes, '\0');
  randombytes_buf(nonce.data(), nonce.size());
  std::string sealed(plain.size() + crypto_aead_xchacha20poly1305_ietf_ABYTES, '\0');
  unsigned long long sealed_size = 0;
  const std::string ad = associated_data(tenant, skill);
  crypto_aead_xchacha20poly1305_ietf_encrypt(reinterpret_cast<unsigned char*>(sealed.data()), &sealed_size,
                                             u8(plain), plain.size(), u8(ad), ad.size(), nullptr, u8(nonce),
                                             key.bytes().data());
  sodium_memzero(plain.data(), plain.size());
  sealed.resize(static_cast<size_t>(sealed_size));
  auto stored =
      conn.exec("storing credentials", kPut, {tenant, skill, key.id(), to_bytea(nonce), to_bytea(sealed)});
  if (!stored) return stored.error();
  return {};
}

PgResult<bool> remove_credentials(Connection& conn, const std::string& tenant, const std::string& skill) {
  auto removed = conn.exec("removing credentials", kRemove, {tenant, skill});
  if (!removed) return removed.error();
  return removed->affected > 0;
}

PgResult<std::vector<std::pair<std::string, std::string>>> list_credentials(Connection& conn,
                                                                            const std::string& tenant) {
  auto rows = conn.exec("listing credentials", kList, {tenant});
  if (!rows) return rows.error();
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& row : rows->rows) out.emplace_back(row.at(0).value_or(""), row.at(1).value_or(""));
  return out;
}

std::shared_ptr<state::CredentialVault> make_pg_credential_vault(std::shared_ptr<Pool> pool,
                                                                 std::string tenant,
                                                                 std::shared_ptr<const VaultKey> key) {
  return std::make_shared<PgCredentialVault>(std::move(pool), std::move(tenant), std::move(key));
}

}  // namespace skillbox::pg
