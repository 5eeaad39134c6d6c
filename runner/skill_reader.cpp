#include "runner/skill_reader.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "base/errno_text.h"
#include "base/file_read.h"
#include "base/unique_fd.h"
#include "engine/module_requests.h"
#include "runner/js_thread_pool.h"

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
// The folders above an imported file must be real folders: a link to a folder is refused (ELOOP)
// rather than followed, as the skill's own files are imported by their own paths.
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

/// Reads the entry's module graph breadth first, one file at a time: the order, and so which cap is
/// hit first, follows the sources alone.
class GraphRead {
 public:
  /// `out` holds the entry already (its bytes count against the total).
  GraphRead(const SkillFiles& files, const Limits& limits, bus::SkillSources& out,
            std::vector<SourceStamp>* stamps)
      : files_(files), max_file_bytes_(limits.memory_bytes), parser_(limits), out_(out), stamps_(stamps) {
    for (const auto& [name, text] : out.files) total_bytes_ += text.size();
  }

  /// Reads every file the entry imports, directly or not.
  Result<bool> run() {
    const std::string& entry = out_.entry;
    seen_.insert(entry);
    follow(entry, parser_.entry(entry, out_.files.at(entry)));
    while (!pending_.empty()) {
      const std::string name = std::move(pending_.front());
      pending_.pop_front();
      if (Result<bool> r = read(name); !r) return r;
    }
    return true;
  }

 private:
  enum class Folder : uint8_t { real, missing, refused };

  /// Queues the files that `importer`'s `requests` name, each once. A specifier that does not resolve
  /// (a bare name, an escape) or names no module file loads nothing from the folder: the loader says
  /// why when the skill compiles, so nothing is read for it here.
  void follow(const std::string& importer, const engine::ModuleRequests& requests) {
    for (const std::string& specifier : requests.specifiers) {
      auto name = engine::resolve_specifier(importer, specifier);
      if (!name || !engine::is_module_source_name(*name)) continue;
      if (seen_.insert(*name).second) pending_.push_back(std::move(*name));
    }
  }

  /// Reads the imported file `name`, or records why it cannot be loaded, and queues its imports.
  Result<bool> read(const std::string& name) {
    if (static_cast<size_t>(std::count(name.begin(), name.end(), '/')) > kMaxSourceDepth)
      return error("the skill imports " + quote_source_name(name) + ", which is nested more than " +
                   std::to_string(kMaxSourceDepth) + " folders deep in the skill folder; the limit is " +
                   std::to_string(kMaxSourceDepth));
    // The folders above it, outermost first: real folders, or the name goes with them.
    for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
      Result<Folder> folder = check_folder(name.substr(0, slash));
      if (!folder) return folder.error();
      if (*folder == Folder::refused) return true;  // find_module_source reports the folder's refusal
      if (*folder == Folder::missing) return missing(name);
    }
    const int fd = files_.openat2_fn()(files_.fd(), name.c_str(), kFileFlags, kFileResolve);
    if (fd < 0) {
      const int err = errno;
      if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
      if (err == ENOENT || err == ENOTDIR) return missing(name);  // a dangling link too
      return refuse(name, open_failure(err));
    }
    const UniqueFd file(fd);
    struct stat st {};
    if (fstat(file.get(), &st) != 0)
      return refuse(name, std::string("cannot be read: ") + base::errno_text(errno));
    if (S_ISDIR(st.st_mode)) {
      struct stat link {};
      const bool is_link =
          fstatat(files_.fd(), name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode);
      return refuse(name, is_link ? kLinkToFolder : "is not a regular file");
    }
    if (Result<bool> counted = count(name, st); !counted) return counted;
    std::string text;
    std::string why;
    if (!read_open_file(file.get(), max_file_bytes_, text, why)) return refuse(name, why);
    if (stamps_ != nullptr) stamps_->push_back(make_stamp(name, true, st));
    total_bytes_ += text.size();
    const std::string& kept = out_.files.emplace(name, std::move(text)).first->second;
    follow(name, parser_.module(name, kept));
    return true;
  }

  /// Whether `folder` (a name above an imported file) is a real folder inside the skill folder. A
  /// symbolic link is refused (to a folder: skillbox does not follow those; outside: like a file); a
  /// name that does not exist, or is a file or a dangling link, has no files below it.
  Result<Folder> check_folder(const std::string& folder) {
    if (auto it = folders_.find(folder); it != folders_.end()) return it->second;
    Folder state = Folder::real;
    const int fd = files_.openat2_fn()(files_.fd(), folder.c_str(), kDirFlags, kDirResolve);
    if (fd >= 0) {
      const UniqueFd dir(fd);
      stamp_fd(stamps_, folder, false, dir.get());
    } else {
      const int err = errno;
      if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
      if (err == ENOENT || err == ENOTDIR) {
        state = Folder::missing;
      } else if (err == ELOOP || err == EXDEV) {
        // A symbolic link (RESOLVE_NO_SYMLINKS): where it leads decides the message.
        const int target = files_.openat2_fn()(files_.fd(), folder.c_str(), kFileFlags, kFileResolve);
        const int target_err = errno;
        const UniqueFd held(target);
        struct stat st {};
        if (target >= 0 && fstat(target, &st) == 0 && S_ISDIR(st.st_mode)) {
          state = Folder::refused;
          if (Result<bool> r = refuse(folder, kLinkToFolder); !r) return r.error();
        } else if (target >= 0 || target_err == ENOENT || target_err == ENOTDIR) {
          state = Folder::missing;  // a link to a file, or dangling
        } else {
          if (openat2_unavailable(target_err)) return error(openat2_unavailable_message(target_err));
          state = Folder::refused;
          if (Result<bool> r = refuse(folder, open_failure(target_err)); !r) return r.error();
        }
      } else {
        state = Folder::refused;
        if (Result<bool> r = refuse(folder, open_failure(err)); !r) return r.error();
      }
    }
    folders_.emplace(folder, state);
    return state;
  }

  /// Records that the imported `name` does not exist; the stamp follows links, so that it changes
  /// when the file, or the target of a dangling link, appears.
  Result<bool> missing(const std::string& name) {
    if (Result<bool> counted = count(name, {}); !counted) return counted;
    if (stamps_ != nullptr) {
      struct stat st {};
      if (fstatat(files_.fd(), name.c_str(), &st, 0) != 0) st = {};
      stamps_->push_back(make_stamp(name, true, st));
    }
    out_.refused.emplace(name, "does not exist in the skill folder");
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
    if (++files_counted_ > kMaxSourceFiles)
      return error("the skill's entry imports more than " + std::to_string(kMaxSourceFiles) +
                   " files, directly or through other files; the limit is " +
                   std::to_string(kMaxSourceFiles));
    if (S_ISREG(st.st_mode) && total_bytes_ + static_cast<uint64_t>(st.st_size) > kMaxSourceTotalBytes)
      return error("the files the skill's entry imports hold more than " +
                   std::to_string(kMaxSourceTotalBytes) + " bytes of JavaScript (reached at " +
                   quote_source_name(name) + "); the limit is " + std::to_string(kMaxSourceTotalBytes) +
                   " bytes");
    return true;
  }

  /// The stamp of a refused `name`, not following a final link (it may lead outside the folder).
  SourceStamp stamp_of_beneath(const std::string& name) const {
    struct stat st {};
    if (fstatat(files_.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) st = {};
    return make_stamp(name, false, st);
  }

  static constexpr const char* kLinkToFolder =
      "is a symbolic link to a folder; skillbox does not follow links to folders when it reads a skill's "
      "sources, so import the files by their own path";

  const SkillFiles& files_;
  uint64_t max_file_bytes_;
  engine::ModuleRequestParser parser_;
  bus::SkillSources& out_;
  std::vector<SourceStamp>* stamps_;
  std::set<std::string> seen_;             // names queued or read, the entry included
  std::deque<std::string> pending_;        // names to read, in the order their imports were found
  std::map<std::string, Folder> folders_;  // folders above imported files, as found
  size_t files_counted_ = 1;               // the entry
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

namespace {

/// read_skill_sources on the calling thread, which has a JS stack.
Result<bus::SkillSources> read_on_js_stack(const std::filesystem::path& dir, std::string_view entry,
                                           const Limits& limits, Openat2Fn openat2,
                                           std::vector<SourceStamp>* stamps) {
  auto name = engine::normalize_relative(entry);
  if (!name) return error("entry: " + name.error().message);
  auto files = SkillFiles::open(dir, openat2);
  if (!files) return files.error();

  bus::SkillSources sources;
  sources.entry = *name;
  {
    // The entry first: it is the first openat2, so a kernel without it fails here, before any import.
    const int fd = openat2(files->fd(), name->c_str(), kFileFlags, kFileResolve);
    if (fd < 0) {
      const int err = errno;
      if (openat2_unavailable(err)) return error(openat2_unavailable_message(err));
      return error("entry file " + quote_source_name(*name) + " " + open_failure(err));
    }
    const UniqueFd file(fd);
    std::string text;
    std::string why;
    if (!read_open_file(file.get(), limits.memory_bytes, text, why))
      return error("entry file " + quote_source_name(*name) + " " + why);
    stamp_fd(stamps, *name, true, file.get());
    sources.files.emplace(*name, std::move(text));
  }
  GraphRead graph(*files, limits, sources, stamps);
  Result<bool> read = graph.run();
  if (!read) return read.error();
  return sources;
}

}  // namespace

Result<bus::SkillSources> read_skill_sources(const std::filesystem::path& dir, std::string_view entry,
                                             const Limits& limits, Openat2Fn openat2,
                                             std::vector<SourceStamp>* stamps) {
  std::optional<Result<bus::SkillSources>> out;
  const bool ran = JsThreadPool::run_with_js_stack(
      [&] { out.emplace(read_on_js_stack(dir, entry, limits, openat2, stamps)); });
  if (!ran || !out) return error("cannot read the skill's sources: could not start a thread to parse them");
  return std::move(*out);
}

}  // namespace skillbox::runner
