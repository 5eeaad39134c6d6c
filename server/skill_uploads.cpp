// server/skill_uploads.cpp — see skill_uploads.h.
#include "server/skill_uploads.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "base/file_read.h"
#include "base/skill_id.h"
#include "base/unique_fd.h"
#include "state/data_layout.h"

namespace skillbox::server {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLockFile = state::DataLayout::kUploadLock;
constexpr const char* kStagingPrefix = state::DataLayout::kUploadStagingPrefix;

fs::path versions_dir(const fs::path& data_dir, std::string_view id) {
  return state::DataLayout(data_dir).upload_dir(id) / state::DataLayout::kVersionsFolder;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

/// Writes `text` to a new file `path` (0600), durably.
bool write_new_file(const fs::path& path, std::string_view text) {
  const base::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return fd && write_all(fd.get(), text) && ::fsync(fd.get()) == 0;
}

void sync_dir(const fs::path& dir) {
  const base::UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) (void)::fsync(fd.get());
}

/// A fresh folder `parent/PREFIXxxxxxx` (0700), or an empty path.
fs::path make_temp_dir(const fs::path& parent, const char* prefix) {
  std::string pattern = (parent / (std::string(prefix) + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return {};
  return pattern;
}

/// flock(2) on DATA/uploads/<id>/.lock for as long as it lives.
class UploadLock {
 public:
  explicit UploadLock(const fs::path& dir)
      : fd_(::open((dir / kLockFile).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) {
    while (fd_ && ::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  [[nodiscard]] bool held() const { return fd_.valid(); }

 private:
  base::UniqueFd fd_;  // closing it releases the lock
};

/// Makes `digest` the current version of the id whose folder is `dir`: a new `current` file renamed over
/// the old one. False on failure (the old one stays).
bool set_current(const fs::path& dir, const std::string& digest) {
  const fs::path tmp = dir / (state::DataLayout::kCurrentTempPrefix + digest);
  ::unlink(tmp.c_str());  // left by a crash
  if (!write_new_file(tmp, digest + "\n")) return false;
  if (::rename(tmp.c_str(), (dir / state::DataLayout::kCurrentVersion).c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  sync_dir(dir);
  return true;
}

/// Removes the versions of `versions` beyond the newest `keep` (by the time each was last made
/// current; 0: all), never `current` and never one a run holds.
void prune(const fs::path& versions, const std::string& current, size_t keep, const VersionPins& pins) {
  std::vector<std::pair<fs::file_time_type, fs::path>> all;
  std::error_code ec;
  for (fs::directory_iterator it(versions, ec), end; !ec && it != end; it.increment(ec)) {
    if (is_digest(it->path().filename().string())) all.emplace_back(it->last_write_time(ec), it->path());
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < all.size(); ++i) {
    const fs::path& dir = all[i].second;
    // Runs pin the folder as Skill::dir() names it: canonical.
    if (dir.filename() == current || pins.pinned(fs::weakly_canonical(dir, ec))) continue;
    fs::remove_all(dir, ec);
  }
}

SkillProblem disk_problem(const std::string& what) {
  return SkillProblem{500, "internal", "could not store the upload: " + what + "; nothing changed"};
}

/// Stages `files` in a fresh folder of `dir` and loads them as the skill `id`.
Result<std::pair<fs::path, std::string>, SkillProblem> stage(const fs::path& dir, std::string_view id,
                                                             const SkillFiles& files) {
  const fs::path staging = make_temp_dir(dir, kStagingPrefix);
  if (staging.empty()) return disk_problem("no staging folder");
  std::error_code ec;
  if (!write_skill_files(staging, files)) {
    fs::remove_all(staging, ec);
    return disk_problem("writing the files failed");
  }
  Result<Skill, SkillProblem> skill = load_skill_folder(staging, id);
  if (!skill) {
    fs::remove_all(staging, ec);
    return skill.error();
  }
  if (std::optional<SkillProblem> refused = sent_skill_problem(*skill)) {
    fs::remove_all(staging, ec);
    return *refused;
  }
  // The loader gives a skill.json skill the id it is served under; what the manifest itself claims is
  // read apart (a bundle's manifest.json id is never replaced).
  std::string claimed = skill->manifest().id;
  if (!files.contains("manifest.json")) {
    if (Result<Manifest> m = Skill::parse_manifest(files.at("skill.json")); m) claimed = m->id;
  }
  if (claimed != id) {
    fs::remove_all(staging, ec);
    return SkillProblem{422, "id_mismatch",
                        "the manifest's id is \"" + claimed + "\", but the upload is to \"" +
                            std::string(id) + "\"; upload it to /v1/skills/" + claimed +
                            " or change the manifest's id"};
  }
  return std::make_pair(staging, skill->manifest().version);
}

}  // namespace

VersionPins::Pin::~Pin() {
  if (pins_ != nullptr) pins_->unpin(dir_);
}

VersionPins::Pin VersionPins::pin(const fs::path& dir) {
  base::MutexLock lock(mu_);
  ++held_[dir];
  return Pin(this, dir);
}

bool VersionPins::pinned(const fs::path& dir) const {
  base::MutexLock lock(mu_);
  return held_.contains(dir);
}

void VersionPins::unpin(const fs::path& dir) {
  base::MutexLock lock(mu_);
  const auto it = held_.find(dir);
  if (it != held_.end() && --it->second == 0) held_.erase(it);
}

std::optional<UploadedVersion> current_upload(const fs::path& data_dir, std::string_view id) {
  if (data_dir.empty() || !base::is_valid_skill_id(id)) return std::nullopt;
  const fs::path dir = state::DataLayout(data_dir).upload_dir(id);
  auto text = base::read_file((dir / state::DataLayout::kCurrentVersion).c_str(), {.max_bytes = 128});
  if (!text) return std::nullopt;
  std::string digest = std::move(*text);
  while (!digest.empty() && digest.back() == '\n') digest.pop_back();
  if (!is_digest(digest)) return std::nullopt;
  UploadedVersion v{.dir = dir / state::DataLayout::kVersionsFolder / digest, .digest = digest};
  std::error_code ec;
  if (!fs::is_directory(v.dir, ec)) return std::nullopt;
  return v;
}

std::vector<std::string> uploaded_ids(const fs::path& data_dir, size_t limit) {
  std::vector<std::string> ids;
  if (data_dir.empty()) return ids;
  std::error_code ec;
  const fs::path root = data_dir / state::DataLayout::kUploadsFolder;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end && ids.size() < limit; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (base::is_valid_skill_id(name) && current_upload(data_dir, name)) ids.push_back(name);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::optional<SkillProblem> sent_skill_problem(const Skill& skill) {
  if (skill.manifest().permissions.http.allow_private_addresses) {
    return SkillProblem{422, "permission_not_allowed",
                        "permissions.http.allow_private_addresses: a skill sent by a tenant may not reach "
                        "private addresses; only a skill of the operator's skills folder may"};
  }
  return std::nullopt;
}

bool write_skill_files(const fs::path& dir, const SkillFiles& files) {
  for (const auto& [path, content] : files) {
    // Paths were checked (file_path_problem): relative, no "..", no empty component.
    const fs::path target = dir / path;
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) return false;
    if (!write_new_file(target, content)) return false;
  }
  return true;
}

Result<StoredUpload, SkillProblem> store_upload(const fs::path& data_dir, std::string_view id,
                                                const SkillFiles& files, size_t keep_versions,
                                                const VersionPins& pins) {
  const fs::path dir = state::DataLayout(data_dir).upload_dir(id);
  const fs::path versions = versions_dir(data_dir, id);
  std::error_code ec;
  fs::create_directories(versions, ec);
  if (ec) return disk_problem("cannot create the uploads folder");
  Result<std::pair<fs::path, std::string>, SkillProblem> staged = stage(dir, id, files);
  if (!staged) return staged.error();
  const auto& [staging, version] = *staged;
  StoredUpload out{.digest = skill_digest(files), .version = version, .changed = true};
  const UploadLock lock(dir);
  if (!lock.held()) {
    fs::remove_all(staging, ec);
    return disk_problem("cannot lock the uploads folder");
  }
  const fs::path target = versions / out.digest;
  if (fs::is_directory(target, ec)) {
    fs::remove_all(staging, ec);  // the same files were uploaded before: keep that folder
  } else if (::rename(staging.c_str(), target.c_str()) != 0) {
    fs::remove_all(staging, ec);
    return disk_problem("cannot move the new version into place");
  }
  sync_dir(versions);
  const std::optional<UploadedVersion> before = current_upload(data_dir, id);
  out.changed = !before || before->digest != out.digest;
  if (out.changed) {
    fs::last_write_time(target, fs::file_time_type::clock::now(), ec);  // the pruning order
    if (!set_current(dir, out.digest)) return disk_problem("cannot switch the current version");
    prune(versions, out.digest, std::max<size_t>(keep_versions, 1), pins);
  }
  return out;
}

Result<std::string, SkillProblem> delete_upload(const fs::path& data_dir, std::string_view id,
                                                const VersionPins& pins) {
  const SkillProblem not_found{404, "skill_not_found", "no uploaded skill \"" + std::string(id) + "\""};
  const fs::path dir = state::DataLayout(data_dir).upload_dir(id);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found;  // the lock file lives in it: never create it here
  const UploadLock lock(dir);
  if (!lock.held()) {
    return SkillProblem{500, "internal",
                        "could not delete the upload: cannot lock its folder; nothing changed"};
  }
  const std::optional<UploadedVersion> current = current_upload(data_dir, id);  // under the lock
  if (!current) return not_found;
  if (::unlink((dir / state::DataLayout::kCurrentVersion).c_str()) != 0) {
    return SkillProblem{500, "internal",
                        "could not delete the upload: cannot remove its current version; "
                        "nothing changed"};
  }
  sync_dir(dir);
  prune(versions_dir(data_dir, id), "", 0, pins);
  return current->digest;
}

namespace {

/// See upload_bindings.
class UploadBindings final : public state::BindingRegistry {
 public:
  UploadBindings(std::shared_ptr<state::BindingRegistry> inner, fs::path data_dir)
      : inner_(std::move(inner)), data_dir_(std::move(data_dir)) {}

  Result<SkillBinding> bind(std::string_view id, const fs::path& dir) override {
    if (is_version(id, dir)) return SkillBinding{.id = std::string(id), .dir = dir, .problem = {}};
    return inner_->bind(id, dir);
  }
  Result<void> check(std::string_view id, const fs::path& dir) const override {
    if (is_version(id, dir)) return {};
    return inner_->check(id, dir);
  }
  Result<SkillBinding> rebind(std::string_view id, const fs::path& dir) override {
    return inner_->rebind(id, dir);
  }
  Result<std::vector<SkillBinding>> list() const override { return inner_->list(); }

 private:
  /// `dir` (canonical, as Skill::dir()) is a version folder of the uploaded id `id`.
  [[nodiscard]] bool is_version(std::string_view id, const fs::path& dir) const {
    if (data_dir_.empty() || !base::is_valid_skill_id(id) || !is_digest(dir.filename().string()))
      return false;
    std::error_code ec;
    const fs::path versions = fs::weakly_canonical(versions_dir(data_dir_, id), ec);
    return !ec && dir.parent_path() == versions;
  }

  std::shared_ptr<state::BindingRegistry> inner_;
  fs::path data_dir_;
};

}  // namespace

std::shared_ptr<state::BindingRegistry> upload_bindings(std::shared_ptr<state::BindingRegistry> inner,
                                                        fs::path data_dir) {
  return std::make_shared<UploadBindings>(std::move(inner), std::move(data_dir));
}

}  // namespace skillbox::server
