#include "capabilities/fs/workspace_path.h"

#include <gtest/gtest.h>

#include <string>

namespace skillbox::capabilities {
namespace {

using namespace std::string_literals;

std::string normalised(std::string_view given) {
  auto parsed = parse_workspace_path("op", given);
  if (!parsed) {
    return std::string("error ") + bus::error_name(parsed.error().code) + ": " + parsed.error().message;
  }
  return parsed->relative();
}

bus::ErrorCode code_of(std::string_view given) {
  auto parsed = parse_workspace_path("op", given);
  EXPECT_FALSE(parsed.ok()) << given;
  if (!parsed) return parsed.error().code;
  return bus::ErrorCode::IoError;
}

TEST(WorkspacePath, NormalisesDotsAndEmptyComponents) {
  EXPECT_EQ(normalised("a.txt"), "a.txt");
  EXPECT_EQ(normalised("./a//b/./c/"), "a/b/c");
  EXPECT_EQ(normalised("a/../b"), "b");
  EXPECT_EQ(normalised("a/.."), ".");
  EXPECT_EQ(normalised("."), ".");
  EXPECT_EQ(normalised("./"), ".");
}

TEST(WorkspacePath, ParentAndName) {
  auto parsed = parse_workspace_path("op", "x/y/z.txt");
  const auto& p = *parsed;
  EXPECT_EQ(p.parent(), "x/y");
  EXPECT_EQ(p.name(), "z.txt");
  auto top = parse_workspace_path("op", "z.txt");
  EXPECT_EQ(top->parent(), ".");
}

TEST(WorkspacePath, EscapesAndAbsolutePathsArePermissionDenied) {
  for (const char* p : {"../x", "a/../../x", "/etc/passwd", "//etc/passwd", "////etc/passwd", "./../x",
                        "a/./..//../x", "..", "/"}) {
    EXPECT_EQ(code_of(p), bus::ErrorCode::PermissionDenied) << p;
  }
}

TEST(WorkspacePath, BackslashColonAndTildeAreOrdinaryCharacters) {
  EXPECT_EQ(normalised("..\\..\\x"), "..\\..\\x");
  EXPECT_EQ(normalised("C:\\x"), "C:\\x");
  EXPECT_EQ(normalised("~/x"), "~/x");
}

TEST(WorkspacePath, MalformedPathsAreInvalidArgument) {
  EXPECT_EQ(code_of(""), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of("notes.txt\0/../../../etc/passwd"s), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of("\xff"), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of("\xc0\xaf"), bus::ErrorCode::InvalidArgument);          // overlong '/'
  EXPECT_EQ(code_of("\xed\xa0\x80"), bus::ErrorCode::InvalidArgument);      // surrogate (CESU-8)
  EXPECT_EQ(code_of("\xf4\x90\x80\x80"), bus::ErrorCode::InvalidArgument);  // above U+10FFFF
  EXPECT_EQ(code_of("a\xe2\x82"), bus::ErrorCode::InvalidArgument);         // truncated sequence
  EXPECT_EQ(code_of(std::string(256, 'n')), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of(std::string(4097, 'a')), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of(".skillbox-tmp-0123"), bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(code_of("a/.skillbox-x/b"), bus::ErrorCode::InvalidArgument);
}

TEST(WorkspacePath, LimitsAreInclusive) {
  EXPECT_EQ(normalised(std::string(255, 'n')), std::string(255, 'n'));
  std::string long_path;
  while (long_path.size() + 2 <= kMaxPathBytes) long_path += "a/";
  long_path += std::string(kMaxPathBytes - long_path.size(), 'b');
  ASSERT_EQ(long_path.size(), kMaxPathBytes);
  EXPECT_EQ(normalised(long_path).substr(0, 6), "a/a/a/");
  EXPECT_EQ(normalised("\xf0\x9f\x93\x9d notes/\xc3\xa4.txt"), "\xf0\x9f\x93\x9d notes/\xc3\xa4.txt");
}

TEST(WorkspacePath, MessagesQuoteThePathAsGivenAndNameTheLimit) {
  auto parsed = parse_workspace_path("readFile", "../secret");
  EXPECT_EQ(parsed.error().message, "readFile \"../secret\": path leaves the workspace");
  parsed = parse_workspace_path("stat", std::string(300, 'x'));
  const std::string& m = parsed.error().message;
  EXPECT_NE(m.find("component is 300 bytes long; the limit is 255"), std::string::npos) << m;
  EXPECT_LT(m.size(), 300u);  // the quoted path is cut short
}

TEST(WorkspacePath, VisibleNames) {
  EXPECT_TRUE(is_visible_name("notes.txt"));
  EXPECT_TRUE(is_visible_name("C:\\x"));
  EXPECT_FALSE(is_visible_name(""));
  EXPECT_FALSE(is_visible_name(".."));
  EXPECT_FALSE(is_visible_name(".skillbox-tmp-1"));
  EXPECT_FALSE(is_visible_name("\xff"));
  EXPECT_FALSE(is_visible_name("a/b"));
}

}  // namespace
}  // namespace skillbox::capabilities
