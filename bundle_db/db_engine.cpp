// bundle_db/db_engine.cpp — DbEngine (db_engine.h): the engine on an in-memory image.
#include "bundle_db/db_engine.h"

#include <sqlite3.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/json_text.h"
#include "bundle_db/db_functions.h"
#include "bus/codec.h"

namespace skillbox::bundle_db {
namespace {

using json = nlohmann::json;
using bus::ErrorCode;
using bus::ErrorReply;

// One result is held in memory whole (and again as the reply's JSON text); 16 MiB bounds that (a
// bundle's rows are small; larger data belongs in the workspace).
constexpr size_t kMaxResultBytes = 16u * 1024 * 1024;
constexpr int kMaxSqlBytes = 1024 * 1024;
// LIKE/GLOB patterns: the cost of a match is the pattern's length times the string's.
constexpr int kMaxLikePatternBytes = 4096;
// VM instructions between two looks at the StopToken: ~microseconds, so a statement ends within a
// millisecond of the deadline.
constexpr int kProgressOps = 1000;
constexpr int kPageBytes = 4096;
constexpr uint64_t kMinValueBytes = 64 * 1024;
constexpr uint64_t kMaxValueBytes = 16 * 1024 * 1024;

// Pragmas that only read the schema or the connection's own state.
constexpr std::string_view kReadOnlyPragmas[] = {
    "table_info",       "table_xinfo",  "index_list",     "index_info", "index_xinfo",
    "foreign_key_list", "user_version", "schema_version", "page_count", "freelist_count"};

// SQL functions of Debian 12's libsqlite3 (PRAGMA compile_options: ENABLE_FTS3_TOKENIZER, ENABLE_RTREE,
// ENABLE_FTS3/4/5, ENABLE_LOAD_EXTENSION, ...) that a bundle must not call; docs/openhuman.md "db"
// lists the review. fts3_tokenizer returns a pointer into libsqlite3 (an ASLR leak) and its two-argument
// form installs a tokenizer from a pointer the caller supplies; the rtree introspection functions parse
// node blobs the caller supplies (CVE-2019-8457 was such a read out of bounds); load_extension loads
// native code; the FTS3 auxiliary functions only work on FTS3 tables, which are refused anyway.
constexpr std::string_view kDeniedFunctions[] = {"load_extension", "fts3_tokenizer", "rtreenode",
                                                 "rtreedepth",     "rtreecheck",     "matchinfo",
                                                 "offsets",        "optimize"};

bool ieq(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

// ---- the private VFS: no file is ever opened ------------------------------------------------------
//
// The main database is a memdb image (sqlite3_deserialize); everything else SQLite would put in a file
// (the temporary database, sorter spills, statement journals, materialized views) is a MemFile: bytes
// in memory, counted in the invocation's budget as they grow and capped at the run's memory limit. A
// named file is never opened (CANTOPEN), so no statement can reach the disk (issue "Limits at the
// edges" 6: TEMP tables wrote GiBs to /var/tmp past the database quota).

/// What the connection using the VFS on this thread lends its files: set around every SQLite call.
struct TempBudget {
  bus::MemoryBudget* budget = nullptr;
  uint64_t cap = 0;      // the most temporary bytes in total
  uint64_t in_use = 0;   // temporary bytes now
  bool refused = false;  // a write did not fit: the statement's error is the memory limit
};
thread_local TempBudget* tls_temp = nullptr;

struct MemFile {
  sqlite3_file base;  // first: SQLite casts
  std::vector<uint8_t>* data;
  TempBudget* owner;
  bus::HostBytes* held;
};

int mem_close(sqlite3_file* f) {
  auto* m = reinterpret_cast<MemFile*>(f);
  if (m->owner != nullptr) m->owner->in_use -= std::min<uint64_t>(m->owner->in_use, m->data->size());
  delete m->held;
  delete m->data;
  m->held = nullptr;
  m->data = nullptr;
  return SQLITE_OK;
}
int mem_read(sqlite3_file* f, void* out, int n, sqlite3_int64 off) {
  auto* m = reinterpret_cast<MemFile*>(f);
  const auto size = static_cast<sqlite3_int64>(m->data->size());
  if (off >= size) {
    std::memset(out, 0, static_cast<size_t>(n));
    return SQLITE_IOERR_SHORT_READ;
  }
  const sqlite3_int64 got = std::min<sqlite3_int64>(n, size - off);
  std::memcpy(out, m->data->data() + off, static_cast<size_t>(got));
  if (got < n) {
    std::memset(static_cast<uint8_t*>(out) + got, 0, static_cast<size_t>(n - got));
    return SQLITE_IOERR_SHORT_READ;
  }
  return SQLITE_OK;
}
int mem_write(sqlite3_file* f, const void* in, int n, sqlite3_int64 off) {
  auto* m = reinterpret_cast<MemFile*>(f);
  const auto end = static_cast<uint64_t>(off) + static_cast<uint64_t>(n);
  if (end > m->data->size()) {
    const uint64_t more = end - m->data->size();
    TempBudget* t = m->owner;
    if (t == nullptr || t->in_use + more > t->cap || !m->held->grow(more)) {
      if (t != nullptr) t->refused = true;
      return SQLITE_FULL;
    }
    t->in_use += more;
    try {
      m->data->resize(end);
    } catch (const std::bad_alloc&) {
      return SQLITE_IOERR_NOMEM;
    }
  }
  std::memcpy(m->data->data() + off, in, static_cast<size_t>(n));
  return SQLITE_OK;
}
int mem_truncate(sqlite3_file* f, sqlite3_int64 size) {
  auto* m = reinterpret_cast<MemFile*>(f);
  if (static_cast<uint64_t>(size) < m->data->size()) {
    const uint64_t less = m->data->size() - static_cast<uint64_t>(size);
    m->data->resize(static_cast<size_t>(size));
    m->held->shrink(less);
    if (m->owner != nullptr) m->owner->in_use -= std::min(m->owner->in_use, less);
  }
  return SQLITE_OK;
}
int mem_sync(sqlite3_file* /*f*/, int /*flags*/) {
  return SQLITE_OK;
}
int mem_size(sqlite3_file* f, sqlite3_int64* size) {
  *size = static_cast<sqlite3_int64>(reinterpret_cast<MemFile*>(f)->data->size());
  return SQLITE_OK;
}
int mem_lock(sqlite3_file* /*f*/, int /*level*/) {
  return SQLITE_OK;
}
int mem_check_reserved(sqlite3_file* /*f*/, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int mem_control(sqlite3_file* /*f*/, int /*op*/, void* /*arg*/) {
  return SQLITE_NOTFOUND;
}
int mem_sector(sqlite3_file* /*f*/) {
  return 4096;
}
int mem_characteristics(sqlite3_file* /*f*/) {
  return SQLITE_IOCAP_ATOMIC | SQLITE_IOCAP_SAFE_APPEND | SQLITE_IOCAP_SEQUENTIAL |
         SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

const sqlite3_io_methods kMemMethods = {1,
                                        mem_close,
                                        mem_read,
                                        mem_write,
                                        mem_truncate,
                                        mem_sync,
                                        mem_size,
                                        mem_lock,
                                        mem_lock,
                                        mem_check_reserved,
                                        mem_control,
                                        mem_sector,
                                        mem_characteristics,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr};

int vfs_open(sqlite3_vfs* /*vfs*/, sqlite3_filename name, sqlite3_file* f, int /*flags*/, int* out_flags) {
  f->pMethods = nullptr;
  if (name != nullptr) return SQLITE_CANTOPEN;  // a named file: never (the main db is a memdb image)
  auto* m = reinterpret_cast<MemFile*>(f);
  m->owner = tls_temp;
  try {
    m->data = new std::vector<uint8_t>();
    m->held = new bus::HostBytes(tls_temp != nullptr ? tls_temp->budget : nullptr);
  } catch (const std::bad_alloc&) {
    delete m->data;
    return SQLITE_NOMEM;
  }
  if (out_flags != nullptr) *out_flags = 0;
  f->pMethods = &kMemMethods;
  return SQLITE_OK;
}
int vfs_delete(sqlite3_vfs* /*vfs*/, const char* /*name*/, int /*sync*/) {
  return SQLITE_OK;
}
int vfs_access(sqlite3_vfs* /*vfs*/, const char* /*name*/, int /*flags*/, int* out) {
  *out = 0;
  return SQLITE_OK;
}
int vfs_full_pathname(sqlite3_vfs* /*vfs*/, const char* name, int n, char* out) {
  if (n <= 0) return SQLITE_CANTOPEN;
  std::strncpy(out, name, static_cast<size_t>(n) - 1);
  out[n - 1] = '\0';
  return SQLITE_OK;
}
int vfs_randomness(sqlite3_vfs* /*vfs*/, int n, char* out) {
  // getrandom(2), which the worker's seccomp policy allows; /dev/urandom is never opened.
  size_t got = 0;
  while (got < static_cast<size_t>(n)) {
    const ssize_t r = getrandom(out + got, static_cast<size_t>(n) - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    got += static_cast<size_t>(r);
  }
  return static_cast<int>(got);
}

constexpr const char* kVfsName = "skillbox-memory";

/// The VFS, registered once (not as the default: an embedder's own SQLite use is left alone).
sqlite3_vfs* private_vfs() {
  static sqlite3_vfs vfs;
  static std::once_flag once;
  std::call_once(once, [] {
    sqlite3_initialize();
    const sqlite3_vfs* base = sqlite3_vfs_find(nullptr);
    vfs = *base;  // time, sleep and the last-error text come from the platform's VFS
    vfs.iVersion = 2;
    vfs.szOsFile = sizeof(MemFile);
    vfs.zName = kVfsName;
    vfs.pNext = nullptr;
    vfs.pAppData = nullptr;
    vfs.xOpen = vfs_open;
    vfs.xDelete = vfs_delete;
    vfs.xAccess = vfs_access;
    vfs.xFullPathname = vfs_full_pathname;
    vfs.xDlOpen = nullptr;
    vfs.xDlError = nullptr;
    vfs.xDlSym = nullptr;
    vfs.xDlClose = nullptr;
    vfs.xRandomness = vfs_randomness;
    sqlite3_vfs_register(&vfs, 0);
  });
  return &vfs;
}

}  // namespace

uint64_t db_max_image_bytes(const DbSettings& s) {
  // The image travels back in the worker's result frame, beside the rest of the result.
  constexpr uint64_t kFrameRoom = bus::kMaxFrameBytes - 64ull * 1024 * 1024;
  return std::min({s.quota_bytes, s.memory_bytes / 2, kFrameRoom});
}

uint64_t db_max_value_bytes(const DbSettings& s) {
  return std::clamp(s.memory_bytes / 8, kMinValueBytes, kMaxValueBytes);
}

void DbEngine::prefer_private_vfs() {
  sqlite3_vfs_register(private_vfs(), 1);
}

struct DbEngine::Impl {
  bus::Bytes image;  // until open() hands it to SQLite
  DbSettings settings;
  const bus::StopToken& stop;
  bus::MemoryBudget* budget;
  sqlite3* db = nullptr;
  bool opened = false;
  bool finished = false;
  std::optional<ErrorReply> open_error;
  std::string denied;  // why the authorizer refused the last statement
  size_t original_hash = 0;
  uint64_t original_size = 0;
  bus::HostBytes image_held;  // the memdb image, as large as it is now
  TempBudget temp;
  // SQLite's own working memory during a statement (page caches, sorter lists, row values), from
  // sqlite3_memory_used(): exact in a worker process (one connection), an upper bound in-process
  // (other connections of the process count too, so it errs towards refusing).
  bus::HostBytes work_held;
  int64_t work_base = 0;
  bool work_refused = false;
  DbFunctionContext functions;

  Impl(bus::Bytes i, DbSettings s, const bus::StopToken& t, bus::MemoryBudget* b)
      : image(std::move(i)), settings(s), stop(t), budget(b), image_held(b), work_held(b) {
    temp.budget = b;
    temp.cap = s.memory_bytes;
    functions.stop = &stop;
  }

  ~Impl() {
    if (db == nullptr) return;
    TempScope scope(*this);
    sqlite3_close_v2(db);
  }

  /// Lends this connection's temporary-file budget to the VFS for the duration of one SQLite call.
  struct TempScope {
    explicit TempScope(Impl& i) : prev(tls_temp) { tls_temp = &i.temp; }
    ~TempScope() { tls_temp = prev; }
    TempScope(const TempScope&) = delete;
    TempScope& operator=(const TempScope&) = delete;
    TempBudget* prev;
  };

  static int authorize(void* self, int action, const char* a3, const char* a4, const char* schema,
                       const char* /*trigger*/) {
    auto* impl = static_cast<Impl*>(self);
    const std::string_view arg3 = a3 == nullptr ? "" : a3;
    const std::string_view arg4 = a4 == nullptr ? "" : a4;
    const bool in_temp = schema != nullptr && ieq(schema, "temp");
    if (in_temp &&
        (action == SQLITE_CREATE_TABLE || action == SQLITE_CREATE_INDEX || action == SQLITE_CREATE_VIEW ||
         action == SQLITE_CREATE_TRIGGER || action == SQLITE_CREATE_VTABLE))
      action = SQLITE_CREATE_TEMP_TABLE;  // "CREATE TABLE temp.t": the same object as CREATE TEMP TABLE
    switch (action) {
      case SQLITE_ATTACH:
      case SQLITE_DETACH:
        impl->denied = "ATTACH and DETACH are not allowed: the skill has exactly one database";
        return SQLITE_DENY;
      case SQLITE_FUNCTION:
        for (std::string_view f : kDeniedFunctions) {
          if (ieq(arg4, f) || ieq(arg3, f)) {
            impl->denied = std::string(f) + "() is not allowed";
            return SQLITE_DENY;
          }
        }
        return SQLITE_OK;
      case SQLITE_CREATE_TEMP_TABLE:
      case SQLITE_CREATE_TEMP_INDEX:
      case SQLITE_CREATE_TEMP_TRIGGER:
      case SQLITE_CREATE_TEMP_VIEW:
        // The temp schema would be a second database beside the quota; everything it offers works on
        // the skill's own database.
        impl->denied =
            "TEMP tables, indexes, views and triggers are not allowed: create them in the "
            "database itself (it is already private to the invocation until the run ends)";
        return SQLITE_DENY;
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

  static int progress(void* self) {
    auto* impl = static_cast<Impl*>(self);
    if (impl->stop.stop_requested()) return 1;
    const int64_t used = std::max<int64_t>(0, sqlite3_memory_used() - impl->work_base);
    const auto want = static_cast<uint64_t>(used);
    if (want > impl->work_held.bytes()) {
      if (want > impl->settings.memory_bytes || !impl->work_held.grow(want - impl->work_held.bytes())) {
        impl->work_refused = true;
        return 1;
      }
    }
    return 0;
  }

  static size_t hash_of(const uint8_t* p, size_t n) {
    return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(p), n));
  }

  /// The memdb image as it is now, without a copy (nullptr and 0 for an empty database).
  std::pair<const uint8_t*, size_t> current_image() const {
    sqlite3_int64 size = 0;
    const unsigned char* p = sqlite3_serialize(db, "main", &size, SQLITE_SERIALIZE_NOCOPY);
    if (p == nullptr) return {nullptr, 0};
    return {p, static_cast<size_t>(size)};
  }

  std::optional<ErrorReply> open() {
    if (opened) return open_error;
    opened = true;
    const uint64_t max_image = db_max_image_bytes(settings);
    if (image.size() > max_image)
      return open_error = ErrorReply{ErrorCode::PayloadTooLarge,
                                     "db: the database is " + std::to_string(image.size()) +
                                         " bytes; an invocation holds at most " + std::to_string(max_image) +
                                         " (permissions.db.quota_bytes, and half of limits.memory_mb)"};
    if (!image_held.grow(image.size()))
      return open_error = ErrorReply{ErrorCode::PayloadTooLarge,
                                     "db: the database does not fit: " +
                                         (budget != nullptr ? budget->refusal(image.size()) : std::string())};
    original_size = image.size();
    original_hash = hash_of(image.data(), image.size());
    TempScope scope(*this);
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_MEMORY;
    if (sqlite3_open_v2(":memory:", &db, flags, private_vfs()->zName) != SQLITE_OK) {
      sqlite3_close_v2(db);
      db = nullptr;
      return open_error = ErrorReply{ErrorCode::IoError, "db: the host could not open an in-memory database"};
    }
    sqlite3_extended_result_codes(db, 1);
    // The image becomes SQLite's: a buffer from its allocator that it may grow (up to the size limit
    // below) and frees with the connection.
    const auto bytes = static_cast<sqlite3_int64>(image.size());
    auto* buffer = static_cast<unsigned char*>(sqlite3_malloc64(std::max<uint64_t>(image.size(), 1)));
    if (buffer == nullptr)
      return open_error = ErrorReply{ErrorCode::PayloadTooLarge, "db: out of memory loading the database"};
    if (!image.empty()) std::memcpy(buffer, image.data(), image.size());
    image.clear();
    image.shrink_to_fit();
    if (sqlite3_deserialize(db, "main", buffer, bytes, std::max<sqlite3_int64>(bytes, 1),
                            SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE) != SQLITE_OK)
      return open_error = ErrorReply{ErrorCode::IoError, "db: the skill's database could not be loaded"};
    sqlite3_int64 size_limit = static_cast<sqlite3_int64>(std::max<uint64_t>(max_image, kPageBytes));
    sqlite3_file_control(db, "main", SQLITE_FCNTL_SIZE_LIMIT, &size_limit);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, static_cast<int>(db_max_value_bytes(settings)));
    sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, kMaxSqlBytes);
    sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, kMaxLikePatternBytes);
    const uint64_t pages = std::max<uint64_t>(max_image / kPageBytes, 16);
    const std::string setup = "PRAGMA page_size = " + std::to_string(kPageBytes) +
                              "; PRAGMA max_page_count = " + std::to_string(pages) +
                              "; PRAGMA temp_store = FILE;";
    sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr);
    if (!install_db_functions(db, functions))
      return open_error = ErrorReply{ErrorCode::IoError, "db: the host could not set up the database"};
    // From here on the skill's statements are fenced.
    sqlite3_set_authorizer(db, &Impl::authorize, this);
    sqlite3_progress_handler(db, kProgressOps, &Impl::progress, this);
    return std::nullopt;
  }

  ErrorReply error_of(int rc) {
    const int primary = rc & 0xff;
    if (primary == SQLITE_AUTH || !denied.empty())
      return {ErrorCode::PermissionDenied, "db: " + (denied.empty() ? "not authorized" : denied)};
    if (work_refused || temp.refused)
      return {ErrorCode::PayloadTooLarge,
              std::string("db: the statement was stopped: ") +
                  (temp.refused ? "its temporary storage" : "SQLite's working memory for it") +
                  " does not fit the invocation's memory limit (limits.memory_mb: " +
                  std::to_string(settings.memory_bytes) + " bytes)"};
    if (primary == SQLITE_INTERRUPT)
      return {ErrorCode::Timeout,
              "db: the statement was stopped: the invocation reached a limit or its deadline"};
    if (primary == SQLITE_FULL)
      return {ErrorCode::QuotaExceeded, "db: the database is full (permissions.db.quota_bytes is " +
                                            std::to_string(settings.quota_bytes) +
                                            " bytes); nothing was written"};
    if (primary == SQLITE_TOOBIG)
      return {ErrorCode::PayloadTooLarge, "db: a value or statement is too large (limit is " +
                                              std::to_string(db_max_value_bytes(settings)) +
                                              " bytes, an eighth of limits.memory_mb)"};
    if (primary == SQLITE_NOMEM)
      return {ErrorCode::PayloadTooLarge, "db: the statement ran out of memory (limits.memory_mb: " +
                                              std::to_string(settings.memory_bytes) + " bytes)"};
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

  /// Appends column `i` of the current row to `out` as JSON text. Before anything is built, the bytes
  /// it may take are reserved in `held` (the reply's budget): a blob up to 4 bytes per byte as text
  /// ("255,"), written straight to text, never as a JSON array of values (16 bytes a value, which made
  /// a 16 MiB blob 605 MB of host memory); TEXT that may be parsed as JSON 8 bytes per byte more while
  /// its tree exists. The 16 MiB result cap is checked on the text actually built. False: it did not
  /// fit (`why` says which limit).
  bool append_column(sqlite3_stmt* s, int i, std::string& out, bus::HostBytes& held, std::string& why) {
    const int type = sqlite3_column_type(s, i);
    const auto n = static_cast<uint64_t>(sqlite3_column_bytes(s, i));
    const auto reserve = [&](uint64_t more) {
      if (held.grow(more)) return true;
      why = "the result does not fit: " + (budget != nullptr ? budget->refusal(more) : std::string());
      return false;
    };
    const auto within_cap = [&](uint64_t size) {
      if (size <= kMaxResultBytes) return true;
      why = "the result is larger than " + std::to_string(kMaxResultBytes) + " bytes; select fewer rows";
      return false;
    };
    if (type == SQLITE_BLOB) {
      if (!within_cap(out.size() + n * 2 + 2) || !reserve(n * 4 + 2)) return false;
      const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(s, i));
      out.push_back('[');
      char digits[4];
      for (uint64_t k = 0; k < n; ++k) {
        if (k != 0) out.push_back(',');
        const int len = std::snprintf(digits, sizeof digits, "%u", static_cast<unsigned>(p[k]));
        out.append(digits, static_cast<size_t>(len));
      }
      out.push_back(']');
      true_up(out, held);
      return within_cap(out.size());
    }
    const unsigned char* text = type == SQLITE_TEXT ? sqlite3_column_text(s, i) : nullptr;
    const bool may_parse = text != nullptr && n > 0 && (text[0] == '{' || text[0] == '[');
    if (!within_cap(out.size() + n) || !reserve(n + 32 + (may_parse ? n * 8 : 0))) return false;
    // Written without recursion, lone surrogates kept as their escapes (base/json_text.h).
    const std::string piece = base::json_text::write(column(s, i));
    if (!within_cap(out.size() + piece.size())) return false;
    if (out.size() + piece.size() > held.bytes() && !reserve(out.size() + piece.size() - held.bytes()))
      return false;
    out += piece;
    true_up(out, held);
    return true;
  }

  /// What stays reserved for the result once a column is written: the text's buffer.
  static void true_up(const std::string& out, bus::HostBytes& held) {
    if (held.bytes() > out.capacity())
      held.shrink(held.bytes() - out.capacity());
    else
      (void)held.charge(out.capacity() - held.bytes());  // the buffer exists already: counted as it is
  }

  /// Counts the image as it is now (it grows and shrinks with the statements).
  void recount_image() {
    const uint64_t now = current_image().second;
    if (now > image_held.bytes())
      (void)image_held.charge(now - image_held.bytes());
    else
      image_held.shrink(image_held.bytes() - now);
  }

  /// Binds `params` (a JSON array: null, booleans, numbers, strings) to the statement's `?` in order.
  /// An error when the count differs or a value has another type.
  std::optional<ErrorReply> bind_params(sqlite3_stmt* stmt, const json& params) {
    const int expected = sqlite3_bind_parameter_count(stmt);
    if (static_cast<size_t>(expected) != params.size())
      return ErrorReply{ErrorCode::InvalidArgument, "db: the statement has " + std::to_string(expected) +
                                                        " parameters, " + std::to_string(params.size()) +
                                                        " given"};
    for (int i = 0; i < expected; ++i) {
      const json& v = params[static_cast<size_t>(i)];
      int b = SQLITE_OK;
      if (v.is_null())
        b = sqlite3_bind_null(stmt, i + 1);
      else if (v.is_boolean())
        b = sqlite3_bind_int(stmt, i + 1, v.get<bool>() ? 1 : 0);
      else if (v.is_number_integer())
        b = sqlite3_bind_int64(stmt, i + 1, v.get<int64_t>());
      else if (v.is_number())
        b = sqlite3_bind_double(stmt, i + 1, v.get<double>());
      else if (v.is_string()) {
        const auto& s = v.get_ref<const std::string&>();
        b = sqlite3_bind_text64(stmt, i + 1, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      } else {
        return ErrorReply{ErrorCode::InvalidArgument, "db: params[" + std::to_string(i) +
                                                          "] must be null, a boolean, a number or a string"};
      }
      if (b != SQLITE_OK) return error_of(b);
    }
    return std::nullopt;
  }

  bus::Reply run(const bus::DbRequest& r) {
    if (finished) return ErrorReply{ErrorCode::Timeout, "db: the invocation has ended"};
    if (auto e = open()) return *e;
    json params = base::json_text::parse(r.params_json, base::json_text::kMaxDepth);
    if (params.is_discarded() || !params.is_array())
      return ErrorReply{ErrorCode::InvalidArgument, "db: params must be an array of values"};
    TempScope scope(*this);
    denied.clear();
    temp.refused = false;
    work_refused = false;
    work_held.reset();
    work_base = sqlite3_memory_used();
    struct Recount {
      Impl& self;
      ~Recount() {
        self.work_held.reset();
        self.recount_image();
      }
    } recount{*this};
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
    if (auto refused = bind_params(stmt.get(), params)) return *refused;
    // The result is written as JSON text row by row; its bytes are counted in the budget as it grows
    // and travel with the reply (OptionalStringReply::held).
    bus::HostBytes held(budget);
    std::string out = r.op == bus::DbOp::all ? "[" : "";
    bool any_row = false;
    std::string why;
    const int columns = sqlite3_column_count(stmt.get());
    for (;;) {
      rc = sqlite3_step(stmt.get());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return error_of(rc);
      if (r.op == bus::DbOp::exec) continue;
      if (any_row) out.push_back(',');
      any_row = true;
      out.push_back('{');
      for (int i = 0; i < columns; ++i) {
        if (i != 0) out.push_back(',');
        const char* name = sqlite3_column_name(stmt.get(), i);
        out += base::json_text::write(json(name == nullptr ? "" : name));
        out.push_back(':');
        if (!append_column(stmt.get(), i, out, held, why))
          return ErrorReply{ErrorCode::PayloadTooLarge, "db: " + why};
      }
      out.push_back('}');
      if (r.op == bus::DbOp::get) break;
    }
    switch (r.op) {
      case bus::DbOp::exec:
        return bus::OptionalStringReply{std::to_string(sqlite3_changes64(db))};
      case bus::DbOp::get:
        return bus::OptionalStringReply{any_row ? std::move(out) : std::string("null"), std::move(held)};
      case bus::DbOp::all:
        out.push_back(']');
        return bus::OptionalStringReply{std::move(out), std::move(held)};
    }
    return ErrorReply{ErrorCode::InvalidArgument, "db: unknown operation"};
  }

  std::optional<bus::Bytes> finish() {
    finished = true;
    if (db == nullptr) return std::nullopt;
    TempScope scope(*this);
    sqlite3_progress_handler(db, 0, nullptr, nullptr);
    sqlite3_set_authorizer(db, nullptr, nullptr);
    // An open transaction ends with the invocation: rolled back, never left for the next one.
    if (sqlite3_get_autocommit(db) == 0) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    const auto [p, n] = current_image();
    if (n == original_size && hash_of(p, n) == original_hash) return std::nullopt;
    bus::Bytes out(p, p + n);
    sqlite3_close_v2(db);  // the image's memory goes back before the copy travels on
    db = nullptr;
    image_held.reset();
    return out;
  }
};

DbEngine::DbEngine(bus::Bytes image, DbSettings settings, const bus::StopToken& stop,
                   bus::MemoryBudget* budget)
    : impl_(std::make_unique<Impl>(std::move(image), settings, stop, budget)) {}

DbEngine::~DbEngine() = default;

bus::Reply DbEngine::handle(const bus::DbRequest& request) {
  try {
    return impl_->run(request);
  } catch (const std::bad_alloc&) {
    // Building a row's JSON ran out of memory (in a worker: its address-space rlimit): the statement
    // fails, the run goes on.
    return ErrorReply{ErrorCode::PayloadTooLarge,
                      "db: the result does not fit in memory (limits.memory_mb: " +
                          std::to_string(impl_->settings.memory_bytes) + " bytes)"};
  }
}

std::optional<bus::Bytes> DbEngine::finish() {
  return impl_->finish();
}

}  // namespace skillbox::bundle_db
