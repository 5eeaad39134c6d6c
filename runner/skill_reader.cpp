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
#include "engine/module_graph.h"
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

constexpr const char* kLinkToFolder =
    "is a symbolic link to a folder; skillbox does not follow links to folders when it reads a skill's "
    "sources, so import the files by their own path";

Result<void> fail(std::string message) {
  return Error{std::move(message)};
}

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

Result<SourceReader> SourceReader::open(const std::filesystem::path& dir, const Limits& limits,
                                        Openat2Fn openat2, std::vector<SourceStamp>* stamps) {
  auto files = SkillFiles::open(dir, openat2);
  if (!files) return files.error();
  return SourceReader(std::move(*files), limits, stamps);
}

Result<void> SourceReader::read_entry(const std::string& name, bus::SkillSources& pool) {
  // The entry first: it is the first openat2, so a kernel without it fails here, before any import.
  const int fd = files_.openat2_fn()(files_.fd(), name.c_str(), kFileFlags, kFileResolve);
  if (fd < 0) {
    const int err = errno;
    if (openat2_unavailable(err)) return fail(openat2_unavailable_message(err));
    return fail("entry file " + quote_source_name(name) + " " + open_failure(err));
  }
  const UniqueFd file(fd);
  std::string text;
  std::string why;
  if (!read_open_file(file.get(), max_file_bytes_, text, why))
    return fail("entry file " + quote_source_name(name) + " " + why);
  stamp_fd(stamps_, name, true, file.get());
  ++files_counted_;
  total_bytes_ += text.size();
  pool.entry = name;
  pool.files.insert_or_assign(name, std::move(text));
  return {};
}

void SourceReader::count(const bus::SkillSources& pool) {
  files_counted_ += pool.files.size() + pool.refused.size();
  for (const auto& [name, text] : pool.files) total_bytes_ += text.size();
}

Result<void> SourceReader::fetch(const std::vector<std::string>& names, bus::SkillSources& pool) {
  for (const std::string& name : names)
    if (Result<void> r = read(name, pool); !r) return r;
  return {};
}

/// Reads the imported file `name`, or records why it cannot be loaded.
Result<void> SourceReader::read(const std::string& name, bus::SkillSources& pool) {
  if (static_cast<size_t>(std::count(name.begin(), name.end(), '/')) > kMaxSourceDepth)
    return fail("the skill imports " + quote_source_name(name) + ", which is nested more than " +
                std::to_string(kMaxSourceDepth) + " folders deep in the skill folder; the limit is " +
                std::to_string(kMaxSourceDepth));
  // The folders above it, outermost first: real folders, or the name goes with them.
  for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1)) {
    Result<Folder> folder = check_folder(name.substr(0, slash), pool);
    if (!folder) return folder.error();
    if (*folder == Folder::refused) return {};  // find_module_source reports the folder's refusal
    if (*folder == Folder::missing) return missing(name, pool);
  }
  const int fd = files_.openat2_fn()(files_.fd(), name.c_str(), kFileFlags, kFileResolve);
  if (fd < 0) {
    const int err = errno;
    if (openat2_unavailable(err)) return fail(openat2_unavailable_message(err));
    if (err == ENOENT || err == ENOTDIR) return missing(name, pool);  // a dangling link too
    return refuse(name, open_failure(err), pool);
  }
  const UniqueFd file(fd);
  struct stat st {};
  if (fstat(file.get(), &st) != 0)
    return refuse(name, std::string("cannot be read: ") + base::errno_text(errno), pool);
  if (S_ISDIR(st.st_mode)) {
    struct stat link {};
    const bool is_link =
        fstatat(files_.fd(), name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode);
    return refuse(name, is_link ? kLinkToFolder : "is not a regular file", pool);
  }
  if (Result<void> counted = count_one(name, S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_size) : 0);
      !counted)
    return counted;
  std::string text;
  std::string why;
  if (!read_open_file(file.get(), max_file_bytes_, text, why)) {
    if (stamps_ != nullptr) stamps_->push_back(stamp_of_beneath(name));
    pool.refused.insert_or_assign(name, std::move(why));
    return {};
  }
  if (stamps_ != nullptr) stamps_->push_back(make_stamp(name, true, st));
  total_bytes_ += text.size();
  pool.files.insert_or_assign(name, std::move(text));
  return {};
}

/// Whether `folder` (a name above an imported file) is a real folder inside the skill folder. A
/// symbolic link is refused (to a folder: skillbox does not follow those; outside: like a file); a
/// name that does not exist, or is a file or a dangling link, has no files below it.
Result<SourceReader::Folder> SourceReader::check_folder(const std::string& folder, bus::SkillSources& pool) {
  if (auto it = folders_.find(folder); it != folders_.end()) return it->second;
  Folder state = Folder::real;
  const int fd = files_.openat2_fn()(files_.fd(), folder.c_str(), kDirFlags, kDirResolve);
  if (fd >= 0) {
    const UniqueFd dir(fd);
    stamp_fd(stamps_, folder, false, dir.get());
  } else {
    const int err = errno;
    if (openat2_unavailable(err)) return Error{openat2_unavailable_message(err)};
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
        if (Result<void> r = refuse(folder, kLinkToFolder, pool); !r) return r.error();
      } else if (target >= 0 || target_err == ENOENT || target_err == ENOTDIR) {
        state = Folder::missing;  // a link to a file, or dangling
      } else {
        if (openat2_unavailable(target_err)) return Error{openat2_unavailable_message(target_err)};
        state = Folder::refused;
        if (Result<void> r = refuse(folder, open_failure(target_err), pool); !r) return r.error();
      }
    } else {
      state = Folder::refused;
      if (Result<void> r = refuse(folder, open_failure(err), pool); !r) return r.error();
    }
  }
  folders_.emplace(folder, state);
  return state;
}

/// Records that the imported `name` does not exist; the stamp follows links, so that it changes
/// when the file, or the target of a dangling link, appears.
Result<void> SourceReader::missing(const std::string& name, bus::SkillSources& pool) {
  if (Result<void> counted = count_one(name, 0); !counted) return counted;
  if (stamps_ != nullptr) {
    struct stat st {};
    if (fstatat(files_.fd(), name.c_str(), &st, 0) != 0) st = {};
    stamps_->push_back(make_stamp(name, true, st));
  }
  pool.refused.insert_or_assign(name, "does not exist in the skill folder");
  return {};
}

/// Records that `name` exists but cannot be loaded, and why.
Result<void> SourceReader::refuse(const std::string& name, std::string why, bus::SkillSources& pool) {
  if (Result<void> counted = count_one(name, 0); !counted) return counted;
  if (stamps_ != nullptr) stamps_->push_back(stamp_of_beneath(name));
  pool.refused.insert_or_assign(name, std::move(why));
  return {};
}

/// Checks the file-count and total-bytes caps before one more file (`regular_file_bytes`: its size
/// if it is a regular file, else 0).
Result<void> SourceReader::count_one(const std::string& name, uint64_t regular_file_bytes) {
  if (++files_counted_ > kMaxSourceFiles)
    return fail("the skill's entry imports more than " + std::to_string(kMaxSourceFiles) +
                " files, directly or through other files; the limit is " + std::to_string(kMaxSourceFiles));
  if (total_bytes_ + regular_file_bytes > kMaxSourceTotalBytes)
    return fail("the files the skill's entry imports hold more than " + std::to_string(kMaxSourceTotalBytes) +
                " bytes of JavaScript (reached at " + quote_source_name(name) + "); the limit is " +
                std::to_string(kMaxSourceTotalBytes) + " bytes");
  return {};
}

/// The stamp of a refused `name`, not following a final link (it may lead outside the folder).
SourceStamp SourceReader::stamp_of_beneath(const std::string& name) const {
  struct stat st {};
  if (fstatat(files_.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) st = {};
  return make_stamp(name, false, st);
}

Result<std::string> entry_name(std::string_view entry) {
  auto name = engine::normalize_relative(entry);
  if (!name) return Error{"entry: " + name.error().message};
  return std::move(*name);
}

namespace {

/// read_skill_sources on the calling thread, which has a JS stack.
Result<bus::SkillSources> read_on_js_stack(const std::filesystem::path& dir, std::string_view entry,
                                           const Limits& limits, Openat2Fn openat2,
                                           std::vector<SourceStamp>* stamps) {
  auto name = entry_name(entry);
  if (!name) return name.error();
  auto reader = SourceReader::open(dir, limits, openat2, stamps);
  if (!reader) return reader.error();
  bus::SkillSources pool;
  if (Result<void> read = reader->read_entry(*name, pool); !read) return read.error();
  engine::ModuleRequestParser parser(limits);
  return engine::walk_module_graph(std::move(pool), parser,
                                   [&](const std::vector<std::string>& names, bus::SkillSources& into) {
                                     return reader->fetch(names, into);
                                   });
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
