// policy/outcome.cpp — stable names and exit codes of outcomes and log levels (docs/cli.md "Exit codes").
#include "skillbox/skillbox.h"

namespace skillbox {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok:
      return "ok";
    case Outcome::error:
      return "error";
    case Outcome::invalid:
      return "invalid";
    case Outcome::memory_limit:
      return "memory_limit";
    case Outcome::step_limit:
      return "step_limit";
    case Outcome::timeout:
      return "timeout";
    case Outcome::stack_overflow:
      return "stack_overflow";
    case Outcome::crashed:
      return "crashed";
    case Outcome::internal:
      return "internal";
    case Outcome::cancelled:
      return "cancelled";
  }
  return "internal";  // an out-of-range value is a bug in the caller
}

int exit_code(Outcome outcome) {
  switch (outcome) {
    case Outcome::ok:
      return 0;
    case Outcome::error:
      return 1;
    case Outcome::invalid:
      return 2;
    case Outcome::memory_limit:
      return 10;
    case Outcome::step_limit:
      return 11;
    case Outcome::timeout:
      return 12;
    case Outcome::stack_overflow:
      return 13;
    case Outcome::crashed:
      return 20;
    case Outcome::internal:
      return 70;
    case Outcome::cancelled:
      return 130;  // 128 + SIGINT: what a shell reports for a command stopped with Ctrl-C
  }
  return 70;
}

std::string_view to_string(LogEntry::Level level) {
  switch (level) {
    case LogEntry::Level::debug:
      return "debug";
    case LogEntry::Level::info:
      return "info";
    case LogEntry::Level::warn:
      return "warn";
    case LogEntry::Level::error:
      return "error";
  }
  return "info";
}

std::string_view to_string(RunEvent::Kind kind) {
  switch (kind) {
    case RunEvent::Kind::started:
      return "started";
    case RunEvent::Kind::host_call:
      return "host_call";
    case RunEvent::Kind::cancel_requested:
      return "cancel_requested";
    case RunEvent::Kind::skill_event:
      return "skill_event";
  }
  return "started";
}

}  // namespace skillbox
