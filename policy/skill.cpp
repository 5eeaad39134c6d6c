// policy/skill.cpp — Skill::load: find, read and validate a skill folder.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <system_error>

#include "policy/ceilings.h"
#include "policy/strict_json.h"
#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;

/// True when canonical path `p` is `root` or below it (component-wise, so "/a/bc" is not below "/a/b").
bool is_within(const fs::path& root, const fs::path& p) {
  const auto [r, q] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  return r == root.end();
}

/// Closes a file descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

/// Reads the manifest at canonical path `path`, refusing anything but a regular file of at most
/// kMaxManifestBytes. O_NONBLOCK: a FIFO planted as skill.json must not hang the host.
Result<std::string> read_manifest(const fs::path& path) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (fd.get() < 0) {
    return Error{"skill.json: cannot open: " + std::error_code(errno, std::generic_category()).message()};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Error{"skill.json: not a regular file"};
  std::string text;
  constexpr size_t kCap = policy::kMaxManifestBytes;
  text.resize(kCap + 1);
  size_t used = 0;
  while (used < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + used, text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Error{"skill.json: cannot read: " + std::error_code(errno, std::generic_category()).message()};
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  text.resize(used);
  return text;  // parse_manifest refuses more than kCap bytes with the usual message
}

}  // namespace

Result<Skill> Skill::load(const fs::path& dir) {
  const std::string shown = policy::quote_for_message(dir.string(), 200);
  const std::string prefix = "cannot load skill " + shown + ": ";
  if (dir.empty()) return Error{"cannot load skill: no folder given; pass the folder that holds skill.json"};
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return Error{prefix + "no such folder"};
  if (ec) return Error{prefix + ec.message()};
  if (!fs::is_directory(root, ec)) {
    return Error{prefix + "not a folder; pass the folder that holds skill.json"};
  }

  const fs::path manifest_path = fs::canonical(root / "skill.json", ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      return Error{prefix + "no skill.json in the folder; every skill needs one (see docs/manifest.md)"};
    }
    return Error{prefix + "skill.json: " + ec.message()};
  }
  if (!is_within(root, manifest_path)) {
    return Error{prefix + "skill.json is a symbolic link that leads outside the skill folder"};
  }
  Result<std::string> text = read_manifest(manifest_path);
  if (!text) return Error{prefix + text.error().message};
  Result<Manifest> manifest = parse_manifest(*text);
  if (!manifest) return manifest.error();

  // The entry must be a regular file of the skill itself: symbolic links may not lead out of the folder
  // (a skill could otherwise make the host read and run any file it can name).
  const std::string entry = policy::quote_for_message(manifest->entry, 200);
  const fs::path entry_path = fs::canonical(root / manifest->entry, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      return Error{"skill.json: entry: file " + entry +
                   " not found in the skill folder; create it or fix the path"};
    }
    return Error{"skill.json: entry: " + entry + ": " + ec.message()};
  }
  if (!is_within(root, entry_path)) {
    return Error{
        "skill.json: entry: " + entry +
        " leads outside the skill folder (through a symbolic link); the entry must be a file of the skill"};
  }
  if (!fs::is_regular_file(entry_path, ec)) {
    return Error{"skill.json: entry: " + entry + " is not a regular file"};
  }
  return Skill(root, std::move(*manifest));
}

}  // namespace skillbox
