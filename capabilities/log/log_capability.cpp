// capabilities/log/log_capability.cpp — escaping, per-message cap and per-run budget of skill output.
#include "capabilities/log/log_capability.h"

#include <algorithm>

#include "base/escape.h"

namespace skillbox::capabilities {
namespace {

bus::ErrorReply budget_error() {
  return {bus::ErrorCode::QuotaExceeded, "the log budget of this run is used up; the message was dropped"};
}

LogEntry::Level entry_level(bus::LogLevel level) {
  switch (level) {
    case bus::LogLevel::debug:
      return LogEntry::Level::debug;
    case bus::LogLevel::info:
      return LogEntry::Level::info;
    case bus::LogLevel::warn:
      return LogEntry::Level::warn;
    case bus::LogLevel::error:
      return LogEntry::Level::error;
  }
  return LogEntry::Level::info;
}

}  // namespace

std::string escape_log_text(std::string_view text, size_t max_bytes) {
  return base::escape_text_capped(text, max_bytes, LogCapability::kCutSuffix);
}

std::string LogCapability::budget_marker() {
  return "[skillbox] log budget of this run used up (limit " + std::to_string(kMaxRunLines) + " lines, " +
         std::to_string(kMaxRunBytes) + " bytes); later output was dropped";
}

std::string LogCapability::memory_marker() {
  return "[skillbox] log output stopped: the invocation's memory limit (limits.memory_mb) is reached; later "
         "output was dropped";
}

bus::Reply LogCapability::handle(const bus::LogRequest& request) {
  if (exhausted_) return budget_error();
  // Reserved before escaping (an escape is at most 6 bytes per input byte; the result is capped), and
  // lowered to the escaped size after.
  const uint64_t bound = std::min<uint64_t>(kMaxMessageBytes, uint64_t{request.text.size()} * 6);
  if (!held_.grow(bound)) {
    exhausted_ = true;
    entries_.push_back({LogEntry::Level::warn, memory_marker()});
    return budget_error();
  }
  std::string message = escape_log_text(request.text);
  held_.shrink(bound - std::min<uint64_t>(bound, message.size()));
  if (lines_ + 1 > kMaxRunLines || bytes_ + message.size() > kMaxRunBytes) {
    held_.shrink(message.size());
    exhausted_ = true;
    entries_.push_back({LogEntry::Level::warn, budget_marker()});
    return budget_error();
  }
  ++lines_;
  bytes_ += message.size();
  entries_.push_back({entry_level(request.level), std::move(message)});
  return bus::OkReply{};
}

}  // namespace skillbox::capabilities
