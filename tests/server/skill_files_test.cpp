// The skill digest's canonical form (server/skill_digest.h) and the checks on files a client sends
// (server/skill_files.h): paths, tar entry types, duplicates and bounds, in-process.
#include "server/skill_files.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <array>
#include <filesystem>
#include <string>

#include "serve_support.h"
#include "server/skill_digest.h"
#include "tar_support.h"

namespace skillbox::testing {
namespace {

namespace fs = std::filesystem;
using server::SkillFiles;

/// The canonical form written out by hand, as docs/server.md "Skill digest" spells it.
std::string by_hand(const std::vector<std::pair<std::string, std::string>>& sorted_files) {
  std::string bytes = "skillbox-skill-digest-1\n";
  const auto length = [&](uint64_t n) {
    for (int i = 7; i >= 0; --i) bytes.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  };
  for (const auto& [path, content] : sorted_files) {
    bytes.push_back('f');
    length(path.size());
    bytes += path;
    length(content.size());
    bytes += content;
  }
  std::array<unsigned char, crypto_hash_sha256_BYTES> hash{};
  crypto_hash_sha256(hash.data(), reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  std::string hex(65, '\0');
  sodium_bin2hex(hex.data(), hex.size(), hash.data(), hash.size());
  hex.pop_back();
  return hex;
}

TEST(SkillDigest, FollowsTheDocumentedCanonicalForm) {
  const SkillFiles files{{"skill.json", "{}"}, {"lib/b.js", "b"}, {"index.js", "export default 1"}};
  EXPECT_EQ(server::skill_digest(files),
            by_hand({{"index.js", "export default 1"}, {"lib/b.js", "b"}, {"skill.json", "{}"}}));
}

TEST(SkillDigest, AFolderAndTheSameFilesSentGiveOneDigest) {
  TempDir tmp;
  const SkillFiles files{{"skill.json", "{\"id\":\"x\"}"}, {"lib/util.js", "export const u = 1;\n"}};
  for (const auto& [path, content] : files) write_file(tmp.path() / path, content);
  fs::create_directories(tmp.path() / "empty");  // folders are not entries
  EXPECT_EQ(server::folder_digest(tmp.path()), server::skill_digest(files));
}

TEST(SkillDigest, AFolderChangedSinceItsLastDigestGetsItsNewOne) {
  TempDir tmp;
  write_file(tmp.path() / "index.js", "export default 1");
  ASSERT_EQ(server::folder_digest(tmp.path()), server::skill_digest({{"index.js", "export default 1"}}));
  write_file(tmp.path() / "index.js", "export default 2");  // the same size: only the bytes differ
  EXPECT_EQ(server::folder_digest(tmp.path()), server::skill_digest({{"index.js", "export default 2"}}));
  write_file(tmp.path() / "lib.js", "");
  EXPECT_EQ(server::folder_digest(tmp.path()),
            server::skill_digest({{"index.js", "export default 2"}, {"lib.js", ""}}));
}

TEST(SkillDigest, AnyChangeOfNameOrBytesChangesIt) {
  const SkillFiles base{{"a.js", "1"}, {"b.js", "2"}};
  const std::string d = server::skill_digest(base);
  EXPECT_NE(server::skill_digest({{"a.js", "1"}, {"b.js", "3"}}), d);
  EXPECT_NE(server::skill_digest({{"a.js", "1"}, {"c.js", "2"}}), d);
  // Lengths are in the form: moving a byte from a path into the content is another digest.
  EXPECT_NE(server::skill_digest({{"a.js1", ""}, {"b.js", "2"}}), d);
  EXPECT_TRUE(server::is_digest(d));
}

TEST(SkillDigest, ASymlinkInAFolderCountsByItsTarget) {
  TempDir tmp;
  write_file(tmp.path() / "index.js", "x");
  const std::optional<std::string> before = server::folder_digest(tmp.path());
  fs::create_symlink("/etc/passwd", tmp.path() / "link.js");
  const std::optional<std::string> with_link = server::folder_digest(tmp.path());
  ASSERT_TRUE(before && with_link);
  EXPECT_NE(*before, *with_link);
}

TEST(SkillFiles, PathsFollowTheRule) {
  for (const char* ok : {"index.js", "lib/util.js", "a\\b.js", "é.js", ".hidden"}) {
    EXPECT_EQ(server::file_path_problem(ok), "") << ok;
  }
  const std::string deep = [] {
    std::string p;
    for (int i = 0; i < 40; ++i) p += "d/";
    return p + "f";
  }();
  for (const std::string& bad :
       {std::string(""), std::string("/etc/passwd"), std::string("../x"), std::string("a/../../x"),
        std::string("a//b"), std::string("a/"), std::string("./a"), std::string("a\0b", 3),
        std::string("\xff.js"), std::string(2000, 'a'), std::string(300, 'a') + "/x", deep,
        std::string("a\nb")}) {
    EXPECT_NE(server::file_path_problem(bad), "") << bad;
  }
}

TEST(SkillFiles, AJsonMapTakesTextFilesWithinTheBounds) {
  const auto files = server::files_from_json(nlohmann::json{{"skill.json", "{}"}, {"index.js", "1"}}, {});
  ASSERT_TRUE(files);
  EXPECT_EQ(files->size(), 2u);
  const auto binary = server::files_from_json(nlohmann::json{{"a.bin", 1}}, {});
  ASSERT_FALSE(binary);
  EXPECT_EQ(binary.error().status, 400u);
  const auto traversal = server::files_from_json(nlohmann::json{{"../../b-data/x", "1"}}, {});
  ASSERT_FALSE(traversal);
  EXPECT_NE(traversal.error().message.find("\"..\""), std::string::npos);
  const auto many = server::files_from_json(nlohmann::json{{"a", "1"}, {"b", "2"}, {"c", "3"}},
                                            {.max_files = 2, .max_bytes = 100});
  ASSERT_FALSE(many);
  EXPECT_EQ(many.error().status, 413u);
  const auto big = server::files_from_json(nlohmann::json{{"a", std::string(101, 'x')}},
                                           {.max_files = 2, .max_bytes = 100});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().status, 413u);
  const auto file_as_dir = server::files_from_json(nlohmann::json{{"a", "1"}, {"a/b", "2"}}, {});
  ASSERT_FALSE(file_as_dir);
}

TEST(SkillFiles, ATarOfRegularFilesIsRead) {
  const std::string tar = make_tar({{.path = "./", .type = AE_IFDIR},
                                    {.path = "./skill.json", .content = "{}"},
                                    {.path = "./lib/", .type = AE_IFDIR},
                                    {.path = "./lib/u.js", .content = "u"}});
  const auto files = server::files_from_tar(tar, {});
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(*files, (SkillFiles{{"lib/u.js", "u"}, {"skill.json", "{}"}}));
}

TEST(SkillFiles, ATarWithLinksDevicesOrEscapingNamesIsRefused) {
  const std::vector<std::pair<std::string, std::vector<TarEntry>>> cases = {
      {"symlink", {{.path = "index.js", .type = AE_IFLNK, .link = "/etc/passwd"}}},
      {"hard link", {{.path = "a.js", .content = "1"}, {.path = "b.js", .link = "a.js"}}},
      {"device", {{.path = "dev", .type = AE_IFCHR}}},
      {"fifo", {{.path = "fifo", .type = AE_IFIFO}}},
      {"dot-dot", {{.path = "../../b-data/store.sqlite", .content = "x"}}},
      {"absolute", {{.path = "/etc/cron.d/x", .content = "x"}}},
      {"duplicate", {{.path = "a.js", .content = "1"}, {.path = "./a.js", .content = "2"}}},
      {"not utf-8", {{.path = "\xc3\x28.js", .content = "1"}}},
  };
  for (const auto& [name, entries] : cases) {
    const auto files = server::files_from_tar(make_tar(entries), {});
    ASSERT_FALSE(files) << name;
    EXPECT_EQ(files.error().status, 400u) << name;
    EXPECT_FALSE(files.error().message.empty()) << name;
  }
  const auto garbage = server::files_from_tar("this is not a tar archive, not at all", {});
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().status, 400u);
  const auto big = server::files_from_tar(make_tar({{.path = "a", .content = std::string(5000, 'x')}}),
                                          {.max_files = 10, .max_bytes = 4096});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().status, 413u);
}

}  // namespace
}  // namespace skillbox::testing
