// server/skill_uploads.h — skills a tenant uploads (PUT /v1/skills/{id}, docs/server.md "Uploading a
// skill"), kept in the tenant's own data directory:
//
//   DATA/uploads/<id>/versions/<digest>/   one folder per version, named by its digest (skill_digest.h)
//   DATA/uploads/<id>/current              the digest served now (64 hex digits and a newline)
//   DATA/uploads/<id>/.lock                flock(2): one upload of an id at a time (threads and processes)
//   DATA/uploads/<id>/.staging-XXXXXX/     an upload being written and checked; renamed into versions/
//
// An upload is written into a fresh staging folder, loaded there as a skill (the manifest and entry are
// checked as `skillbox run` would), and only then renamed into versions/ (rename(2): a version folder is
// whole or absent) and made current by renaming a new `current` file over the old one. A reader sees
// the old version or the new one, never a mixture. The newest `keep_versions` versions stay (the current
// one always), older ones are removed unless a run in progress holds them (VersionPins).
//
// Identity (docs/manifest.md): an id's store and workspace belong to the tenant, not to a folder; every
// version folder of an uploaded id owns it (upload_bindings), so a new version keeps the data.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "server/skill_catalog.h"
#include "server/skill_digest.h"
#include "skillbox/result.h"
#include "state/binding_registry.h"

namespace skillbox::server {

/// The version of an uploaded skill that is served now.
struct UploadedVersion {
  std::filesystem::path dir;  // DATA/uploads/<id>/versions/<digest>
  std::string digest;
};

/// The current version of `id` in the data directory `data_dir`; std::nullopt when `id` was never
/// uploaded there (or its `current` file is not a digest whose folder exists). `id` must follow the id
/// rule.
[[nodiscard]] std::optional<UploadedVersion> current_upload(const std::filesystem::path& data_dir,
                                                            std::string_view id);

/// The ids with a current version in `data_dir`, sorted; at most `limit`.
[[nodiscard]] std::vector<std::string> uploaded_ids(const std::filesystem::path& data_dir, size_t limit);

/// Version folders that runs in progress use: pruning leaves them. Thread-safe.
class VersionPins {
 public:
  /// Held while a run uses `dir`; unpins when destroyed.
  class Pin {
   public:
    Pin() = default;
    Pin(VersionPins* pins, std::filesystem::path dir) : pins_(pins), dir_(std::move(dir)) {}
    ~Pin();
    Pin(Pin&& other) noexcept : pins_(std::exchange(other.pins_, nullptr)), dir_(std::move(other.dir_)) {}
    Pin& operator=(Pin&&) = delete;
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;

   private:
    VersionPins* pins_ = nullptr;
    std::filesystem::path dir_;
  };
  [[nodiscard]] Pin pin(const std::filesystem::path& dir);
  [[nodiscard]] bool pinned(const std::filesystem::path& dir) const;

 private:
  void unpin(const std::filesystem::path& dir);
  mutable base::Mutex mu_;
  std::map<std::filesystem::path, size_t> held_ SKILLBOX_GUARDED_BY(mu_);
};

/// What an upload did.
struct StoredUpload {
  std::string digest;
  std::string version;   // the manifest's `version`
  bool changed = false;  // the current version changed (false: this digest was already current)
};

/// Stores `files` as a version of `id` in `data_dir` and makes it current (see above). Problems: 422
/// `invalid_skill` (the files are not a valid skill: the message says why, without host paths), 422
/// `id_mismatch` (the manifest's id is not `id`), 500 `internal` (the disk failed; nothing changed).
[[nodiscard]] Result<StoredUpload, SkillProblem> store_upload(const std::filesystem::path& data_dir,
                                                              std::string_view id, const SkillFiles& files,
                                                              size_t keep_versions, const VersionPins& pins);

/// Deletes the uploaded skill `id` of `data_dir` (under the id's lock, as an upload): first its `current`
/// file — from then on the id is not served (GET and runs answer 404, MCP lists it no more) — then every
/// version folder no run holds (one a run holds is removed by the id's next upload or delete). The id's
/// store and workspace stay: they belong to the tenant's id, and a new upload of it finds them. Returns
/// the digest that was current. Problems: 404 `skill_not_found` (no current version of `id`), 500
/// `internal` (the disk failed; nothing changed). `id` must follow the id rule.
[[nodiscard]] Result<std::string, SkillProblem> delete_upload(const std::filesystem::path& data_dir,
                                                              std::string_view id, const VersionPins& pins);

/// Why a skill a tenant sent (an upload or an inline skill) may not run with the permissions its own
/// manifest grants, or std::nullopt. Only the operator may open the private network to a skill: a
/// tenant's code asking for permissions.http.allow_private_addresses is 422 `permission_not_allowed`
/// (it would reach the operator's internal services and cloud metadata endpoints).
[[nodiscard]] std::optional<SkillProblem> sent_skill_problem(const Skill& skill);

/// Writes `files` into the existing, empty folder `dir` (files 0600, folders 0700). False on failure.
[[nodiscard]] bool write_skill_files(const std::filesystem::path& dir, const SkillFiles& files);

/// `inner` (the tenant's registry), except that every version folder of an uploaded id in `data_dir`
/// owns that id: a new version keeps the id's store and workspace.
[[nodiscard]] std::shared_ptr<state::BindingRegistry> upload_bindings(
    std::shared_ptr<state::BindingRegistry> inner, std::filesystem::path data_dir);

}  // namespace skillbox::server
