// server/audit.h — the request audit of `skillbox serve` (docs/server.md "Audit"): one JSON line per
// request, refused ones included, to a file, stdout, or the database (`audit = "database"` with serve
// --database), named by the config's `audit` key.
//
// A line says who asked for what and what came of it: time, request id, tenant, method, route, status,
// skill, export, outcome, usage and the permissions the run had. It never holds a secret, an API key or
// a hash of one, an input value, a result value, a log line, the query string or an unchecked id.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "server/http_types.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

/// Stores a batch of audit lines (JSON texts) in the database, all or none (Database::store_audit).
using AuditBatchWriter = std::function<Result<void>(const std::vector<std::string>& lines)>;

class AuditLog {
 public:
  /// Lines a database sink keeps while the database cannot take them; beyond it a line goes to stderr
  /// instead ("audit (not stored): {...}"), so none is lost unseen.
  static constexpr size_t kMaxPendingLines = 100'000;

  /// `sink` is "stdout", the path of a file, opened for appending (O_APPEND: each line one write(2),
  /// so concurrent writers never interleave) and created 0600, or "database": lines go to `database`
  /// in batches from a thread of the log's own (at most 500 a batch, within 200 ms of their request),
  /// and are kept and tried again every second while it fails (one line on stderr says why, and one
  /// when it works again). Errors name the path and the reason.
  [[nodiscard]] static Result<std::unique_ptr<AuditLog>> open(const std::string& sink,
                                                              AuditBatchWriter database = {});
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  /// The sink as configured ("stdout" or the file's path).
  [[nodiscard]] const std::string& sink() const { return sink_; }

  /// Opens the file's path again (log rotation: after the file was renamed, SIGHUP starts a new one);
  /// the old descriptor is closed once the new one is open. On an error the old one stays in use. A
  /// no-op for stdout. Any thread.
  [[nodiscard]] Result<void> reopen();

  /// Appends the line of one request that ended with `response` (its status, tenant, outcome and
  /// facts). A write that fails is reported on stderr once, and the next lines are tried again. Any
  /// thread; never waits for the database.
  void record(std::string_view request_id, std::string_view method, const HttpResponse& response);

  /// The database sink's destructor stores what is pending, for up to 5 s; what is left then goes to
  /// stderr.
  ~AuditLog();

 private:
  AuditLog(std::string sink, int fd, AuditBatchWriter database);
  void write_line(const std::string& text);
  void store_loop();

  const std::string sink_;
  const AuditBatchWriter database_;
  base::Mutex mu_;
  int fd_ SKILLBOX_GUARDED_BY(mu_) = -1;
  bool reported_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::deque<std::string> pending_ SKILLBOX_GUARDED_BY(mu_);
  bool stopping_ SKILLBOX_GUARDED_BY(mu_) = false;
  std::condition_variable wake_;
  std::thread storer_;  // the database sink's
};

/// The summary of `policy` a line carries, as JSON text: {"fs": "none"|"read"|"readwrite",
/// "http_allow": [the allow list as written], "env": [the names env.get may read]}.
[[nodiscard]] std::string permission_summary_json(const Policy& policy);

/// The `usage` object of `result`, as `skillbox run --json` writes it (JSON text).
[[nodiscard]] std::string usage_json(const RunResult& result);

/// The time `now` as RFC 3339 in UTC with milliseconds: "2026-12-07T00:20:00.123Z".
[[nodiscard]] std::string rfc3339_utc_now();
/// The same for `ms_since_epoch` (milliseconds since the Unix epoch, not before it).
[[nodiscard]] std::string rfc3339_utc(int64_t ms_since_epoch);

}  // namespace skillbox::server
