// capabilities/db/db_capability.cpp — DbCapability (db_capability.h).
#include "capabilities/db/db_capability.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>
#include <utility>

#include "base/json_text.h"

namespace skillbox::capabilities {
namespace {

using json = nlohmann::json;
using bus::ErrorCode;
using bus::ErrorReply;

// One value and one result are held in host memory whole; 16 MiB each bounds that (a bundle's rows
// are small; larger data belongs in the workspace).
constexpr int kMaxValueBytes = 16 * 1024 * 1024;
constexpr size_t kMaxResultBytes = 16u * 1024 * 1024;
constexpr int kMaxSqlBytes = 1024 * 1024;
// VM instructions between two looks at the StopToken: ~microseconds, so a statement ends within a
// millisecond of the deadline.
constexpr int kProgressOps = 1000;
constexpr int kPageBytes = 4096;

// Pragmas that only read the schema or the connection's own state.
constexpr std::string_view kReadOnlyPragmas[] = {
    "table_info",       "table_xinfo",  "index_list",     "index_info", "index_xinfo",
    "foreign_key_list", "user_version", "schema_version", "page_count", "freelist_count"};

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

}  // namespace

struct DbCapability::Impl {
  std::filesystem::path data_dir;
  std::string skill_id;
  DbPolicy policy;
  const bus::StopToken& stop;
  sqlite3* db = nullptr;
  std::string denied;  // why the authorizer refused the last statement

  Impl(std::filesystem::path d, std::string id, DbPolicy p, const bus::StopToken& s)
      : data_dir(std::move(d)), skill_id(std::move(id)), policy(p), stop(s) {}

  ~Impl() {
    if (db == nullptr) return;
    // An open transaction ends with the invocation: rolled back, never left for the next one.
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close_v2(db);
  }

  static int authorize(void* self, int action, const char* a3, const char* a4, const char* /*db*/,
                       const char* /*trigger*/) {
    auto* impl = static_cast<Impl*>(self);
    const std::string_view arg3 = a3 == nullptr ? "" : a3;
    const std::string_view arg4 = a4 == nullptr ? "" : a4;
    switch (action) {
      case SQLITE_ATTACH:
      case SQLITE_DETACH:
        impl->denied = "ATTACH and DETACH are not allowed: the skill has exactly one database";
        return SQLITE_DENY;
      case SQLITE_FUNCTION:
        if (ieq(arg4, "load_extension") || ieq(arg3, "load_extension")) {
          impl->denied = "load_extension() is not allowed";
          return SQLITE_DENY;
        }
        return SQLITE_OK;
      case SQLITE_CREATE_VTABLE:
      case SQLITE_DROP_VTABLE:
        if (ieq(arg4, "fts5")) return SQLITE_OK;
        impl->denied = "virtual tables other than FTS5 are not allowed (module \"" +
                       std::string(arg4.substr(0, 32)) + "\")";
        return SQLITE_DENY;
      case SQLITE_PRAGMA: {
        // A pragma with an argument changes something; only reading the schema is allowed.
        const bool known = std::any_of(std::begin(kReadOnlyPragmas), std::end(kReadOnlyPragmas),
                                       [&](std::string_view p) { return ieq(p, arg3); });
        const bool reads = known && (a4 == nullptr || ieq(arg3, "table_info") || ieq(arg3, "table_xinfo") ||
                                     ieq(arg3, "index_list") || ieq(arg3, "index_info") ||
                                     ieq(arg3, "index_xinfo") || ieq(arg3, "foreign_key_list"));
        if (reads) return SQLITE_OK;
        impl->denied = "PRAGMA " + std::string(arg3.substr(0, 32)) + (a4 == nullptr ? "" : " with a value") +
                       " is not allowed: pragmas that change files or safety settings are refused";
        return SQLITE_DENY;
      }
      default:
        return SQLITE_OK;
    }
  }

  static int progress(void* self) { return static_cast<Impl*>(self)->stop.stop_requested() ? 1 : 0; }

  std::optional<ErrorReply> open() {
    if (db != nullptr) return std::nullopt;
    std::error_code ec;
    const std::filesystem::path dir = data_dir / "skills" / skill_id;
    std::filesystem::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
      return ErrorReply{ErrorCode::IoError, "db: the host could not create the skill's data folder"};
    const std::string file = (dir / "db.sqlite").string();
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW;
    if (sqlite3_open_v2(file.c_str(), &db, flags, nullptr) != SQLITE_OK) {
      sqlite3_close_v2(db);
      db = nullptr;
      return ErrorReply{ErrorCode::IoError, "db: the host could not open the skill's database"};
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kMaxValueBytes);
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlBytes);
    sqlite3_busy_timeout(db, 2000);
    const uint64_t pages = std::max<uint64_t>(policy.quota_bytes / kPageBytes, 16);
    const std::string setup = "PRAGMA page_size = " + std::to_string(kPageBytes) +
                              "; PRAGMA max_page_count = " + std::to_string(pages) + ";";
    sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr);
    // From here on the skill's statements are fenced.
    sqlite3_set_authorizer(db, &Impl::authorize, this);
    sqlite3_progress_handler(db, kProgressOps, &Impl::progress, this);
    return std::nullopt;
  }

  ErrorReply error_of(int rc) {
    const int primary = rc & 0xff;
    if (primary == SQLITE_AUTH)
      return {ErrorCode::PermissionDenied, "db: " + (denied.empty() ? "not authorized" : denied)};
    if (primary == SQLITE_INTERRUPT)
      return {ErrorCode::Timeout,
              "db: the statement was stopped: the invocation reached a limit or its deadline"};
    if (primary == SQLITE_FULL)
      return {ErrorCode::QuotaExceeded, "db: the database is full (permissions.db.quota_bytes is " +
                                            std::to_string(policy.quota_bytes) +
                                            " bytes); nothing was written"};
    if (primary == SQLITE_TOOBIG)
      return {ErrorCode::PayloadTooLarge, "db: a value or statement is too large (limit is " +
                                              std::to_string(kMaxValueBytes) + " bytes)"};
    if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
      return {ErrorCode::Timeout, "db: the database is locked by another invocation of this skill"};
    return {ErrorCode::InvalidArgument, std::string("db: ") + sqlite3_errmsg(db)};
  }

  static json column(sqlite3_stmt* s, int i) {
    switch (sqlite3_column_type(s, i)) {
      case SQLITE_INTEGER:
        return json(static_cast<int64_t>(sqlite3_column_int64(s, i)));
      case SQLITE_FLOAT:
        return json(sqlite3_column_double(s, i));
      case SQLITE_TEXT: {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
        std::string text(p == nullptr ? "" : p, static_cast<size_t>(sqlite3_column_bytes(s, i)));
        // OpenHuman returned TEXT holding a JSON object or array parsed; bundles rely on it. Text nested
        // deeper than a tree may be (base/json_text.h) stays a string, like any text that is not JSON.
        if (!text.empty() && (text.front() == '{' || text.front() == '[')) {
          json parsed = base::json_text::parse(text, base::json_text::kMaxDepth);
          if (!parsed.is_discarded()) return parsed;
        }
        return json(std::move(text));
      }
      case SQLITE_BLOB: {
        // As an array of byte values (JSON has no bytes).
        const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s, i));
        json a = json::array();
        for (int k = 0; k < sqlite3_column_bytes(s, i); ++k) a.push_back(p[k]);
        return a;
      }
      default:
        return json(nullptr);
    }
  }

  bus::Reply run(const bus::DbRequest& r) {
    if (auto e = open()) return *e;
    json params = base::json_text::parse(r.params_json, base::json_text::kMaxDepth);
    if (params.is_discarded() || !params.is_array())
      return ErrorReply{ErrorCode::InvalidArgument, "db: params must be an array of values"};
    denied.clear();
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    int rc = sqlite3_prepare_v3(db, r.sql.data(), static_cast<int>(r.sql.size()), 0, &raw, &tail);
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
    if (rc != SQLITE_OK) return error_of(rc);
    if (!stmt) return ErrorReply{ErrorCode::InvalidArgument, "db: the SQL text holds no statement"};
    if (tail != nullptr) {
      const std::string_view rest(tail, static_cast<size_t>(r.sql.data() + r.sql.size() - tail));
      if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos)
        return ErrorReply{ErrorCode::InvalidArgument,
                          "db: one statement per call; split the SQL into several calls"};
    }
    const int expected = sqlite3_bind_parameter_count(stmt.get());
    if (static_cast<size_t>(expected) != params.size())
      return ErrorReply{ErrorCode::InvalidArgument, "db: the statement has " + std::to_string(expected) +
                                                        " parameters, " + std::to_string(params.size()) +
                                                        " given"};
    for (int i = 0; i < expected; ++i) {
      const json& v = params[static_cast<size_t>(i)];
      int b = SQLITE_OK;
      if (v.is_null())
        b = sqlite3_bind_null(stmt.get(), i + 1);
      else if (v.is_boolean())
        b = sqlite3_bind_int(stmt.get(), i + 1, v.get<bool>() ? 1 : 0);
      else if (v.is_number_integer())
        b = sqlite3_bind_int64(stmt.get(), i + 1, v.get<int64_t>());
      else if (v.is_number())
        b = sqlite3_bind_double(stmt.get(), i + 1, v.get<double>());
      else if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        b = sqlite3_bind_text64(stmt.get(), i + 1, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      } else {
        return ErrorReply{ErrorCode::InvalidArgument, "db: params[" + std::to_string(i) +
                                                          "] must be null, a boolean, a number or a string"};
      }
      if (b != SQLITE_OK) return error_of(b);
    }
    json rows = json::array();
    size_t bytes = 0;
    for (;;) {
      rc = sqlite3_step(stmt.get());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return error_of(rc);
      if (r.op == bus::DbOp::exec) continue;
      json row = json::object();
      for (int i = 0; i < sqlite3_column_count(stmt.get()); ++i) {
        bytes += static_cast<size_t>(sqlite3_column_bytes(stmt.get(), i)) + 16;
        row[sqlite3_column_name(stmt.get(), i)] = column(stmt.get(), i);
      }
      if (bytes > kMaxResultBytes)
        return ErrorReply{
            ErrorCode::PayloadTooLarge,
            "db: the result is larger than " + std::to_string(kMaxResultBytes) + " bytes; select fewer rows"};
      rows.push_back(std::move(row));
      if (r.op == bus::DbOp::get) break;
    }
    switch (r.op) {
      case bus::DbOp::exec:
        return bus::OptionalStringReply{std::to_string(sqlite3_changes64(db))};
      case bus::DbOp::get:
        return bus::OptionalStringReply{rows.empty() ? std::string("null") : base::json_text::write(rows[0])};
      case bus::DbOp::all:
        return bus::OptionalStringReply{base::json_text::write(rows)};
    }
    return ErrorReply{ErrorCode::InvalidArgument, "db: unknown operation"};
  }
};

DbCapability::DbCapability(std::filesystem::path data_dir, std::string skill_id, DbPolicy policy,
                           const bus::StopToken& stop)
    : impl_(std::make_unique<Impl>(std::move(data_dir), std::move(skill_id), policy, stop)) {}

DbCapability::~DbCapability() = default;

bus::Reply DbCapability::handle(const bus::DbRequest& request) {
  return impl_->run(request);
}

}  // namespace skillbox::capabilities
