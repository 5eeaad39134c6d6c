// The log capability: escaping, per-message cap, per-run budget with one marker.
#include "capabilities/log/log_capability.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::capabilities {
namespace {

bus::LogRequest info(std::string text) {
  return {bus::LogLevel::info, std::move(text)};
}

TEST(LogEscape, PrintableTextIsUnchanged) {
  EXPECT_EQ(escape_log_text("plain text, with 'quotes' and \\backslashes\\ {\"json\":1}"),
            "plain text, with 'quotes' and \\backslashes\\ {\"json\":1}");
  EXPECT_EQ(escape_log_text("caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xE2\x80\x8D"),  // incl. ZWJ of emoji
            "caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xE2\x80\x8D");
  EXPECT_EQ(escape_log_text(""), "");
}

TEST(LogEscape, NoForgedLines) {
  EXPECT_EQ(escape_log_text("done\n[host] skill=other status=ok"), "done\\n[host] skill=other status=ok");
  EXPECT_EQ(escape_log_text("a\r\nb\tc"), "a\\r\\nb\\tc");
  EXPECT_EQ(escape_log_text("x\xE2\x80\xA8y\xE2\x80\xA9z\xC2\x85w"),
            "x\\u2028y\\u2029z\\u0085w");  // LS, PS, NEL
}

TEST(LogEscape, TerminalControlsAndBidiOverrides) {
  EXPECT_EQ(escape_log_text("\x1b[2J\xE2\x80\xAE"), "\\x1b[2J\\u202e");
  EXPECT_EQ(escape_log_text(std::string("\0\x07\x08\x7f", 4)), "\\x00\\x07\\x08\\x7f");
  EXPECT_EQ(escape_log_text("\xC2\x9B"
                            "31m"),
            "\\u009b31m");  // C1 CSI
  for (const char* bidi :
       {"\xD8\x9C", "\xE2\x80\x8E", "\xE2\x80\x8F", "\xE2\x80\xAA", "\xE2\x80\xAB", "\xE2\x80\xAC",
        "\xE2\x80\xAD", "\xE2\x81\xA6", "\xE2\x81\xA7", "\xE2\x81\xA8", "\xE2\x81\xA9"})
    EXPECT_EQ(escape_log_text(bidi).substr(0, 2), "\\u") << bidi;
}

TEST(LogEscape, BytesThatAreNotUtf8) {
  EXPECT_EQ(escape_log_text("a\xFF"
                            "b"),
            "a\\xffb");
  EXPECT_EQ(escape_log_text("\xC3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(escape_log_text("\xED\xA0\x80"), "\\xed\\xa0\\x80");           // encoded surrogate
  EXPECT_EQ(escape_log_text("\xC0\xAF"), "\\xc0\\xaf");                    // overlong
  EXPECT_EQ(escape_log_text("\xF4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
}

TEST(LogEscape, CapCutsOnUnitBoundariesWithSuffix) {
  const std::string_view suffix = LogCapability::kCutSuffix;
  EXPECT_EQ(escape_log_text(std::string(8192, 'x')), std::string(8192, 'x'));  // exactly the cap
  const std::string cut = escape_log_text(std::string(8193, 'x'));
  EXPECT_EQ(cut.size(), 8192u);
  EXPECT_EQ(cut, std::string(8192 - suffix.size(), 'x') + std::string(suffix));
  // Escapes are never split: 3000 ESC bytes escape to 12000 bytes; the cut keeps whole "\x1b".
  const std::string escapes = escape_log_text(std::string(3000, '\x1b'));
  ASSERT_LE(escapes.size(), 8192u);
  const std::string body = escapes.substr(0, escapes.size() - suffix.size());
  EXPECT_EQ(body.size() % 4, 0u);
  EXPECT_EQ(body.substr(body.size() - 4), "\\x1b");
  // Multi-byte characters are never split.
  const std::string wide = escape_log_text(std::string(9000, 'a') + "\xE4\xB8\xAD", 20);
  EXPECT_EQ(wide, "aaaaaa" + std::string(suffix));
  const std::string chars =
      escape_log_text("\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD\xE4\xB8\xAD", 17);
  EXPECT_EQ(chars, "\xE4\xB8\xAD" + std::string(suffix));  // 3 bytes of room hold one 3-byte character
}

TEST(LogCapability, RecordsLevelsAndEscapedText) {
  LogCapability log;
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(log.handle({bus::LogLevel::debug, "d"})));
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(log.handle({bus::LogLevel::warn, "w\n"})));
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(log.handle({bus::LogLevel::error, "e"})));
  EXPECT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info(""))));
  const std::vector<LogEntry> entries = log.take();
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].level, LogEntry::Level::debug);
  EXPECT_EQ(entries[1].level, LogEntry::Level::warn);
  EXPECT_EQ(entries[1].message, "w\\n");
  EXPECT_EQ(entries[2].level, LogEntry::Level::error);
  EXPECT_EQ(entries[3].level, LogEntry::Level::info);
  EXPECT_EQ(entries[3].message, "");
}

TEST(LogCapability, LineBudgetEndsWithExactlyOneMarker) {
  LogCapability log;
  for (size_t i = 0; i < LogCapability::kMaxRunLines; ++i)
    ASSERT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info("line " + std::to_string(i)))));
  for (int i = 0; i < 5000; ++i) {
    const bus::Reply reply = log.handle(info("more"));
    const auto* error = std::get_if<bus::ErrorReply>(&reply);
    ASSERT_NE(error, nullptr);
    EXPECT_EQ(error->code, bus::ErrorCode::QuotaExceeded);
  }
  const std::vector<LogEntry> entries = log.take();
  ASSERT_EQ(entries.size(), LogCapability::kMaxRunLines + 1);
  EXPECT_EQ(entries[999].message, "line 999");
  EXPECT_EQ(entries.back().level, LogEntry::Level::warn);
  EXPECT_EQ(
      entries.back().message,
      "[skillbox] log budget of this run used up (limit 1000 lines, 262144 bytes); later output was dropped");
}

TEST(LogCapability, ByteBudgetCountsEscapedBytes) {
  LogCapability log;
  // 4-byte escapes: 2048 ESC bytes are 8192 escaped bytes, one full message each; 32 fit.
  const std::string escapes(2048, '\x1b');
  for (int i = 0; i < 32; ++i)
    ASSERT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info(escapes)))) << i;
  EXPECT_TRUE(std::holds_alternative<bus::ErrorReply>(log.handle(info("x"))));  // not even one byte more
  const std::vector<LogEntry> entries = log.take();
  ASSERT_EQ(entries.size(), 33u);
  size_t bytes = 0;
  for (size_t i = 0; i < 32; ++i) bytes += entries[i].message.size();
  EXPECT_EQ(bytes, LogCapability::kMaxRunBytes);
  EXPECT_EQ(entries.back().message, LogCapability::budget_marker());
}

TEST(LogCapability, AMessageThatDoesNotFitEndsTheRunsOutput) {
  // Once something was dropped, later (smaller) messages are dropped too: the marker stays last.
  LogCapability log;
  const std::string big(8000, 'b');
  for (int i = 0; i < 32; ++i) ASSERT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info(big))));
  EXPECT_TRUE(std::holds_alternative<bus::ErrorReply>(log.handle(info(big))));  // 6144 bytes were left
  EXPECT_TRUE(std::holds_alternative<bus::ErrorReply>(log.handle(info("small"))));
  const std::vector<LogEntry> entries = log.take();
  ASSERT_EQ(entries.size(), 33u);
  EXPECT_EQ(entries.back().message, LogCapability::budget_marker());
}

TEST(LogCapability, EachRunHasAFreshBudget) {
  for (int run = 0; run < 3; ++run) {
    LogCapability log;
    for (size_t i = 0; i < LogCapability::kMaxRunLines; ++i)
      ASSERT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info("x")))) << "run " << run;
    EXPECT_TRUE(std::holds_alternative<bus::ErrorReply>(log.handle(info("x"))));
    EXPECT_EQ(log.take().size(), LogCapability::kMaxRunLines + 1);
  }
}

TEST(LogCapability, HugeRequestsCostOnlyTheCap) {
  LogCapability log;
  const std::string huge(16u << 20, 'h');  // 16 MiB from some other producer
  ASSERT_TRUE(std::holds_alternative<bus::OkReply>(log.handle(info(huge))));
  const std::vector<LogEntry> entries = log.take();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].message.size(), LogCapability::kMaxMessageBytes);
}

}  // namespace
}  // namespace skillbox::capabilities
