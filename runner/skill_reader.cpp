#include "runner/skill_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>
#include <vector>

#include "base/errno_text.h"
#include "base/file_read.h"
#include "base/unique_fd.h"
#include "state/beneath.h"

namespace skillbox::runner {
namespace {

using base::UniqueFd;
using engine::quote_source_name;

Error error(std::string message) {
  return Error{std::move(message)};
}

// open(2) flags of every source read. O_NONBLOCK: a FIFO planted as a source must not hang the host.
constexpr uint64_t kFileFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
// symlink escape: the kernel resolves every component beneath the folder and refuses ".." or a link
// that leaves it (EXDEV); magic links (/proc/self/fd/...) are refused outright. Links that stay
// inside are followed, as a skill may alias its own files.
constexpr uint64_t kFileResolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
// Folders are walked only through real folders: a link swapped in for a folder between listing and
// opening is refused (ELOOP) rather than followed (symlink swap race), and a link to "." cannot make
// the walk loop.
constexpr uint64_t kDirFlags = O_RDONLY | O_CLOEXEC | O_DIRECTORY;
constexpr uint64_t kDirResolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;

/// True when `err` from openat2 means the call itself is unavailable, not that the name is bad.
bool openat2_unavailable(int err) {
  return err == ENOSYS || err == EPERM;
}

std::string openat2_unavailable_message(int err) {
  return std::string("cannot read the skill's sources: the kernel refused openat2 (") +
         (err == ENOSYS ? "ENOSYS: not implemented, Linux 5.6 or later has it"
                        : "EPERM: blocked, e.g. by a "
                          "container's seccomp profile") +
         "); skillbox needs it to keep every read inside the skill folder and does not fall back to a plain "
         "open";
}

/// Why opening a source failed, as the end of a sentence about its name.
std::string open_failure(int err) {
  if (err == ENOENT || err == ENOTDIR) return "does not exist in the skill folder";
  if (err == EXDEV || err == ELOOP) return "leads outside the skill folder";
  if (err == EACCES) return "is not readable";
  return std::string("cannot be opened: ") + base::errno_text(err);
}

/// Reads the whole regular file open as `fd`, at most `max_bytes`. On failure returns false and sets
/// `why` to the end of a sentence about the file.
bool read_open_file(int fd, uint64_t max_bytes, std::string& out, std::string& why) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "is not a regular file";
    return false;
  }
  const uint64_t limit = std::min(max_bytes, engine::kMaxSourceBytes);
  if (static_cast<uint64_t>(st.st_size) > limit) {
    why = "is too large (" + std::to_string(st.st_size) + " bytes; limit is " + std::to_string(limit) +
          " bytes)";
    return false;
  }
  auto data = base::read_fd(fd, limit);
  if (!data) {
    why = data.error().code == base::ReadErrc::too_large
              ? "grew past its limit of " + std::to_string(limit) + " bytes while it was read"
              : "could not be read completely";
    return false;
  }
  out = std::move(*data);
  return true;
}

SourceStamp make_stamp(std::string name, bool follow, const struct stat& st) {
  SourceStamp s;
  s.name = std::move(name);
  s.follow = follow;
  s.dev = static_cast<uint64_t>(st.st_dev);
  s.ino = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.mode = static_cast<uint32_t>(st.st_mode);
  s.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
  return s;
}

/// Records the status of the open `fd` as the stamp of `name`, when stamps are wanted.
void stamp_fd(std::vector<SourceStamp>* stamps, const std::string& name, bool follow, int fd) {
  if (stamps == nullptr) return;
  struct stat st {};
  if (fstat(fd, &st) != 0) st = {};
  stamps->push_back(make_stamp(name, follow, st));
}

/// Collects the candidate sources below the folder, one folder at a time.
class SourceWalk {
 public:
  /// `out` holds the entry already (its bytes count against the total).
  SourceWalk(const SkillFiles& files, uint64_t max_file_bytes, bus::SkillSources& out,
             std::vector<SourceStamp>* stamps)
      : files_(files), max_file_bytes_(max_file_bytes), out_(out), stamps_(stamps) {
    for (const auto& [name, text] : out.files) total_bytes_ += text.size();
  }

  /// Walks the folder named `prefix` ("" for the skill folder) at nesting `depth`.
  Result<bool> walk(const std::string& prefix, size_t depth) {
    UniqueFd dir;
    if (prefix.empty()) {
      dir.reset(::fcntl(files_.fd(), F_DUPFD_CLOEXEC, 0));
      if (!dir) return error(std::string("cannot list the skill folder: ") + base::errno_text(errno));
    } else {
      const int fd = files_.openat2_fn()(files_.fd(), prefix.c_str(), kDirFlags, kDirResolve);
      if (fd < 0) {
        const int err = errno;
        if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
        // The folder went away or was swapped for a link since it was listed: nothing below it loads.
        return refuse(prefix, open_failure(err));
      }
      dir.reset(fd);
    }
    stamp_fd(stamps_, prefix, false, dir.get());
    std::vector<state::DirectoryEntry> entries;
    if (const int err = state::list_directory(dir.get(), entries); err != 0)
      return error("cannot list " +
                   (prefix.empty() ? std::string("the skill folder") : quote_source_name(prefix)) + ": " +
                   base::errno_text(err));
    // getdents order differs between file systems; sorted, which cap is hit first is reproducible.
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    for (const state::DirectoryEntry& e : entries) {
      const std::string name = prefix.empty() ? e.name : prefix + "/" + e.name;
      unsigned char type = e.type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (fstatat(dir.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
        type = static_cast<unsigned char>(S_ISDIR(st.st_mode)   ? DT_DIR
                                          : S_ISLNK(st.st_mode) ? DT_LNK
                                          : S_ISREG(st.st_mode) ? DT_REG
                                                                : DT_FIFO);
      }
      Result<bool> r = true;
      if (type == DT_DIR) {
        if (depth + 1 > kMaxSourceDepth)
          return error("the skill folder nests folders more than " + std::to_string(kMaxSourceDepth) +
                       " levels deep (" + quote_source_name(name) + "); the limit is " +
                       std::to_string(kMaxSourceDepth));
        r = walk(name, depth + 1);
      } else if (type == DT_REG || type == DT_LNK) {
        r = file(name, type == DT_LNK);
      } else if (engine::is_module_source_name(name)) {
        r = refuse(name, "is not a regular file");
      }
      if (!r) return r;
    }
    return true;
  }

 private:
  /// A regular file or a symbolic link named `name`.
  Result<bool> file(const std::string& name, bool link) {
    if (name == out_.entry) return true;  // read already
    // A link may lead to a folder or outside, which matters for any name below it; a regular file
    // matters only when the loader accepts its name.
    if (!link && !engine::is_module_source_name(name)) return true;
    const int fd = files_.openat2_fn()(files_.fd(), name.c_str(), kFileFlags, kFileResolve);
    if (fd < 0) {
      const int err = errno;
      if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
      if (err == ENOENT) return true;  // a dangling link: loading it says it does not exist
      return refuse(name, open_failure(err));
    }
    const UniqueFd file(fd);
    struct stat st {};
    if (fstat(file.get(), &st) != 0)
      return refuse(name, std::string("cannot be read: ") + base::errno_text(errno));
    if (S_ISDIR(st.st_mode))
      return refuse(name,
                    "is a symbolic link to a folder; skillbox does not follow links to folders when it "
                    "reads a skill's sources, so import the files by their own path");
    if (!engine::is_module_source_name(name)) return true;
    if (Result<bool> counted = count(name, st); !counted) return counted;
    std::string text;
    std::string why;
    if (!read_open_file(file.get(), max_file_bytes_, text, why)) return refuse(name, why);
    if (stamps_ != nullptr) stamps_->push_back(make_stamp(name, true, st));
    total_bytes_ += text.size();
    out_.files.emplace(name, std::move(text));
    return true;
  }

  /// Records that `name` exists but cannot be loaded, and why.
  Result<bool> refuse(const std::string& name, std::string why) {
    if (Result<bool> counted = count(name, {}); !counted) return counted;
    if (stamps_ != nullptr) stamps_->push_back(stamp_of_beneath(name));
    out_.refused.emplace(name, std::move(why));
    return true;
  }

  /// Checks the file-count and total-bytes caps before one more file (`st`: its status, if known).
  Result<bool> count(const std::string& name, const struct stat& st) {
    if (++candidates_ > kMaxSourceFiles)
      return error("the skill folder holds more than " + std::to_string(kMaxSourceFiles) +
                   " JavaScript files (.js, .mjs, .cjs); the limit is " + std::to_string(kMaxSourceFiles));
    if (S_ISREG(st.st_mode) && total_bytes_ + static_cast<uint64_t>(st.st_size) > kMaxSourceTotalBytes)
      return error("the skill folder holds more than " + std::to_string(kMaxSourceTotalBytes) +
                   " bytes of JavaScript (.js, .mjs, .cjs files, reached at " + quote_source_name(name) +
                   "); the limit is " + std::to_string(kMaxSourceTotalBytes) + " bytes");
    return true;
  }

  /// The stamp of a refused `name`, not following a final link (it may lead outside the folder).
  SourceStamp stamp_of_beneath(const std::string& name) const {
    struct stat st {};
    if (fstatat(files_.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) st = {};
    return make_stamp(name, false, st);
  }

  const SkillFiles& files_;
  uint64_t max_file_bytes_;
  bus::SkillSources& out_;
  std::vector<SourceStamp>* stamps_;
  size_t candidates_ = 1;  // the entry
  uint64_t total_bytes_ = 0;
};

}  // namespace

int system_openat2(int dir_fd, const char* name, uint64_t flags, uint64_t resolve) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  // EAGAIN: a concurrent rename raced with ".." resolution; a few retries settle it, and an endless
  // race ends as an error rather than a hang.
  for (int attempt = 0; attempt < 32; ++attempt) {
    const long fd = syscall(SYS_openat2, dir_fd, name, &how, sizeof(how));
    if (fd >= 0 || (errno != EINTR && errno != EAGAIN)) return static_cast<int>(fd);
  }
  errno = EAGAIN;
  return -1;
}

Result<SkillFiles> SkillFiles::open(const std::filesystem::path& dir, Openat2Fn openat2) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return error("cannot open skill folder " + dir.string() + ": " + base::errno_text(errno));
  return SkillFiles(std::move(fd), openat2);
}

Result<std::string> SkillFiles::read(const std::string& name, uint64_t max_bytes) const {
  const int fd = openat2_(dir_.get(), name.c_str(), kFileFlags, kFileResolve);
  if (fd < 0) {
    const int err = errno;
    if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
    return error(quote_source_name(name) + " " + open_failure(err));
  }
  const UniqueFd file(fd);
  std::string data;
  std::string why;
  if (!read_open_file(file.get(), max_bytes, data, why)) return error(quote_source_name(name) + " " + why);
  return data;
}

SourceStamp stamp_of(const std::filesystem::path& dir, const std::string& name, bool follow) {
  const std::filesystem::path path = name.empty() ? dir : dir / name;
  struct stat st {};
  if (fstatat(AT_FDCWD, path.c_str(), &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0) st = {};
  return make_stamp(name, follow, st);
}

Result<bus::SkillSources> read_skill_sources(const std::filesystem::path& dir, std::string_view entry,
                                             uint64_t max_file_bytes, Openat2Fn openat2,
                                             std::vector<SourceStamp>* stamps) {
  auto name = engine::normalize_relative(entry);
  if (!name) return error("entry: " + name.error().message);
  auto files = SkillFiles::open(dir, openat2);
  if (!files) return files.error();

  bus::SkillSources sources;
  sources.entry = *name;
  {
    // The entry first: it is the first openat2, so a kernel without it fails here, before the walk.
    const int fd = openat2(files->fd(), name->c_str(), kFileFlags, kFileResolve);
    if (fd < 0) {
      const int err = errno;
      if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
      return error("entry file " + quote_source_name(*name) + " " + open_failure(err));
    }
    const UniqueFd file(fd);
    std::string text;
    std::string why;
    if (!read_open_file(file.get(), max_file_bytes, text, why))
      return error("entry file " + quote_source_name(*name) + " " + why);
    stamp_fd(stamps, *name, true, file.get());
    sources.files.emplace(*name, std::move(text));
  }
  SourceWalk walk(*files, max_file_bytes, sources, stamps);
  Result<bool> walked = walk.walk("", 0);
  if (!walked) return walked.error();
  return sources;
}

}  // namespace skillbox::runner
