// pg/binding_registry.cpp — the PostgreSQL BindingRegistry.
#include "pg/binding_registry.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "base/escape.h"
#include "base/shell_word.h"
#include "base/skill_id.h"
#include "base/utf8.h"

namespace skillbox::pg {
namespace {

namespace fs = std::filesystem;

const std::string kOwner = "SELECT dir FROM skill_bindings WHERE tenant = $1 AND id = $2";
const std::string kBindIfFree =
    "INSERT INTO skill_bindings (tenant, id, dir) VALUES ($1, $2, $3) ON CONFLICT (tenant, id) DO NOTHING";
const std::string kRebind =
    "INSERT INTO skill_bindings (tenant, id, dir) VALUES ($1, $2, $3) "
    "ON CONFLICT (tenant, id) DO UPDATE SET dir = EXCLUDED.dir, bound_at = now()";
const std::string kList = "SELECT id, dir FROM skill_bindings WHERE tenant = $1 ORDER BY id";

/// How long a call waits for a pooled connection.
constexpr std::chrono::seconds kWait{10};

std::string shown(const fs::path& p) {
  return "\"" + base::escape_text_capped(p.string(), 300, "...") + "\"";
}

std::string shown_id(std::string_view id) {
  return "\"" + base::escape_text_capped(id, 80, "...") + "\"";
}

Error from_pg(const PgError& e) {
  return Error{"skill bindings: " + e.message};
}

// `dir` made absolute and canonical; the same checks and words as the local registry.
Result<fs::path> canonical_folder(std::string_view id, const fs::path& dir) {
  if (!base::is_valid_skill_id(id))
    return Error{"skill id " + shown_id(id) + " is not valid: expected " + std::string(base::kSkillIdRule)};
  std::error_code ec;
  fs::path root = fs::canonical(dir, ec);
  if (ec) return Error{"cannot open skill folder " + shown(dir) + ": " + ec.message()};
  if (!fs::is_directory(root, ec))
    return Error{"cannot bind skill id " + shown_id(id) + " to " + shown(dir) + ": not a folder"};
  if (!base::utf8::is_valid(root.string()))
    return Error{"cannot bind skill id " + shown_id(id) + " to " + shown(root) +
                 ": the database keeps folder paths as UTF-8 and this one is not; rename the folder"};
  return root;
}

Error owned_elsewhere(std::string_view id, const fs::path& owner, const fs::path& root) {
  std::error_code ec;
  const bool gone = !fs::exists(owner, ec);
  return Error{"skill id " + shown_id(id) + " belongs to the folder " + shown(owner) +
               (gone ? " (which no longer exists)" : "") + " in this tenant's database, not to " +
               shown(root) +
               ". If this folder should own the id (and its store, workspace and secrets) from now on, "
               "rebind it: skillbox skills rebind " +
               base::shell_word(root.string()) + " --id " + std::string(id) +
               " against the same database (embedders: BindingRegistry::rebind); otherwise give this skill "
               "another id in its skill.json"};
}

class PgBindingRegistry final : public state::BindingRegistry {
 public:
  PgBindingRegistry(std::shared_ptr<Pool> pool, std::string tenant)
      : pool_(std::move(pool)), tenant_(std::move(tenant)) {}

  Result<SkillBinding> bind(std::string_view id, const fs::path& dir) override {
    auto root = canonical_folder(id, dir);
    if (!root) return root.error();
    auto lease = pool_->acquire(std::chrono::steady_clock::now() + kWait);
    if (!lease) return from_pg(lease.error());
    // A single statement each: the insert either makes this folder the owner or changes nothing.
    if (auto r = (*lease)->exec("binding a skill id", kBindIfFree, {tenant_, id, root->string()}); !r)
      return from_pg(r.error());
    auto owner = (*lease)->exec("reading a skill id's owner", kOwner, {tenant_, id});
    if (!owner) return from_pg(owner.error());
    if (owner->empty())
      return Error{"cannot bind skill id " + shown_id(id) + ": its owner vanished; try again"};
    const fs::path found = owner->at(0, 0).value_or("");
    if (found != *root) return owned_elsewhere(id, found, *root);
    return SkillBinding{std::string(id), *root, {}};
  }

  Result<void> check(std::string_view id, const fs::path& dir) const override {
    auto root = canonical_folder(id, dir);
    if (!root) return root.error();
    auto lease = pool_->acquire(std::chrono::steady_clock::now() + kWait);
    if (!lease) return from_pg(lease.error());
    auto owner = (*lease)->exec("reading a skill id's owner", kOwner, {tenant_, id});
    if (!owner) return from_pg(owner.error());
    if (owner->empty()) return {};
    const fs::path found = owner->at(0, 0).value_or("");
    if (found != *root) return owned_elsewhere(id, found, *root);
    return {};
  }

  Result<SkillBinding> rebind(std::string_view id, const fs::path& dir) override {
    auto root = canonical_folder(id, dir);
    if (!root) return root.error();
    auto lease = pool_->acquire(std::chrono::steady_clock::now() + kWait);
    if (!lease) return from_pg(lease.error());
    if (auto r = (*lease)->exec("rebinding a skill id", kRebind, {tenant_, id, root->string()}); !r)
      return from_pg(r.error());
    return SkillBinding{std::string(id), *root, {}};
  }

  Result<std::vector<SkillBinding>> list() const override {
    auto lease = pool_->acquire(std::chrono::steady_clock::now() + kWait);
    if (!lease) return from_pg(lease.error());
    auto rows = (*lease)->exec("listing skill bindings", kList, {tenant_});
    if (!rows) return from_pg(rows.error());
    std::vector<SkillBinding> out;
    for (const auto& row : rows->rows)
      out.push_back(SkillBinding{row.at(0).value_or(""), fs::path(row.at(1).value_or("")), {}});
    return out;
  }

 private:
  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
};

}  // namespace

std::shared_ptr<state::BindingRegistry> make_pg_binding_registry(std::shared_ptr<Pool> pool,
                                                                 std::string tenant) {
  return std::make_shared<PgBindingRegistry>(std::move(pool), std::move(tenant));
}

}  // namespace skillbox::pg
