// capabilities/log/log_capability.cpp — escaping, per-message cap and per-run budget of skill output.
#include "capabilities/log/log_capability.h"

#include <algorithm>

namespace skillbox::capabilities {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_byte_escape(std::string& out, uint8_t b) {
  const char escape[] = {'\\', 'x', kHex[b >> 4], kHex[b & 0xF]};
  out.append(escape, sizeof escape);
}

void append_code_point_escape(std::string& out, uint32_t cp) {
  const char escape[] = {
      '\\', 'u', kHex[(cp >> 12) & 0xF], kHex[(cp >> 8) & 0xF], kHex[(cp >> 4) & 0xF], kHex[cp & 0xF]};
  out.append(escape, sizeof escape);
}

// Code points above U+007F that must not reach a terminal or log viewer raw.
bool needs_escape(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||                    // C1 controls (U+0085 NEL ends a line in places)
         cp == 0x061C || cp == 0x200E || cp == 0x200F ||  // bidi marks
         (cp >= 0x202A && cp <= 0x202E) ||                // bidi embeddings and overrides (U+202E RLO)
         (cp >= 0x2066 && cp <= 0x2069) ||                // bidi isolates
         cp == 0x2028 || cp == 0x2029;                    // line and paragraph separators
}

// Length of the well-formed UTF-8 sequence at text[i] (Unicode Table 3-7), 0 if it is not one.
size_t utf8_sequence(std::string_view text, size_t i, uint32_t& cp) {
  const auto at = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = at(i);
  size_t len = 0;
  uint8_t lower = 0x80;
  uint8_t upper = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    cp = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    cp = lead & 0x0Fu;
    if (lead == 0xE0) lower = 0xA0;
    if (lead == 0xED) upper = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    cp = lead & 0x07u;
    if (lead == 0xF0) lower = 0x90;
    if (lead == 0xF4) upper = 0x8F;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const uint8_t b = at(i + k);
    if (b < (k == 1 ? lower : 0x80) || b > (k == 1 ? upper : 0xBF)) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return len;
}

// Appends the escaped form of the unit (byte or character) at text[i]; returns its input length.
size_t escape_unit(std::string_view text, size_t i, std::string& out) {
  const auto b = static_cast<uint8_t>(text[i]);
  if (b < 0x80) {
    switch (b) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (b < 0x20 || b == 0x7F)
          append_byte_escape(out, b);  // ESC of ANSI sequences, NUL, BEL, backspace, ...
        else
          out.push_back(static_cast<char>(b));
    }
    return 1;
  }
  uint32_t cp = 0;
  const size_t len = utf8_sequence(text, i, cp);
  if (len == 0) {
    append_byte_escape(out, b);
    return 1;
  }
  if (needs_escape(cp))
    append_code_point_escape(out, cp);
  else
    out.append(text.substr(i, len));
  return len;
}

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
  const std::string_view suffix = LogCapability::kCutSuffix;
  const size_t keep = max_bytes > suffix.size() ? max_bytes - suffix.size() : 0;
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t fits = 0;  // out.size() at the last unit boundary that leaves room for the suffix
  for (size_t i = 0; i < text.size();) {
    i += escape_unit(text, i, out);
    if (out.size() <= keep) fits = out.size();
    if (out.size() > max_bytes) {
      out.resize(fits);
      out += suffix;
      return out;
    }
  }
  return out;
}

std::string LogCapability::budget_marker() {
  return "[skillbox] log budget of this run used up (limit " + std::to_string(kMaxRunLines) + " lines, " +
         std::to_string(kMaxRunBytes) + " bytes); later output was dropped";
}

bus::Reply LogCapability::handle(const bus::LogRequest& request) {
  if (exhausted_) return budget_error();
  std::string message = escape_log_text(request.text);
  if (lines_ + 1 > kMaxRunLines || bytes_ + message.size() > kMaxRunBytes) {
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
