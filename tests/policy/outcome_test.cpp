// Tests of the outcome and log-level names and the exit codes of docs/architecture.md "Contracts".
#include <gtest/gtest.h>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

TEST(Outcome, NamesAndExitCodesAreDesignMds) {
  struct Row {
    Outcome outcome;
    const char* name;
    int code;
  };
  const Row rows[] = {
      {Outcome::ok, "ok", 0},
      {Outcome::error, "error", 1},
      {Outcome::invalid, "invalid", 2},
      {Outcome::memory_limit, "memory_limit", 10},
      {Outcome::step_limit, "step_limit", 11},
      {Outcome::timeout, "timeout", 12},
      {Outcome::stack_overflow, "stack_overflow", 13},
      {Outcome::crashed, "crashed", 20},
      {Outcome::internal, "internal", 70},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(to_string(r.outcome), r.name);
    EXPECT_EQ(exit_code(r.outcome), r.code) << r.name;
  }
}

TEST(LogLevel, NamesAreLowerCase) {
  EXPECT_EQ(to_string(LogEntry::Level::debug), "debug");
  EXPECT_EQ(to_string(LogEntry::Level::info), "info");
  EXPECT_EQ(to_string(LogEntry::Level::warn), "warn");
  EXPECT_EQ(to_string(LogEntry::Level::error), "error");
}

}  // namespace
}  // namespace skillbox
