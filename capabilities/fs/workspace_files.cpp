// capabilities/fs/workspace_files.cpp — WorkspaceFiles (skillbox/workspace.h): the operator's view of a
// workspace, served by the same Workspace the fs capability uses, so every path rule is the skill's.
#include <sys/stat.h>

#include <utility>
#include <variant>

#include "base/quote.h"
#include "base/skill_id.h"
#include "capabilities/fs/workspace.h"
#include "capabilities/fs/workspace_path.h"
#include "skillbox/workspace.h"
#include "state/data_layout.h"

namespace skillbox {

struct WorkspaceFiles::Impl {
  Impl(const std::filesystem::path& data_dir, std::string id, FsPolicy policy)
      : skill_id(std::move(id)), workspace(data_dir, skill_id, policy) {}
  std::string skill_id;
  mutable capabilities::Workspace workspace;
};

namespace {

// The Error of a reply that is an ErrorReply, else nullopt.
std::optional<Error> error_of(const bus::Reply& reply) {
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply))
    return Error{std::string(bus::error_name(e->code)) + ": " + e->message};
  return std::nullopt;
}

Error unexpected() {
  return Error{"internal error: the workspace answered with an unexpected reply"};
}

}  // namespace

WorkspaceFiles::WorkspaceFiles(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkspaceFiles::WorkspaceFiles(WorkspaceFiles&&) noexcept = default;
WorkspaceFiles& WorkspaceFiles::operator=(WorkspaceFiles&&) noexcept = default;
WorkspaceFiles::~WorkspaceFiles() = default;

Result<WorkspaceFiles> WorkspaceFiles::open(const std::filesystem::path& data_dir,
                                            std::string_view skill_id) {
  if (!base::is_valid_skill_id(skill_id))
    return Error{
        "\"" + std::string(skill_id) +
        "\" is not a valid skill id (letters, digits, '.', '_' and '-', docs/manifest.md \"Identity\")"};
  // Looked at without following a symlink and without creating anything: a skill that never wrote a
  // file has no workspace, and a workspace folder that is a symlink is refused (the fs capability
  // refuses it too, at its first call).
  const std::filesystem::path dir = state::DataLayout(data_dir).workspace_dir(skill_id);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0)
    return Error{"skill \"" + std::string(skill_id) + "\" has no workspace in " + data_dir.string() +
                 " (it has not written any file there; check --data-dir and --skill)"};
  if (!S_ISDIR(st.st_mode))
    return Error{dir.string() +
                 " is not a directory (a symlink or a file where the workspace should be); "
                 "skillbox refuses to follow it"};
  FsPolicy policy;
  policy.mode = FsMode::readwrite;
  return WorkspaceFiles(std::make_unique<Impl>(data_dir, std::string(skill_id), policy));
}

Result<WorkspaceFiles> WorkspaceFiles::create(const std::filesystem::path& data_dir,
                                              std::string_view skill_id) {
  if (!base::is_valid_skill_id(skill_id))
    return Error{
        "\"" + std::string(skill_id) +
        "\" is not a valid skill id (letters, digits, '.', '_' and '-', docs/manifest.md \"Identity\")"};
  FsPolicy policy;
  policy.mode = FsMode::readwrite;
  WorkspaceFiles files(std::make_unique<Impl>(data_dir, std::string(skill_id), policy));
  // The backend makes the workspace when it opens it for writing: the first request does.
  const bus::Reply reply = files.impl_->workspace.handle(bus::FsExistsRequest{"."});
  if (auto e = error_of(reply)) return *e;
  return files;
}

Result<std::string> WorkspaceFiles::file_path(std::string_view path) {
  auto parsed = capabilities::parse_workspace_path("path", path);
  if (!parsed) {
    // The parser's message names the path ("path \"../x\": path leaves the workspace"); the caller
    // names it its own way.
    const std::string named = "path " + base::quote(path, capabilities::kMaxQuotedPathBytes) + ": ";
    std::string message = parsed.error().message;
    if (message.starts_with(named)) message.erase(0, named.size());
    return Error{message};
  }
  if (parsed->is_root()) return Error{"names the workspace itself, not a file in it"};
  return parsed->relative();
}

Result<std::vector<WorkspaceEntry>> WorkspaceFiles::list(std::string_view path) const {
  const std::string where = path.empty() ? "." : std::string(path);
  const bus::Reply reply = impl_->workspace.handle(bus::FsReaddirRequest{where});
  if (auto e = error_of(reply)) return *e;
  const auto* dir = std::get_if<bus::FsReaddirReply>(&reply);
  if (dir == nullptr) return unexpected();
  std::vector<WorkspaceEntry> out;
  for (const bus::FsDirEntry& entry : dir->entries) {
    WorkspaceEntry e{.name = entry.name, .directory = entry.type == bus::FsEntryType::directory, .size = 0};
    if (entry.type == bus::FsEntryType::file) {
      const std::string child = where == "." ? entry.name : where + "/" + entry.name;
      const bus::Reply stat = impl_->workspace.handle(bus::FsStatRequest{child});
      if (const auto* s = std::get_if<bus::FsStatReply>(&stat)) e.size = s->size;
    }
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::string> WorkspaceFiles::read(std::string_view path) const {
  const bus::Reply reply =
      impl_->workspace.handle(bus::FsReadFileRequest{std::string(path), bus::FsEncoding::binary});
  if (auto e = error_of(reply)) return *e;
  const auto* bytes = std::get_if<bus::BytesReply>(&reply);
  if (bytes == nullptr) return unexpected();
  return std::string(bytes->data.begin(), bytes->data.end());
}

Result<bool> WorkspaceFiles::exists(std::string_view path) const {
  const bus::Reply reply = impl_->workspace.handle(bus::FsExistsRequest{std::string(path)});
  if (auto e = error_of(reply)) return *e;
  const auto* found = std::get_if<bus::BoolReply>(&reply);
  if (found == nullptr) return unexpected();
  return found->value;
}

Result<void> WorkspaceFiles::write(std::string_view path, std::string_view bytes) const {
  auto parsed = capabilities::parse_workspace_path("writeFile", path);
  if (!parsed)
    return Error{std::string(bus::error_name(parsed.error().code)) + ": " + parsed.error().message};
  if (parsed->is_root()) return Error{"the workspace itself is a folder; name a file inside it"};
  if (parsed->components().size() > 1) {
    const bus::Reply made = impl_->workspace.handle(bus::FsMkdirRequest{parsed->parent(), true});
    if (auto e = error_of(made)) return *e;
  }
  const bus::Reply reply = impl_->workspace.handle(
      bus::FsWriteFileRequest{parsed->relative(), bus::Bytes(bytes.begin(), bytes.end()), false});
  if (auto e = error_of(reply)) return *e;
  return {};
}

Result<void> WorkspaceFiles::remove(std::string_view path, bool recursive) const {
  if (path.empty() || path == "." || path == "./")
    return Error{"the workspace itself cannot be removed; name a file or folder inside it"};
  const bus::Reply reply = impl_->workspace.handle(bus::FsRemoveRequest{std::string(path), recursive});
  if (auto e = error_of(reply)) return *e;
  return {};
}

}  // namespace skillbox
