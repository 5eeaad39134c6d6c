// capabilities/log/log_capability.h — the per-run log sink behind `log` and `console.*`.
#pragma once

#include <cstdint>
#include <vector>

#include "bus/messages.h"
#include "skillbox/skillbox.h"

namespace skillbox::capabilities {

/// Applies the per-message size cap, escapes newlines and control characters, and enforces the run's
/// byte and line budget with a single truncation marker. A new LogCapability (a new run) starts with a
/// fresh budget.
class LogCapability {
 public:
  static constexpr size_t kMaxMessageBytes = 8 * 1024;   // one message, after escaping
  static constexpr size_t kMaxRunBytes = 256 * 1024;     // all messages of one run
  static constexpr size_t kMaxRunLines = 1000;           // messages of one run

  bus::Reply handle(const bus::LogRequest& request);
  std::vector<LogEntry> take() { return std::move(entries_); }

 private:
  std::vector<LogEntry> entries_;
  size_t bytes_ = 0;
  size_t lines_ = 0;
  bool truncated_ = false;
};

}  // namespace skillbox::capabilities
