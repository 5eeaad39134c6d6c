// server/skill_digest.cpp — see skill_digest.h.
#include "server/skill_digest.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/mutex.h"
#include "base/unique_fd.h"

namespace skillbox::server {
namespace {

constexpr std::string_view kDigestHeader = "skillbox-skill-digest-1\n";

/// One entry of the canonical form.
struct Entry {
  char type = 'f';
  std::string path;
  std::string content;
};

void update(crypto_hash_sha256_state& state, std::string_view bytes) {
  crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

void update_length(crypto_hash_sha256_state& state, uint64_t n) {
  std::array<unsigned char, 8> be{};
  for (size_t i = 0; i < 8; ++i) be[7 - i] = static_cast<unsigned char>(n >> (8 * i));
  crypto_hash_sha256_update(&state, be.data(), be.size());
}

void update_entry(crypto_hash_sha256_state& state, char type, std::string_view path,
                  std::string_view content) {
  update(state, std::string_view(&type, 1));
  update_length(state, path.size());
  update(state, path);
  update_length(state, content.size());
  update(state, content);
}

std::string hex(const std::array<unsigned char, crypto_hash_sha256_BYTES>& hash) {
  std::string out(hash.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), hash.data(), hash.size());
  out.pop_back();
  return out;
}

/// The bytes of the regular file `path`, at most `budget` of them (std::nullopt beyond, or on error).
std::optional<std::string> read_regular(const std::filesystem::path& path, uint64_t budget) {
  // A FIFO swapped in for the file must not block the listing: O_NONBLOCK, then fstat.
  const base::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  if (static_cast<uint64_t>(st.st_size) > budget) return std::nullopt;
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // shrank meanwhile, or failed
    got += static_cast<size_t>(n);
  }
  return out;
}

/// Every file and symlink below `dir` as canonical entries, or std::nullopt (see folder_digest).
std::optional<std::vector<Entry>> folder_entries(const std::filesystem::path& dir) {
  std::vector<Entry> entries;
  uint64_t bytes = 0;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (entries.size() >= kMaxDigestEntries) return std::nullopt;
    const std::filesystem::file_status st = it->symlink_status(ec);
    if (ec) return std::nullopt;
    Entry e;
    e.path = it->path().lexically_relative(dir).generic_string();
    if (std::filesystem::is_symlink(st)) {
      e.type = 'l';
      e.content = std::filesystem::read_symlink(it->path(), ec).native();
      if (ec) return std::nullopt;
    } else if (std::filesystem::is_regular_file(st)) {
      std::optional<std::string> content = read_regular(it->path(), kMaxDigestBytes - bytes);
      if (!content) return std::nullopt;
      e.content = std::move(*content);
    } else {
      continue;  // directories are implicit; FIFOs and devices hold no code
    }
    bytes += e.path.size() + e.content.size();
    if (bytes > kMaxDigestBytes) return std::nullopt;
    entries.push_back(std::move(e));
  }
  if (ec) return std::nullopt;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.path < b.path; });
  return entries;
}

/// What lstat(2) says of every entry below `dir` (path, inode, size, modification and change times),
/// hashed: any write, rename or replacement below it changes the change time of what it touched, so
/// an equal fingerprint means the same files. std::nullopt past kMaxDigestEntries or on error.
std::optional<std::string> fingerprint(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  std::error_code ec;
  std::filesystem::recursive_directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (lines.size() >= kMaxDigestEntries) return std::nullopt;
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) return std::nullopt;
    lines.push_back(it->path().lexically_relative(dir).native() + '\0' + std::to_string(st.st_mode) + ' ' +
                    std::to_string(st.st_ino) + ' ' + std::to_string(st.st_size) + ' ' +
                    std::to_string(st.st_mtim.tv_sec) + '.' + std::to_string(st.st_mtim.tv_nsec) + ' ' +
                    std::to_string(st.st_ctim.tv_sec) + '.' + std::to_string(st.st_ctim.tv_nsec));
  }
  if (ec) return std::nullopt;
  std::sort(lines.begin(), lines.end());
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  for (const std::string& line : lines) update_entry(state, 's', line, "");
  std::array<unsigned char, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256_final(&state, hash.data());
  return hex(hash);
}

/// Digests of folders by path, with the fingerprint they were computed at: a run of a folder skill
/// reads its files' metadata, not their bytes, while they do not change.
class DigestCache {
 public:
  std::optional<std::string> find(const std::string& dir, const std::string& print) {
    base::MutexLock lock(mu_);
    const auto it = entries_.find(dir);
    if (it == entries_.end() || it->second.first != print) return std::nullopt;
    return it->second.second;
  }
  void put(const std::string& dir, const std::string& print, const std::string& digest) {
    base::MutexLock lock(mu_);
    if (entries_.size() >= kMaxCached)
      entries_.clear();  // a crude bound: far more folders than any server has
    entries_[dir] = {print, digest};
  }

 private:
  static constexpr size_t kMaxCached = 4096;
  base::Mutex mu_;
  std::map<std::string, std::pair<std::string, std::string>> entries_ SKILLBOX_GUARDED_BY(mu_);
};

DigestCache& cache() {
  static DigestCache* const instance = new DigestCache();  // never destroyed: used by run threads to the end
  return *instance;
}

}  // namespace

std::string skill_digest(const SkillFiles& files) {
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  update(state, kDigestHeader);
  for (const auto& [path, content] : files) update_entry(state, 'f', path, content);
  std::array<unsigned char, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256_final(&state, hash.data());
  return hex(hash);
}

std::optional<std::string> folder_digest(const std::filesystem::path& dir) {
  const std::optional<std::string> before = fingerprint(dir);
  if (!before) return std::nullopt;
  if (std::optional<std::string> known = cache().find(dir.native(), *before)) return known;
  const std::optional<std::vector<Entry>> entries = folder_entries(dir);
  if (!entries) return std::nullopt;
  crypto_hash_sha256_state state;
  crypto_hash_sha256_init(&state);
  update(state, kDigestHeader);
  for (const Entry& e : *entries) update_entry(state, e.type, e.path, e.content);
  std::array<unsigned char, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256_final(&state, hash.data());
  std::string digest = hex(hash);
  // Kept only when nothing changed while the bytes were read (a write meanwhile: computed afresh next time).
  if (fingerprint(dir) == before) cache().put(dir.native(), *before, digest);
  return digest;
}

bool is_digest(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace skillbox::server
