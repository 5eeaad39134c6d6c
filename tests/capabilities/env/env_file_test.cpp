// The dotenv parser (skillbox/env_file.h): syntax, quoting, comments, and line-numbered errors that
// never quote a value.
#include "skillbox/env_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "capabilities/store/store_test_util.h"

namespace skillbox {
namespace {

using Env = std::map<std::string, std::string>;

Env parse_ok(std::string_view text) {
  auto r = parse_env_file(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : Env{};
}

std::string parse_error(std::string_view text) {
  auto r = parse_env_file(text);
  EXPECT_FALSE(r.ok()) << "parsed but should not: " << text;
  return r.ok() ? std::string() : r.error().message;
}

TEST(EnvFileTest, PlainAssignmentsCommentsAndBlankLines) {
  EXPECT_EQ(parse_ok(""), Env{});
  EXPECT_EQ(parse_ok("# only a comment\n\n   \n\t# indented comment\n"), Env{});
  EXPECT_EQ(parse_ok("A=1\nB=two words\n_C9=x"), (Env{{"A", "1"}, {"B", "two words"}, {"_C9", "x"}}));
  EXPECT_EQ(parse_ok("  A  =  spaced out  \n"), (Env{{"A", "spaced out"}}));
  EXPECT_EQ(parse_ok("EMPTY=\nEMPTY2=   \n"), (Env{{"EMPTY", ""}, {"EMPTY2", ""}}));
  EXPECT_EQ(parse_ok("export A=1\nexport\tB=2\n"), (Env{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(parse_ok("export=1\n"), (Env{{"export", "1"}})) << "a variable may be called export";
  EXPECT_EQ(parse_ok("A=1\r\nB=2\r\n"), (Env{{"A", "1"}, {"B", "2"}}));
  EXPECT_EQ(parse_ok("\xEF\xBB\xBF"
                     "A=1\n"),
            (Env{{"A", "1"}}))
      << "UTF-8 BOM skipped";
}

TEST(EnvFileTest, InlineCommentsNeedABlankBefore) {
  EXPECT_EQ(parse_ok("A=value # comment\n"), (Env{{"A", "value"}}));
  EXPECT_EQ(parse_ok("A=value\t# comment\n"), (Env{{"A", "value"}}));
  EXPECT_EQ(parse_ok("URL=https://example.com/#frag\n"), (Env{{"URL", "https://example.com/#frag"}}));
  EXPECT_EQ(parse_ok("A= # only a comment\n"), (Env{{"A", ""}}));
  EXPECT_EQ(parse_ok("A=#not-a-comment\n"), (Env{{"A", "#not-a-comment"}}));
}

TEST(EnvFileTest, UnquotedValuesKeepOtherCharacters) {
  EXPECT_EQ(parse_ok("A=a=b=c\n"), (Env{{"A", "a=b=c"}}));
  EXPECT_EQ(parse_ok("A=it's \"fine\"\n"), (Env{{"A", "it's \"fine\""}}));
  EXPECT_EQ(parse_ok("A=$HOME\n"), (Env{{"A", "$HOME"}})) << "no expansion";
  EXPECT_EQ(parse_ok("A=héllo ✓\n"), (Env{{"A", "héllo ✓"}}));
}

TEST(EnvFileTest, DoubleQuotes) {
  EXPECT_EQ(parse_ok(R"(A="a b  " # c)"), (Env{{"A", "a b  "}}));
  EXPECT_EQ(parse_ok(R"(A="l1\nl2\tt\r\"q\" \\ \$HOME #x")"), (Env{{"A", "l1\nl2\tt\r\"q\" \\ $HOME #x"}}));
  EXPECT_EQ(parse_ok("A=\"multi\nline\"\nB=2"), (Env{{"A", "multi\nline"}, {"B", "2"}}));
  EXPECT_EQ(parse_ok("A=\"crlf\r\ninside\"\r\n"), (Env{{"A", "crlf\ninside"}}));
  EXPECT_EQ(parse_ok("A=\"\"\n"), (Env{{"A", ""}}));
  EXPECT_EQ(parse_ok("A=\"it's\"\n"), (Env{{"A", "it's"}}));
}

TEST(EnvFileTest, SingleQuotesAreLiteral) {
  EXPECT_EQ(parse_ok(R"(A='C:\new\table $HOME "x"')"), (Env{{"A", R"(C:\new\table $HOME "x")"}}));
  EXPECT_EQ(parse_ok("A='two\nlines' # c\n"), (Env{{"A", "two\nlines"}}));
  EXPECT_EQ(parse_ok("A=''"), (Env{{"A", ""}}));
}

TEST(EnvFileTest, ErrorsNameTheLineAndNeverTheValue) {
  EXPECT_EQ(
      parse_error("A=1\nsk-live-abcdef123\n"),
      "line 2: expected NAME=VALUE, where NAME is letters, digits and _ and does not start with a digit");
  EXPECT_EQ(parse_error("\n\n1ABC=x").rfind("line 3: expected NAME=VALUE", 0), 0u);
  EXPECT_EQ(parse_error("MY-KEY=x").rfind("line 1: expected NAME=VALUE", 0), 0u);
  EXPECT_EQ(parse_error("=x").rfind("line 1: expected NAME=VALUE", 0), 0u);
  EXPECT_EQ(parse_error("export A").rfind("line 1: expected NAME=VALUE", 0), 0u);
  EXPECT_EQ(parse_error("A=1\nB=\"never closed\nC=3\n"),
            "line 2: the double-quoted value that starts on this line is never closed");
  EXPECT_EQ(parse_error("A='open"),
            "line 1: the single-quoted value that starts on this line is never closed");
  EXPECT_EQ(parse_error("A=\"a\nb\\q\"").rfind("line 2: unknown escape sequence", 0), 0u);
  EXPECT_EQ(parse_error("A=\"x\" trailing-secret"), "line 1: unexpected text after the closing quote");
  EXPECT_EQ(parse_error("A=1\nB=2\nA=3\n"), "line 3: A is already set on line 1");
  EXPECT_EQ(parse_error(std::string("A=1\nB=x\0y\n", 10)),
            "line 2: contains a NUL byte; env values cannot hold NUL");
  // No error message quotes the secret it failed on.
  for (const char* text : {"hunter2\n", "A=\"hunter2", "A=\"hunter2\\x\"", "A='x' hunter2"})
    EXPECT_EQ(parse_error(text).find("hunter2"), std::string::npos) << text;
}

TEST(EnvFileTest, LoadsAFileAndNamesItInErrors) {
  testing::TempDir dir;
  const auto good = dir.path() / "good.env";
  testing::write_bytes(good, "# settings\nexport API_KEY='abc'\nREGION=eu\n");
  auto loaded = load_env_file(good);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(*loaded, (Env{{"API_KEY", "abc"}, {"REGION", "eu"}}));

  const auto bad = dir.path() / "bad.env";
  testing::write_bytes(bad, "A=1\nnot an assignment\n");
  auto failed = load_env_file(bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message.rfind(bad.string() + ": line 2: expected NAME=VALUE", 0), 0u)
      << failed.error().message;

  auto missing = load_env_file(dir.path() / "missing.env");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("cannot open the env file"), std::string::npos);

  auto directory = load_env_file(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);

  const auto huge = dir.path() / "huge.env";
  testing::write_bytes(huge, std::string(kMaxEnvFileBytes + 1, '#'));
  auto too_big = load_env_file(huge);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().message.find("larger than"), std::string::npos);
}

}  // namespace
}  // namespace skillbox
