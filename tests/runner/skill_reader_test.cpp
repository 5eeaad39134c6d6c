// The host side of a skill's sources: reading the folder, confined to it, into bus::SkillSources.
#include "runner/skill_reader.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>

#include "skill_fixture.h"

namespace skillbox::runner {
namespace {

TEST(SkillFiles, ReadsFilesAndFollowsSymlinksThatStayInside) {
  testing::TempSkill skill({{"lib/a.js", "A"}});
  skill.symlink("alias.js", "lib/a.js");
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  EXPECT_EQ(*files->read("lib/a.js", 1024), "A");
  EXPECT_EQ(*files->read("alias.js", 1024), "A");
}

TEST(SkillFiles, RefusesSymlinksLeadingOutOfTheFolder) {
  testing::TempSkill skill({{"index.js", "x"}});
  // A file beside the skill folder, reachable only through the links.
  std::filesystem::path outside = skill.dir().parent_path() / "secret.js";
  { std::ofstream(outside) << "secret"; }
  skill.symlink("l1.js", outside);
  skill.symlink("l2", "..");
  skill.symlink("l3.js", "/etc/passwd");
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  for (const char* name : {"l1.js", "l2/secret.js", "l3.js"}) {
    auto r = files->read(name, 1 << 20);
    ASSERT_FALSE(r) << name;
    EXPECT_EQ(r.error().message, "'" + std::string(name) + "' leads outside the skill folder");
    EXPECT_EQ(r.error().message.find(skill.dir().string()), std::string::npos);
  }
}

TEST(SkillFiles, MissingFoldersAndOversizedFilesAreErrorsWithoutHostPaths) {
  testing::TempSkill skill({{"big.js", std::string(2000, 'x')}, {"dir/x.js", "x"}});
  auto files = SkillFiles::open(skill.dir());
  ASSERT_TRUE(files);
  EXPECT_EQ(files->read("nope.js", 1 << 20).error().message, "'nope.js' does not exist in the skill folder");
  EXPECT_EQ(files->read("dir", 1 << 20).error().message, "'dir' is not a regular file");
  EXPECT_EQ(files->read("big.js", 1000).error().message,
            "'big.js' is too large (2000 bytes; limit is 1000 bytes)");
}

// ---- read_skill_sources: everything a module specifier could load, up front ------------------------

TEST(SkillSources, TheEntryAndEveryModuleFileAreRead) {
  testing::TempSkill skill({{"index.js", "I"},
                            {"lib/a.js", "A"},
                            {"lib/deep/b.mjs", "B"},
                            {"c.cjs", "C"},
                            {"README.md", "not a module"},
                            {"data.json", "{}"}});
  skill.symlink("alias.js", "lib/a.js");
  auto sources = read_skill_sources(skill.dir(), "./index.js", 1 << 20);
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->entry, "index.js");
  EXPECT_EQ(
      sources->files,
      (std::map<std::string, std::string>{
          {"index.js", "I"}, {"lib/a.js", "A"}, {"lib/deep/b.mjs", "B"}, {"c.cjs", "C"}, {"alias.js", "A"}}));
  EXPECT_TRUE(sources->refused.empty());
}

TEST(SkillSources, TheEntryIsReadWhateverItsName) {
  testing::TempSkill skill({{"src/main.ts", "export default () => 1;"}}, "src/main.ts");
  auto sources = read_skill_sources(skill.dir(), "src/main.ts", 1 << 20);
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->files.at("src/main.ts"), "export default () => 1;");
}

TEST(SkillSources, LinksOutOfTheFolderAndOversizedFilesAreRefusedWithTheirReason) {
  testing::TempSkill skill({{"index.js", "x"}, {"big.js", std::string(2000, 'x')}});
  std::filesystem::path outside = skill.dir().parent_path() / "secret.js";
  { std::ofstream(outside) << "secret"; }
  skill.symlink("l1.js", outside);
  skill.symlink("l2", "..");
  skill.symlink("l3.js", "/etc/passwd");
  skill.symlink("inside", "lib");
  skill.write("lib/x.js", "X");
  auto sources = read_skill_sources(skill.dir(), "index.js", 1000);
  ASSERT_TRUE(sources) << sources.error().message;
  EXPECT_EQ(sources->refused.at("l1.js"), "leads outside the skill folder");
  EXPECT_EQ(sources->refused.at("l2"), "leads outside the skill folder");
  EXPECT_EQ(sources->refused.at("l3.js"), "leads outside the skill folder");
  EXPECT_EQ(sources->refused.at("big.js"), "is too large (2000 bytes; limit is 1000 bytes)");
  EXPECT_NE(sources->refused.at("inside").find("symbolic link to a folder"), std::string::npos);
  EXPECT_EQ(sources->files.count("l1.js"), 0u);
  EXPECT_EQ(sources->files.at("lib/x.js"), "X");
  for (const auto& [name, text] : sources->files) EXPECT_EQ(text.find("secret"), std::string::npos) << name;
  // The loader's messages are the ones the engine gave when it read files itself.
  EXPECT_EQ(engine::find_module_source(*sources, "l2/secret.js").error().message,
            "'l2/secret.js' leads outside the skill folder");
  EXPECT_EQ(engine::find_module_source(*sources, "nope.js").error().message,
            "'nope.js' does not exist in the skill folder");
}

TEST(SkillSources, EntryProblemsAreReportedAsBefore) {
  testing::TempSkill skill({{"other.js", ""}});
  EXPECT_EQ(read_skill_sources(skill.dir(), "index.js", 1 << 20).error().message,
            "entry file 'index.js' does not exist in the skill folder");
  EXPECT_EQ(read_skill_sources(skill.dir(), "../index.js", 1 << 20).error().message,
            "entry: the path '../index.js' leads outside the skill folder");
  skill.write("big.js", std::string(2000, 'x'));
  EXPECT_EQ(read_skill_sources(skill.dir(), "big.js", 1000).error().message,
            "entry file 'big.js' is too large (2000 bytes; limit is 1000 bytes)");
}

TEST(SkillSources, TheFileCountIsCapped) {
  testing::TempSkill skill({{"index.js", ""}});
  for (size_t i = 0; i < kMaxSourceFiles; ++i) skill.write("m/" + std::to_string(i) + ".js", "");
  auto sources = read_skill_sources(skill.dir(), "index.js", 1 << 20);
  ASSERT_FALSE(sources);
  EXPECT_EQ(sources.error().message,
            "the skill folder holds more than 4096 JavaScript files (.js, .mjs, .cjs); the limit is 4096");
}

TEST(SkillSources, NestingIsCapped) {
  testing::TempSkill skill({{"index.js", ""}});
  std::string deep;
  for (size_t i = 0; i <= kMaxSourceDepth; ++i) deep += "d/";
  skill.write(deep + "x.js", "");
  auto sources = read_skill_sources(skill.dir(), "index.js", 1 << 20);
  ASSERT_FALSE(sources);
  EXPECT_NE(sources.error().message.find("more than 32 levels deep"), std::string::npos)
      << sources.error().message;
}

// A kernel without openat2 (or a seccomp profile that blocks it): reading fails closed, never
// falling back to a plain open that a symlink could redirect.
int openat2_enosys(int, const char*, uint64_t, uint64_t) {
  errno = ENOSYS;
  return -1;
}
int openat2_eperm(int, const char*, uint64_t, uint64_t) {
  errno = EPERM;
  return -1;
}

TEST(SkillSources, MissingOrBlockedOpenat2FailsClosed) {
  testing::TempSkill skill({{"index.js", "export default () => 1;"}});
  auto missing = read_skill_sources(skill.dir(), "index.js", 1 << 20, &openat2_enosys);
  ASSERT_FALSE(missing);
  EXPECT_EQ(
      missing.error().message,
      "cannot read the skill's sources: the kernel refused openat2 (ENOSYS: not implemented, Linux 5.6 "
      "or later has it); skillbox needs it to keep every read inside the skill folder and does not fall "
      "back to a plain open");
  auto blocked = read_skill_sources(skill.dir(), "index.js", 1 << 20, &openat2_eperm);
  ASSERT_FALSE(blocked);
  EXPECT_NE(blocked.error().message.find("openat2 (EPERM: blocked"), std::string::npos)
      << blocked.error().message;
  auto files = SkillFiles::open(skill.dir(), &openat2_enosys);
  ASSERT_TRUE(files);
  EXPECT_NE(files->read("index.js", 1 << 20).error().message.find("does not fall back to a plain open"),
            std::string::npos);
}

}  // namespace
}  // namespace skillbox::runner
