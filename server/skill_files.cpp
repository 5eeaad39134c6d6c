// server/skill_files.cpp — see skill_files.h.
#include "server/skill_files.h"

#include <archive.h>
#include <archive_entry.h>

#include <memory>
#include <set>

#include "base/escape.h"
#include "base/utf8.h"

namespace skillbox::server {
namespace {

SkillProblem bad(std::string message) {
  return SkillProblem{400, "invalid_files", std::move(message)};
}

SkillProblem too_large(std::string message) {
  return SkillProblem{413, "upload_too_large", std::move(message)};
}

std::string shown_path(std::string_view path) {
  return "\"" + base::escape_text(path.substr(0, 200)) + "\"";
}

/// Collects files, checking each path, duplicates, file-over-directory and the bounds as they come.
class FileSet {
 public:
  explicit FileSet(const UploadBounds& bounds) : bounds_(bounds) {}

  /// Room for one more file of `size` bytes at `path`, or the problem.
  std::optional<SkillProblem> admit(const std::string& path, uint64_t size) {
    if (std::string why = file_path_problem(path); !why.empty())
      return bad("file " + shown_path(path) + ": " + why);
    if (files_.size() >= bounds_.max_files) {
      return too_large("more than " + std::to_string(bounds_.max_files) + " files (code.max_files)");
    }
    if (size > bounds_.max_bytes - bytes_) {
      return too_large("the files hold more than " + std::to_string(bounds_.max_bytes) +
                       " bytes (code.max_bytes)");
    }
    if (files_.contains(path) || dirs_.contains(path))
      return bad("file " + shown_path(path) + " is given twice");
    for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      const std::string dir = path.substr(0, slash);
      if (files_.contains(dir))
        return bad("file " + shown_path(path) + " is inside " + shown_path(dir) + ", a file");
      dirs_.insert(dir);
    }
    bytes_ += size;
    return std::nullopt;
  }
  void add(std::string path, std::string content) { files_.emplace(std::move(path), std::move(content)); }
  SkillFiles take() { return std::move(files_); }

 private:
  UploadBounds bounds_;
  SkillFiles files_;
  std::set<std::string> dirs_;
  uint64_t bytes_ = 0;
};

/// libarchive's description of its last error, escaped.
std::string archive_problem(archive* a) {
  const char* text = archive_error_string(a);
  return base::escape_text(text == nullptr ? "unknown error" : text);
}

struct ArchiveDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};

/// The entry's path without the leading "./" tar writes for `tar -C dir .`, and without a directory's
/// trailing '/'.
std::string entry_path(archive_entry* entry) {
  const char* raw = archive_entry_pathname(entry);
  std::string path = raw == nullptr ? std::string() : std::string(raw);
  while (path.starts_with("./")) path.erase(0, 2);
  return path;
}

/// Reads the content of the current entry, `size` bytes.
std::optional<SkillProblem> read_content(archive* a, const std::string& path, uint64_t size,
                                         std::string& out) {
  out.resize(static_cast<size_t>(size));
  size_t got = 0;
  while (got < out.size()) {
    const la_ssize_t n = archive_read_data(a, out.data() + got, out.size() - got);
    if (n <= 0) return bad("the tar archive ends inside file " + shown_path(path));
    got += static_cast<size_t>(n);
  }
  return std::nullopt;
}

/// The problem of one tar entry that is not a regular file, or std::nullopt for a directory.
std::optional<SkillProblem> non_file_problem(archive_entry* entry, const std::string& path) {
  if (archive_entry_hardlink(entry) != nullptr) {
    return bad("file " + shown_path(path) + " is a hard link; send regular files only");
  }
  switch (archive_entry_filetype(entry)) {
    case AE_IFREG:
      return std::nullopt;
    case AE_IFDIR:
      return std::nullopt;
    case AE_IFLNK:
      return bad("file " + shown_path(path) +
                 " is a symbolic link; send regular files only (tar -h follows links)");
    default:
      return bad("file " + shown_path(path) + " is a device, FIFO or socket; send regular files only");
  }
}

}  // namespace

std::string file_path_problem(std::string_view path) {
  if (path.empty()) return "an empty path";
  if (path.size() > kMaxFilePathBytes) return "longer than " + std::to_string(kMaxFilePathBytes) + " bytes";
  if (!base::utf8::is_valid(path)) return "not valid UTF-8";
  if (path.front() == '/') return "an absolute path; paths are relative to the skill's folder";
  size_t depth = 0;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    if (part.empty()) return "an empty component (\"//\" or a trailing '/')";
    if (part == "." || part == "..") return "a \".\" or \"..\" component";
    if (part.size() > 255) return "a component longer than 255 bytes";
    for (const char c : part) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return "a control character (NUL included)";
    }
    if (++depth > kMaxFileDepth) return "deeper than " + std::to_string(kMaxFileDepth) + " folders";
    start = slash + 1;
  }
  return {};
}

Result<SkillFiles, SkillProblem> files_from_json(const nlohmann::json& files, const UploadBounds& bounds) {
  if (!files.is_object()) return bad("files: expected an object {\"PATH\": \"TEXT\", ...}");
  FileSet set(bounds);
  for (const auto& [path, value] : files.items()) {
    if (!value.is_string()) {
      return bad("files." + base::escape_text(path.substr(0, 200)) +
                 ": expected a string (the file's text); send binary files in a tar");
    }
    const std::string& text = value.get_ref<const std::string&>();
    if (std::optional<SkillProblem> p = set.admit(path, text.size())) return *p;
    set.add(path, text);
  }
  return set.take();
}

Result<SkillFiles, SkillProblem> files_from_tar(std::string_view bytes, const UploadBounds& bounds) {
  const std::unique_ptr<archive, ArchiveDeleter> a(archive_read_new());
  if (!a) return SkillProblem{500, "internal", "could not start reading the tar archive"};
  // Tar only, no decompression filter: the body's size bounds the files' (no expansion).
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK) {
    return bad("the body is not a tar archive: " + archive_problem(a.get()));
  }
  FileSet set(bounds);
  archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK) {
      return bad("the tar archive is damaged: " + archive_problem(a.get()));
    }
    std::string path = entry_path(entry);
    if (std::optional<SkillProblem> p = non_file_problem(entry, path)) return *p;
    if (archive_entry_filetype(entry) == AE_IFDIR) {
      while (path.ends_with('/')) path.pop_back();
      if (!path.empty() && path != ".") {
        if (std::string why = file_path_problem(path); !why.empty())
          return bad("folder " + shown_path(path) + ": " + why);
      }
      continue;
    }
    const la_int64_t size = archive_entry_size(entry);
    if (size < 0) return bad("file " + shown_path(path) + " has no size");
    if (std::optional<SkillProblem> p = set.admit(path, static_cast<uint64_t>(size))) return *p;
    std::string content;
    if (std::optional<SkillProblem> p = read_content(a.get(), path, static_cast<uint64_t>(size), content))
      return *p;
    set.add(std::move(path), std::move(content));
  }
  return set.take();
}

}  // namespace skillbox::server
