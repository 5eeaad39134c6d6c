// state/audit_sink.h — where a tenant's record of invocations goes.
//
// One AuditRecord per invocation that a runner started or refused, written after it ended: who ran
// what, how it ended and what it used. It never holds the input, the result value, log lines or any
// secret (a record may be kept longer and seen by more people than the run's own output).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "skillbox/result.h"
#include "skillbox/skillbox.h"

namespace skillbox::state {

struct AuditRecord {
  std::string tenant;       // TenantContext::id
  std::string skill_id;     // the manifest's id (bound to its folder, docs/manifest.md "Identity")
  std::string export_name;  // the export or bundle target asked for (empty: the default)
  std::chrono::system_clock::time_point started;  // when run() was called (wall clock, for people)
  Outcome outcome = Outcome::internal;
  std::string error_name;  // RunResult::error->name, empty for ok
  Usage usage;
  /// The origins the run's http requests went to ("https://api.example.com", each once, in the order
  /// first used; redirect hops included; never a path or query).
  std::vector<std::string> origins;
};

/// A tenant's audit destination. record() is called once per invocation, from the thread that called
/// Runner::run, possibly from many threads at once: implementations are thread-safe. A failure to
/// record is returned to the runner, which does not change the run's result for it (the run has
/// happened): it is the sink's business to alert.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  [[nodiscard]] virtual Result<void> record(const AuditRecord& record) = 0;
};

/// A sink that appends each record as one line of JSON to `file` (DataLayout::audit_log() for a local
/// tenant), created 0600 with its folder (0700) on first use. Each line is written with one write(2) on
/// a file opened O_APPEND, so lines of concurrent writers, in any processes, never interleave; with
/// `sync` each record is also fdatasync'ed before record() returns (durable after a crash of the host).
/// Fields: {"time": RFC 3339 UTC, "tenant", "skill", "export", "outcome", "error", "usage": {...},
/// "origins": [...]}.
[[nodiscard]] std::shared_ptr<AuditSink> make_jsonl_audit_sink(std::filesystem::path file, bool sync);

}  // namespace skillbox::state
