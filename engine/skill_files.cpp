#include "engine/skill_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace skillbox::engine {
namespace {

Error error(std::string message) {
  return Error{std::move(message)};
}

std::string quote_name(std::string_view s) {
  // Names come from skill code: keep messages short and free of control characters.
  constexpr size_t kMaxShown = 200;
  std::string out = "'";
  for (char c : s.substr(0, kMaxShown)) out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
  if (s.size() > kMaxShown) out += "...";
  out += "'";
  return out;
}

// Appends the components of `path` to `parts`, resolving "." and "..". False if ".." climbs above
// the skill folder.
bool append_components(std::vector<std::string_view>& parts, std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  return true;
}

std::string join(const std::vector<std::string_view>& parts) {
  std::string out;
  for (std::string_view p : parts) {
    if (!out.empty()) out += '/';
    out += p;
  }
  return out;
}

int open_beneath(int dir_fd, const std::string& name) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
  // symlink escape: the kernel resolves every component beneath dir_fd and refuses ".." or a link
  // that leaves it (EXDEV); magic links (/proc/self/fd/...) are refused outright.
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof(how));
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);

  // openat2 unavailable (old kernel, seccomp filter of a container): open, then check where the
  // file really is. Skill folders are set up by the host, so the race this leaves is the host's own.
  int file = openat(dir_fd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (file < 0) return -1;
  auto fd_path = [](int f) {
    std::string link = "/proc/self/fd/" + std::to_string(f);
    char buf[4096];
    ssize_t n = readlink(link.c_str(), buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  };
  const std::string dir = fd_path(dir_fd);
  const std::string real = fd_path(file);
  if (dir.empty() || real.size() <= dir.size() + 1 || real.compare(0, dir.size(), dir) != 0 ||
      real[dir.size()] != '/') {
    close(file);
    errno = EXDEV;
    return -1;
  }
  return file;
}

}  // namespace

Result<std::string> normalize_relative(std::string_view path) {
  if (path.empty()) return error("the path is empty");
  if (path.find('\0') != std::string_view::npos)
    return error("the path " + quote_name(path) + " contains a NUL byte");
  if (path.front() == '/')
    return error("the path " + quote_name(path) + " is absolute; use a path relative to the skill folder");
  std::vector<std::string_view> parts;
  if (!append_components(parts, path))
    return error("the path " + quote_name(path) + " leads outside the skill folder");
  if (parts.empty())
    return error("the path " + quote_name(path) + " names the skill folder itself, not a file");
  return join(parts);
}

Result<std::string> resolve_specifier(std::string_view importer, std::string_view specifier) {
  if (specifier.find('\0') != std::string_view::npos)
    return error("cannot import " + quote_name(specifier) + ": the specifier contains a NUL byte");
  const bool relative = specifier.starts_with("./") || specifier.starts_with("../");
  if (!relative) {
    if (specifier.starts_with("/"))
      return error("cannot import " + quote_name(specifier) +
                   ": absolute paths are not allowed; import files of the skill with './' or '../'");
    return error("cannot import " + quote_name(specifier) +
                 ": only files of the skill can be imported, with a relative specifier such as './lib.js' "
                 "(there are no built-in modules)");
  }
  std::vector<std::string_view> parts;
  const size_t slash = importer.rfind('/');
  if (slash != std::string_view::npos) append_components(parts, importer.substr(0, slash));
  if (!append_components(parts, specifier))
    return error("cannot import " + quote_name(specifier) + ": it leads outside the skill folder");
  if (parts.empty())
    return error("cannot import " + quote_name(specifier) + ": it names a folder, not a file");
  return join(parts);
}

Result<SkillFiles> SkillFiles::open(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return error("cannot open skill folder " + dir.string() + ": " + std::strerror(errno));
  return SkillFiles(fd);
}

SkillFiles::SkillFiles(SkillFiles&& other) noexcept : dir_fd_(other.dir_fd_) {
  other.dir_fd_ = -1;
}

SkillFiles& SkillFiles::operator=(SkillFiles&& other) noexcept {
  if (this != &other) {
    if (dir_fd_ >= 0) close(dir_fd_);
    dir_fd_ = other.dir_fd_;
    other.dir_fd_ = -1;
  }
  return *this;
}

SkillFiles::~SkillFiles() {
  if (dir_fd_ >= 0) close(dir_fd_);
}

Result<std::string> SkillFiles::read(const std::string& name, uint64_t max_bytes) const {
  int fd = open_beneath(dir_fd_, name);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT || e == ENOTDIR) return error(quote_name(name) + " does not exist in the skill folder");
    if (e == EXDEV || e == ELOOP) return error(quote_name(name) + " leads outside the skill folder");
    if (e == EACCES) return error(quote_name(name) + " is not readable");
    return error(quote_name(name) + " cannot be opened: " + std::strerror(e));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return error(quote_name(name) + " is not a regular file");
  }
  const uint64_t limit = max_bytes < kMaxSourceBytes ? max_bytes : kMaxSourceBytes;
  if (static_cast<uint64_t>(st.st_size) > limit) {
    close(fd);
    return error(quote_name(name) + " is too large (" + std::to_string(st.st_size) + " bytes; limit is " +
                 std::to_string(limit) + " bytes)");
  }
  std::string data;
  data.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  if (got != data.size()) return error(quote_name(name) + " could not be read completely");
  return data;
}

}  // namespace skillbox::engine
