// server/audit.h — the request audit of `skillbox serve` (docs/server.md "Audit"): one JSON line per
// request, refused ones included, to a file or stdout named by the config's `audit` key.
//
// A line says who asked for what and what came of it: time, request id, tenant, method, route, status,
// skill, export, outcome, usage and the permissions the run had. It never holds a secret, an API key or
// a hash of one, an input value, a result value, a log line, the query string or an unchecked id.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "server/http_types.h"
#include "skillbox/policy.h"
#include "skillbox/result.h"
#include "skillbox/skillbox.h"

namespace skillbox::server {

class AuditLog {
 public:
  /// `sink` is "stdout" or the path of a file, opened for appending (O_APPEND: each line one write(2),
  /// so concurrent writers never interleave) and created 0600. Errors name the path and the reason.
  [[nodiscard]] static Result<std::unique_ptr<AuditLog>> open(const std::string& sink);
  ~AuditLog();
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
  /// thread.
  void record(std::string_view request_id, std::string_view method, const HttpResponse& response);

 private:
  explicit AuditLog(std::string sink, int fd);

  const std::string sink_;
  base::Mutex mu_;
  int fd_ SKILLBOX_GUARDED_BY(mu_) = -1;
  bool reported_ SKILLBOX_GUARDED_BY(mu_) = false;
};

/// The summary of `policy` a line carries, as JSON text: {"fs": "none"|"read"|"readwrite",
/// "http_allow": [the allow list as written], "env": [the names env.get may read]}.
[[nodiscard]] std::string permission_summary_json(const Policy& policy);

/// The `usage` object of `result`, as `skillbox run --json` writes it (JSON text).
[[nodiscard]] std::string usage_json(const RunResult& result);

/// The time `now` as RFC 3339 in UTC with milliseconds: "2026-12-07T00:20:00.123Z".
[[nodiscard]] std::string rfc3339_utc_now();

}  // namespace skillbox::server
