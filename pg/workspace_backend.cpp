// pg/workspace_backend.cpp — the PostgreSQL WorkspaceBackend.
#include "pg/workspace_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/skill_id.h"
#include "pg/bytea.h"
#include "pg/transaction.h"

namespace skillbox::pg {
namespace {

using state::WorkspaceErrc;
using state::WorkspaceError;
using state::WorkspaceQuota;
using state::WorkspaceResult;
using state::WorkspaceStat;

// $1 tenant, $2 skill throughout; paths and data travel as bytea in hex text ("\x...").
const std::string kLockUsage =
    "INSERT INTO workspace_usage (tenant, skill) VALUES ($1, $2) ON CONFLICT (tenant, skill) "
    "DO UPDATE SET entries = workspace_usage.entries RETURNING bytes, entries";
// Totals are set, not added to: computed under the row's lock, clamped at 0, so rows changed behind the
// backend's back never drive them negative.
const std::string kSetUsage =
    "UPDATE workspace_usage SET bytes = $3, entries = $4 WHERE tenant = $1 AND skill = $2";
const std::string kLookup =
    "SELECT is_dir, size, mtime_ms FROM workspace_entries WHERE tenant = $1 AND skill = $2 AND path = $3";
const std::string kData =
    "SELECT data FROM workspace_entries WHERE tenant = $1 AND skill = $2 AND path = $3 AND NOT is_dir";
const std::string kList =
    "SELECT name, is_dir FROM workspace_entries WHERE tenant = $1 AND skill = $2 AND parent = $3 ORDER BY "
    "name";
const std::string kInsert =
    "INSERT INTO workspace_entries (tenant, skill, path, parent, name, is_dir, data, size, mtime_ms) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
const std::string kReplaceData =
    "UPDATE workspace_entries SET data = $4, size = $5, mtime_ms = $6 "
    "WHERE tenant = $1 AND skill = $2 AND path = $3";
const std::string kAppendData =
    "UPDATE workspace_entries SET data = data || $4::bytea, size = $5, mtime_ms = $6 "
    "WHERE tenant = $1 AND skill = $2 AND path = $3";
const std::string kDeleteOne = "DELETE FROM workspace_entries WHERE tenant = $1 AND skill = $2 AND path = $3";
// What lies below a directory: $3 its path followed by '/', $4 that prefix's length in bytes.
const std::string kBelow =
    "SELECT count(*), coalesce(sum(size), 0) FROM workspace_entries "
    "WHERE tenant = $1 AND skill = $2 AND substring(path from 1 for $4::int) = $3::bytea";
const std::string kDeleteBelow =
    "DELETE FROM workspace_entries WHERE tenant = $1 AND skill = $2 "
    "AND substring(path from 1 for $4::int) = $3::bytea";
// A rename: the entry itself ($3 from, $4 to, $5 to's parent, $6 to's name), then what lies below it
// ($3 from + '/', $4 its length, $5 to + '/').
const std::string kMoveOne =
    "UPDATE workspace_entries SET path = $4, parent = $5, name = $6 WHERE tenant = $1 AND skill = $2 AND "
    "path = $3";
const std::string kMoveBelow =
    "UPDATE workspace_entries SET path = $5::bytea || substring(path from $4::int + 1), "
    "parent = CASE WHEN parent = substring($3::bytea from 1 for $4::int - 1) "
    "THEN substring($5::bytea from 1 for length($5::bytea) - 1) "
    "ELSE $5::bytea || substring(parent from $4::int + 1) END "
    "WHERE tenant = $1 AND skill = $2 AND substring(path from 1 for $4::int) = $3::bytea";

const std::string kWrite = "BEGIN";
const std::string kRead = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// `bytes` as bytea's hex input (pg/bytea.h).
std::string bytea(std::string_view bytes) {
  return to_bytea(bytes);
}

std::string_view parent_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view(".") : path.substr(0, slash);
}

std::string_view name_of(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

WorkspaceError error(WorkspaceErrc code, uint64_t value = 0) {
  return WorkspaceError(code, value);
}

WorkspaceError second(WorkspaceError e) {
  e.second = true;
  return e;
}

// A failure of PostgreSQL as the workspace reports it: a wait that ran out is `busy`, the rest io.
WorkspaceError from_pg(const PgError& e) {
  if (e.sqlstate == kLockNotAvailable || e.sqlstate == kQueryCanceled || e.pool_exhausted || is_retryable(e))
    return error(WorkspaceErrc::busy, state::WorkspaceBackend::kLockWaitMs);
  WorkspaceError w(WorkspaceErrc::io);
  w.detail = "workspace: " + e.message;
  return w;
}

double now_ms() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count()) /
         1000.0;
}

template <typename R>
struct Unwrap;
template <typename T>
struct Unwrap<PgResult<T>> {
  using type = T;
};

/// One row of workspace_entries, as lookups need it.
struct Entry {
  bool is_dir = false;
  uint64_t size = 0;
  double mtime_ms = 0;
};

/// The totals a mutation found under its lock.
struct Usage {
  uint64_t bytes = 0;
  uint64_t entries = 0;
};

/// A change that grows a total above its limit is refused (a lowered quota never blocks shrinking).
WorkspaceResult<void> check_quota(const WorkspaceQuota& quota, const Usage& before, uint64_t bytes,
                                  uint64_t entries) {
  if (bytes > before.bytes && bytes > quota.quota_bytes) return error(WorkspaceErrc::quota_bytes, bytes);
  if (entries > before.entries && entries > quota.max_files)
    return error(WorkspaceErrc::quota_entries, entries);
  return {};
}

class PgWorkspaceSession final : public state::WorkspaceSession {
 public:
  PgWorkspaceSession(std::shared_ptr<Pool> pool, std::string tenant, std::string skill, bool writable,
                     const bus::StopToken& stop)
      : pool_(std::move(pool)),
        tenant_(std::move(tenant)),
        skill_(std::move(skill)),
        writable_(writable),
        stop_(stop) {}

  WorkspaceResult<void> read_file(std::string_view path, const std::function<bool(uint64_t)>& admit,
                                  bus::Bytes& out) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (path == ".") return error(WorkspaceErrc::is_directory);
    const std::string key = bytea(path);
    return in(kRead, [&](Connection& c) -> PgResult<WorkspaceResult<void>> {
      auto found = lookup(c, key);
      if (!found) return found.error();
      if (!*found) return why_missing(c, path, WorkspaceErrc::not_found);
      if ((*found)->is_dir) return WorkspaceResult<void>(error(WorkspaceErrc::is_directory));
      // Asked before a byte is fetched: the same snapshot then gives the data of that size.
      if (!admit((*found)->size)) return WorkspaceResult<void>(error(WorkspaceErrc::refused));
      auto rows = c.exec("reading a file", kData, {tenant_, skill_, key});
      if (!rows) return rows.error();
      std::optional<std::string> bytes = rows->empty() ? std::nullopt : from_bytea(rows->at(0, 0));
      if (!bytes || bytes->size() != (*found)->size) return WorkspaceResult<void>(damaged("a file's data"));
      out.assign(bytes->begin(), bytes->end());
      return WorkspaceResult<void>();
    });
  }

  WorkspaceResult<void> write_file(std::string_view path, std::span<const uint8_t> data, bool append,
                                   const WorkspaceQuota& quota) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (path == ".") return error(WorkspaceErrc::is_directory);
    if (auto ok = writable(); !ok) return ok.error();
    if (!append && data.size() > quota.max_file_bytes)
      return error(WorkspaceErrc::file_too_large, data.size());
    const std::string key = bytea(path);
    const std::string content =
        bytea(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
    return mutate([&](Connection& c, const Usage& usage) -> PgResult<WorkspaceResult<void>> {
      auto found = lookup(c, key);
      if (!found) return found.error();
      if (*found && (*found)->is_dir) return WorkspaceResult<void>(error(WorkspaceErrc::is_directory));
      if (!*found) {
        auto parent = need_directory(c, parent_of(path), WorkspaceErrc::parent_missing);
        if (!parent || !*parent) return parent;
      }
      const uint64_t old_size = *found ? (*found)->size : 0;
      const uint64_t new_size = (append ? old_size : 0) + data.size();
      if (new_size > quota.max_file_bytes)
        return WorkspaceResult<void>(error(WorkspaceErrc::file_too_large, new_size));
      const uint64_t bytes = usage.bytes - std::min(usage.bytes, old_size) + new_size;
      const uint64_t entries = usage.entries + (*found ? 0 : 1);
      if (auto ok = check_quota(quota, usage, bytes, entries); !ok) return WorkspaceResult<void>(ok.error());
      const std::string size = std::to_string(new_size);
      const std::string mtime = std::to_string(now_ms());
      PgResult<Rows> wrote = *found ? c.exec("writing a file", append ? kAppendData : kReplaceData,
                                             {tenant_, skill_, key, content, size, mtime})
                                    : insert(c, path, false, content, size, mtime);
      if (!wrote) return wrote.error();
      return set_usage(c, bytes, entries);
    });
  }

  WorkspaceResult<std::vector<bus::FsDirEntry>> list(std::string_view path) override {
    if (auto ok = usable(path); !ok) return ok.error();
    const std::string key = bytea(path);
    using Out = WorkspaceResult<std::vector<bus::FsDirEntry>>;
    return in(kRead, [&](Connection& c) -> PgResult<Out> {
      if (path != ".") {
        auto found = lookup(c, key);
        if (!found) return found.error();
        if (!*found) return why_missing<std::vector<bus::FsDirEntry>>(c, path, WorkspaceErrc::not_found);
        if (!(*found)->is_dir) return Out(error(WorkspaceErrc::not_directory));
      }
      auto rows = c.exec("listing a directory", kList, {tenant_, skill_, key});
      if (!rows) return rows.error();
      std::vector<bus::FsDirEntry> entries;
      entries.reserve(rows->rows.size());
      for (const auto& row : rows->rows) {
        std::optional<std::string> name = from_bytea(row.at(0));
        if (!name) return Out(damaged("an entry's name"));
        entries.push_back(
            bus::FsDirEntry{.name = std::move(*name),
                            .type = row.at(1) == "t" ? bus::FsEntryType::directory : bus::FsEntryType::file});
      }
      return Out(std::move(entries));
    });
  }

  WorkspaceResult<WorkspaceStat> stat(std::string_view path) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (path == ".") return WorkspaceStat{.type = bus::FsEntryType::directory, .size = 0, .mtime_ms = 0};
    const std::string key = bytea(path);
    using Out = WorkspaceResult<WorkspaceStat>;
    return in(kRead, [&](Connection& c) -> PgResult<Out> {
      auto found = lookup(c, key);
      if (!found) return found.error();
      if (!*found) return why_missing<WorkspaceStat>(c, path, WorkspaceErrc::not_found);
      const Entry& e = **found;
      return Out(WorkspaceStat{.type = e.is_dir ? bus::FsEntryType::directory : bus::FsEntryType::file,
                               .size = e.is_dir ? 0 : e.size,
                               .mtime_ms = e.mtime_ms});
    });
  }

  WorkspaceResult<bool> exists(std::string_view path) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (path == ".") return true;
    const std::string key = bytea(path);
    return in(kRead, [&](Connection& c) -> PgResult<WorkspaceResult<bool>> {
      auto found = lookup(c, key);
      if (!found) return found.error();
      return WorkspaceResult<bool>(found->has_value());
    });
  }

  WorkspaceResult<void> mkdir(std::string_view path, bool recursive, const WorkspaceQuota& quota) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (auto ok = writable(); !ok) return ok.error();
    if (path == ".")
      return recursive ? WorkspaceResult<void>() : WorkspaceResult<void>(error(WorkspaceErrc::exists));
    return mutate([&](Connection& c, const Usage& usage) -> PgResult<WorkspaceResult<void>> {
      // The directories to create, outermost first.
      std::vector<std::string_view> missing;
      if (recursive) {
        for (size_t end = 0; end != std::string_view::npos;) {
          end = path.find('/', end + 1);
          const std::string_view prefix = path.substr(0, end);
          auto found = lookup(c, bytea(prefix));
          if (!found) return found.error();
          if (!*found) {
            missing.push_back(prefix);
          } else if (!(*found)->is_dir) {
            return WorkspaceResult<void>(error(prefix.size() == path.size()
                                                   ? WorkspaceErrc::not_directory
                                                   : WorkspaceErrc::not_a_directory));
          }
        }
      } else {
        auto found = lookup(c, bytea(path));
        if (!found) return found.error();
        if (*found) return WorkspaceResult<void>(error(WorkspaceErrc::exists));
        auto parent = need_directory(c, parent_of(path), WorkspaceErrc::parent_missing);
        if (!parent || !*parent) return parent;
        missing.push_back(path);
      }
      if (missing.empty()) return WorkspaceResult<void>();
      if (auto ok = check_quota(quota, usage, usage.bytes, usage.entries + missing.size()); !ok)
        return WorkspaceResult<void>(ok.error());
      const std::string mtime = std::to_string(now_ms());
      for (const std::string_view dir : missing) {
        if (auto r = insert(c, dir, true, std::nullopt, "0", mtime); !r) return r.error();
      }
      return set_usage(c, usage.bytes, usage.entries + missing.size());
    });
  }

  WorkspaceResult<void> remove(std::string_view path, bool recursive) override {
    if (auto ok = usable(path); !ok) return ok.error();
    if (path == ".") return error(WorkspaceErrc::invalid_path);
    if (auto ok = writable(); !ok) return ok.error();
    const std::string key = bytea(path);
    return mutate([&](Connection& c, const Usage& usage) -> PgResult<WorkspaceResult<void>> {
      auto found = lookup(c, key);
      if (!found) return found.error();
      if (!*found) return why_missing(c, path, WorkspaceErrc::not_found);
      uint64_t entries = 1;
      uint64_t bytes = (*found)->size;
      if ((*found)->is_dir) {
        const std::string prefix = std::string(path) + "/";
        const std::string below = bytea(prefix);
        const std::string length = std::to_string(prefix.size());
        auto counted = c.exec("counting a directory's entries", kBelow, {tenant_, skill_, below, length});
        if (!counted) return counted.error();
        const uint64_t n = std::stoull(counted->at(0, 0).value_or("0"));
        if (n > 0 && !recursive) return WorkspaceResult<void>(error(WorkspaceErrc::not_empty));
        if (n > 0) {
          if (auto r =
                  c.exec("removing a directory's entries", kDeleteBelow, {tenant_, skill_, below, length});
              !r)
            return r.error();
        }
        entries += n;
        bytes = std::stoull(counted->at(0, 1).value_or("0"));
      }
      if (auto r = c.exec("removing an entry", kDeleteOne, {tenant_, skill_, key}); !r) return r.error();
      return set_usage(c, usage.bytes - std::min(usage.bytes, bytes),
                       usage.entries - std::min(usage.entries, entries));
    });
  }

  WorkspaceResult<void> rename(std::string_view from, std::string_view to) override {
    if (auto ok = usable(from); !ok) return ok.error();
    if (!state::is_workspace_path(to)) return second(error(WorkspaceErrc::invalid_path));
    if (from == "." || to == ".") return error(WorkspaceErrc::invalid_path);
    if (auto ok = writable(); !ok) return ok.error();
    const std::string from_key = bytea(from);
    const std::string to_key = bytea(to);
    return mutate([&](Connection& c, const Usage& usage) -> PgResult<WorkspaceResult<void>> {
      auto source = lookup(c, from_key);
      if (!source) return source.error();
      if (!*source) return why_missing(c, from, WorkspaceErrc::not_found);
      if (from == to) return WorkspaceResult<void>();
      if (to.size() > from.size() && to.starts_with(from) && to[from.size()] == '/')
        return WorkspaceResult<void>(second(error(WorkspaceErrc::into_itself)));
      auto parent = need_directory(c, parent_of(to), WorkspaceErrc::parent_missing);
      if (!parent) return parent.error();
      if (!*parent) return WorkspaceResult<void>(second(parent->error()));
      auto target = lookup(c, to_key);
      if (!target) return target.error();
      if (*target) {
        const bool from_dir = (*source)->is_dir;
        const bool to_dir = (*target)->is_dir;
        if (!from_dir && to_dir)
          return WorkspaceResult<void>(second(error(WorkspaceErrc::file_over_directory)));
        if (from_dir && !to_dir)
          return WorkspaceResult<void>(second(error(WorkspaceErrc::directory_over_file)));
        if (to_dir) {
          const std::string prefix = std::string(to) + "/";
          auto counted = c.exec("counting a directory's entries", kBelow,
                                {tenant_, skill_, bytea(prefix), std::to_string(prefix.size())});
          if (!counted) return counted.error();
          if (counted->at(0, 0) != "0") return WorkspaceResult<void>(second(error(WorkspaceErrc::not_empty)));
        }
        if (auto r = c.exec("replacing an entry", kDeleteOne, {tenant_, skill_, to_key}); !r)
          return r.error();
        const uint64_t size = (*target)->size;
        if (auto r = set_usage(c, usage.bytes - std::min(usage.bytes, size),
                               usage.entries - std::min<uint64_t>(usage.entries, 1));
            !r || !*r)
          return r;
      }
      const std::string to_parent = bytea(parent_of(to));
      const std::string to_name = bytea(name_of(to));
      if (auto r =
              c.exec("renaming an entry", kMoveOne, {tenant_, skill_, from_key, to_key, to_parent, to_name});
          !r)
        return r.error();
      if ((*source)->is_dir) {
        const std::string from_prefix = std::string(from) + "/";
        const std::string to_prefix = std::string(to) + "/";
        const std::string from_below = bytea(from_prefix);
        const std::string to_below = bytea(to_prefix);
        if (auto r = c.exec("moving a directory's entries", kMoveBelow,
                            {tenant_, skill_, from_below, std::to_string(from_prefix.size()), to_below});
            !r)
          return r.error();
      }
      return WorkspaceResult<void>();
    });
  }

 private:
  /// The checks every operation makes first: the path's syntax, and the stop token.
  WorkspaceResult<void> usable(std::string_view path) const {
    if (!state::is_workspace_path(path)) return error(WorkspaceErrc::invalid_path);
    if (stop_.stop_requested()) return error(WorkspaceErrc::stopped);
    return {};
  }

  WorkspaceResult<void> writable() const {
    if (!writable_) return error(WorkspaceErrc::denied);
    return {};
  }

  static WorkspaceError damaged(const std::string& what) {
    WorkspaceError e(WorkspaceErrc::io);
    e.detail = "workspace: " + what + " in the database is not what this backend wrote";
    return e;
  }

  std::chrono::steady_clock::time_point deadline() const {
    return std::chrono::steady_clock::now() + std::chrono::milliseconds(state::WorkspaceBackend::kLockWaitMs);
  }

  /// Runs `body` in one transaction begun with `begin`; a PostgreSQL failure becomes a WorkspaceError.
  template <typename Body>
  auto in(const std::string& begin, Body&& body) ->
      typename Unwrap<std::invoke_result_t<Body&, Connection&>>::type {
    using Out = typename Unwrap<std::invoke_result_t<Body&, Connection&>>::type;
    auto r = transact(*pool_, deadline(), body, begin);
    if (!r) return Out(from_pg(r.error()));
    return std::move(*r);
  }

  /// One mutation: locks the skill's usage row (creating it), then runs `body` with the totals. A
  /// WorkspaceResult error from `body` rolls the whole transaction back.
  template <typename Body>
  WorkspaceResult<void> mutate(Body&& body) {
    return in(kWrite, [&](Connection& c) -> PgResult<WorkspaceResult<void>> {
      auto row = c.exec("locking the workspace's usage row", kLockUsage, {tenant_, skill_});
      if (!row) return row.error();
      const Usage usage{.bytes = std::stoull(row->at(0, 0).value_or("0")),
                        .entries = std::stoull(row->at(0, 1).value_or("0"))};
      // The last chance to stop: nothing has changed yet.
      if (stop_.stop_requested()) return WorkspaceResult<void>(error(WorkspaceErrc::stopped));
      return body(c, usage);
    });
  }

  PgResult<std::optional<Entry>> lookup(Connection& c, const std::string& key) {
    auto rows = c.exec("looking up a path", kLookup, {tenant_, skill_, key});
    if (!rows) return rows.error();
    if (rows->empty()) return std::optional<Entry>();
    return std::optional<Entry>(Entry{.is_dir = rows->at(0, 0) == "t",
                                      .size = std::stoull(rows->at(0, 1).value_or("0")),
                                      .mtime_ms = std::stod(rows->at(0, 2).value_or("0"))});
  }

  /// Why `path`, which has no row, is missing: a component above it is a file (not_a_directory), or
  /// `absent`. Always an error.
  template <typename T = void>
  PgResult<WorkspaceResult<T>> why_missing(Connection& c, std::string_view path, WorkspaceErrc absent) {
    for (std::string_view up = parent_of(path); up != "."; up = parent_of(up)) {
      auto found = lookup(c, bytea(up));
      if (!found) return found.error();
      if (*found)
        return WorkspaceResult<T>(error((*found)->is_dir ? absent : WorkspaceErrc::not_a_directory));
    }
    return WorkspaceResult<T>(error(absent));
  }

  /// Success when `dir` is a directory (the root is); else why not: `absent` when it is missing,
  /// not_a_directory when it or a component above it is a file.
  PgResult<WorkspaceResult<void>> need_directory(Connection& c, std::string_view dir, WorkspaceErrc absent) {
    if (dir == ".") return WorkspaceResult<void>();
    auto found = lookup(c, bytea(dir));
    if (!found) return found.error();
    if (!*found) return why_missing(c, dir, absent);
    if (!(*found)->is_dir) return WorkspaceResult<void>(error(WorkspaceErrc::not_a_directory));
    return WorkspaceResult<void>();
  }

  PgResult<Rows> insert(Connection& c, std::string_view path, bool is_dir,
                        const std::optional<std::string>& data, const std::string& size,
                        const std::string& mtime) {
    const std::string key = bytea(path);
    const std::string parent = bytea(parent_of(path));
    const std::string name = bytea(name_of(path));
    return c.exec("creating an entry", kInsert,
                  {tenant_, skill_, key, parent, name, is_dir ? "t" : "f",
                   data ? Param(std::string_view(*data)) : Param(), size, mtime});
  }

  PgResult<WorkspaceResult<void>> set_usage(Connection& c, uint64_t bytes, uint64_t entries) {
    auto r = c.exec("updating the workspace's usage", kSetUsage,
                    {tenant_, skill_, std::to_string(bytes), std::to_string(entries)});
    if (!r) return r.error();
    return WorkspaceResult<void>();
  }

  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
  const std::string skill_;
  const bool writable_;
  const bus::StopToken& stop_;
};

class PgWorkspaceBackend final : public state::WorkspaceBackend {
 public:
  PgWorkspaceBackend(std::shared_ptr<Pool> pool, std::string tenant)
      : pool_(std::move(pool)), tenant_(std::move(tenant)) {}

  WorkspaceResult<std::unique_ptr<state::WorkspaceSession>> open(std::string_view skill_id, bool writable,
                                                                 const bus::StopToken& stop) override {
    if (!base::is_valid_skill_id(skill_id)) return error(WorkspaceErrc::invalid_skill_id);
    return std::unique_ptr<state::WorkspaceSession>(
        std::make_unique<PgWorkspaceSession>(pool_, tenant_, std::string(skill_id), writable, stop));
  }

 private:
  const std::shared_ptr<Pool> pool_;
  const std::string tenant_;
};

}  // namespace

std::shared_ptr<state::WorkspaceBackend> make_pg_workspace_backend(std::shared_ptr<Pool> pool,
                                                                   std::string tenant) {
  return std::make_shared<PgWorkspaceBackend>(std::move(pool), std::move(tenant));
}

}  // namespace skillbox::pg
