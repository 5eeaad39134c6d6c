// state/data_layout.h — where the local backends keep a data directory's state on disk.
//
// The one place that spells the layout of a data directory (docs/store.md, docs/fs.md, docs/openhuman.md
// "db", docs/manifest.md "Identity"):
//
//   ROOT/store.sqlite                     the key-value store of every skill (SQLite, WAL)
//   ROOT/bindings/<id>                    which skill folder owns <id> (one owner file per id)
//   ROOT/skills/<id>/workspace/           the skill's files (openhuman.fs)
//   ROOT/skills/<id>/workspace.lock       serialises workspace mutations of concurrent invocations
//   ROOT/skills/<id>/db.sqlite            an OpenHuman bundle's database, and its lease db.lock
//   ROOT/audit.jsonl                      the audit log of invocations, when an audit sink is asked for
//   ROOT/runs.sqlite                      a tenant's async runs on `skillbox serve` (SQLite, WAL)
//   ROOT/uploads/<id>/versions/<digest>/  a skill uploaded to `skillbox serve` (PUT /v1/skills/<id>), one
//                                         folder per version, named by its digest (docs/server.md)
//   ROOT/uploads/<id>/current             the digest of the version served, replaced by rename(2)
//   ROOT/uploads/<id>/.lock               serialises the uploads of <id>; .staging-* and .current-* are
//                                         an upload's temporaries (names no digest or id starts with)
//
// Code that walks the tree with directory file descriptors (openat2 beneath the root) uses the
// component names below; code that needs a whole path asks for it. Nothing else in skillbox spells a
// file name of the data directory.
#pragma once

#include <filesystem>
#include <string_view>

namespace skillbox::state {

class DataLayout {
 public:
  // Component names, relative to the folder named in each comment.
  static constexpr const char* kStoreDatabase = "store.sqlite";  // ROOT
  static constexpr const char* kBindingsFolder = "bindings";     // ROOT
  static constexpr const char* kSkillsFolder = "skills";         // ROOT
  static constexpr const char* kAuditLog = "audit.jsonl";        // ROOT
  static constexpr const char* kRunLedger = "runs.sqlite";       // ROOT
  static constexpr const char* kUploadsFolder = "uploads";       // ROOT
  static constexpr const char* kVersionsFolder = "versions";     // ROOT/uploads/<id>
  static constexpr const char* kCurrentVersion = "current";      // ROOT/uploads/<id>
  static constexpr const char* kUploadLock = ".lock";            // ROOT/uploads/<id>
  static constexpr const char* kUploadStagingPrefix = ".staging-";
  static constexpr const char* kCurrentTempPrefix = ".current-";
  static constexpr const char* kWorkspaceFolder = "workspace";  // ROOT/skills/<id>
  static constexpr const char* kWorkspaceLock = "workspace.lock";
  static constexpr const char* kBundleDb = "db.sqlite";
  static constexpr const char* kBundleDbLock = "db.lock";
  static constexpr const char* kBundleDbTemp = ".db.sqlite.tmp";
  // Left behind by an older skillbox that wrote db.sqlite through SQLite's rollback journal.
  static constexpr const char* kBundleDbJournal = "db.sqlite-journal";

  /// `root` is the data directory (HostOptions::data_dir resolved): absolute, or empty when none could
  /// be found (every backend then refuses with a message saying to set $SKILLBOX_HOME or --data-dir).
  explicit DataLayout(std::filesystem::path root) : root_(std::move(root)) {}

  [[nodiscard]] const std::filesystem::path& root() const { return root_; }
  [[nodiscard]] bool empty() const { return root_.empty(); }

  [[nodiscard]] std::filesystem::path store_database() const { return root_ / kStoreDatabase; }
  [[nodiscard]] std::filesystem::path bindings_dir() const { return root_ / kBindingsFolder; }
  /// `id` must already follow the skill-id rule (base/skill_id.h): it becomes one path component.
  [[nodiscard]] std::filesystem::path owner_file(std::string_view id) const { return bindings_dir() / id; }
  [[nodiscard]] std::filesystem::path skills_dir() const { return root_ / kSkillsFolder; }
  [[nodiscard]] std::filesystem::path skill_dir(std::string_view id) const { return skills_dir() / id; }
  [[nodiscard]] std::filesystem::path workspace_dir(std::string_view id) const {
    return skill_dir(id) / kWorkspaceFolder;
  }
  [[nodiscard]] std::filesystem::path bundle_db(std::string_view id) const {
    return skill_dir(id) / kBundleDb;
  }
  [[nodiscard]] std::filesystem::path audit_log() const { return root_ / kAuditLog; }
  [[nodiscard]] std::filesystem::path run_ledger() const { return root_ / kRunLedger; }
  /// `id` must already follow the skill-id rule: the uploaded versions of skill `id`.
  [[nodiscard]] std::filesystem::path upload_dir(std::string_view id) const {
    return root_ / kUploadsFolder / id;
  }

 private:
  std::filesystem::path root_;
};

}  // namespace skillbox::state
