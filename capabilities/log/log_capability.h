// capabilities/log/log_capability.h — the per-run log sink behind `log` and `console.*`.
//
// Skill output ends up in terminals, log files and JSON next to the host's own lines, so each message
// is made inert and bounded here, whatever the binding sent:
// - escaping: every message is one line of printable text. C0 controls and DEL become \n, \r, \t or
//   \xNN (no newline to forge a "[host] ..." line, no ANSI sequence such as \x1b[2J to clear a
//   screen); C1 controls, the line/paragraph separators U+2028/U+2029 and the bidirectional controls
//   (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: "Trojan Source", CVE-2021-42574) become
//   \uXXXX; bytes that are not UTF-8 become \xNN. A backslash is kept as is: the escapes make output
//   safe to show, not reversible.
// - per-message cap: a message longer than kMaxMessageBytes after escaping is cut on an escape or
//   character boundary and ends with kCutSuffix.
// - per-run budget: at most kMaxRunLines messages and kMaxRunBytes bytes (escaped, after the cap). The
//   first message that does not fit is replaced by ONE marker entry (level warn, budget_marker()); it
//   and every later message are dropped and answered with ErrorReply QuotaExceeded, which tells the
//   binding to stop formatting. The marker is the only entry past the budget.
// A new LogCapability (one per run, owned by the run's runner::HostEndpoint) starts with a fresh budget.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "bus/limits.h"
#include "bus/messages.h"
#include "skillbox/skillbox.h"

namespace skillbox::capabilities {

class LogCapability {
 public:
  /// One message after escaping, suffix included: the wire limit (bus/limits.h).
  static constexpr size_t kMaxMessageBytes = bus::kMaxLogMessageBytes;
  /// All messages of one run. 256 KiB bounds what a run adds to RunResult/JSON output and host
  /// memory, while leaving room for ordinary debugging output.
  static constexpr size_t kMaxRunBytes = size_t{256} * 1024;
  /// Messages of one run: a skill logging in a tight loop stops being heard after 1000 lines.
  static constexpr size_t kMaxRunLines = 1000;

  /// Ends a message cut at kMaxMessageBytes.
  static constexpr std::string_view kCutSuffix = "...[truncated]";
  /// The text of the single entry that replaces everything past the run's budget (names the limits).
  static std::string budget_marker();

  /// Records `request` (escaped, capped) if it fits the run's budget: OkReply. Otherwise records the
  /// budget marker once and returns ErrorReply{QuotaExceeded} for this and every later request.
  bus::Reply handle(const bus::LogRequest& request);

  /// The entries recorded so far, moved out.
  std::vector<LogEntry> take() { return std::move(entries_); }
  /// The entries recorded since the last take() (read by the host to stream them live).
  [[nodiscard]] const std::vector<LogEntry>& entries() const { return entries_; }

 private:
  std::vector<LogEntry> entries_;
  size_t bytes_ = 0;
  size_t lines_ = 0;
  bool exhausted_ = false;
};

/// Escapes `text` as described above (base::escape_text_capped, the one table of unsafe code points)
/// and caps the result at `max_bytes` (kCutSuffix included, which must fit). Work is bounded by
/// max_bytes, not by the length of `text`.
std::string escape_log_text(std::string_view text, size_t max_bytes = LogCapability::kMaxMessageBytes);

}  // namespace skillbox::capabilities
