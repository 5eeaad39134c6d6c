// state/local_store_backend.cpp — the local StoreBackend: one SQLite connection per session on the data
// directory's store file (skillbox/store.h does the storage; this file only adapts it).
#include <utility>

#include "skillbox/store.h"
#include "state/store_backend.h"

namespace skillbox::state {
namespace {

class LocalStoreSession final : public StoreSession {
 public:
  explicit LocalStoreSession(SkillStore store) : store_(std::move(store)) {}

  StoreResult<std::optional<std::string>> get(std::string_view key) override { return store_.get(key); }
  StoreResult<StoreOk> set(std::string_view key, std::string_view value_json) override {
    return store_.set(key, value_json);
  }
  StoreResult<bool> remove(std::string_view key) override { return store_.remove(key); }
  StoreResult<std::vector<std::string>> keys(std::string_view prefix) override { return store_.keys(prefix); }
  StoreResult<double> increment(std::string_view key, double delta) override {
    return store_.increment(key, delta);
  }
  StoreResult<bool> compare_and_set(std::string_view key, const std::optional<std::string>& expected_json,
                                    const std::optional<std::string>& value_json) override {
    return store_.compare_and_set(key, expected_json, value_json);
  }

 private:
  SkillStore store_;  // keeps its connection (StoreDatabase) alive
};

class LocalStoreBackend final : public StoreBackend {
 public:
  explicit LocalStoreBackend(DataLayout layout) : layout_(std::move(layout)) {}

  StoreResult<std::unique_ptr<StoreSession>> open_skill(std::string_view skill_id, const StorePolicy& policy,
                                                        const StoreOpenOptions& options) override {
    // Refused before anything is opened or created.
    if (auto e = StoreDatabase::check_skill_id(skill_id)) return *e;
    // Never a path relative to the working directory.
    if (layout_.empty())
      return StoreError{
          StoreErrc::io_error,
          "no data directory: set $SKILLBOX_HOME or pass one (--data-dir, HostOptions::data_dir)"};
    auto db = StoreDatabase::open(layout_.store_database(), options);
    if (!db) return db.error();
    auto view = db->skill(skill_id, policy);
    if (!view) return view.error();
    return std::unique_ptr<StoreSession>(std::make_unique<LocalStoreSession>(std::move(*view)));
  }

 private:
  const DataLayout layout_;
};

}  // namespace

std::shared_ptr<StoreBackend> make_local_store_backend(const DataLayout& layout) {
  return std::make_shared<LocalStoreBackend>(layout);
}

}  // namespace skillbox::state
