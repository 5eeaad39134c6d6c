// The runner's source cache: an unchanged skill is served from memory, and every change a user can make
// to its sources (edit, an import added or dropped, a file added, removed, renamed over or swapped for a
// link) takes effect on the next read; files the entry does not import do not matter.
#include "runner/source_cache.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "skill_fixture.h"

namespace skillbox::runner {
namespace {

using std::chrono::milliseconds;

// Without the racy window: each change below alters a size, an inode or a folder's entries, which the
// stamps see whatever the file system clock's resolution.
SourceCache no_window() {
  return SourceCache(milliseconds(0));
}

std::string text_of(const Result<bus::SkillSources>& r, const std::string& name) {
  if (!r) return "error: " + r.error().message;
  auto it = r->files.find(name);
  return it == r->files.end() ? "<absent>" : it->second;
}

TEST(SourceCache, AnUnchangedSkillIsServedFromTheCache) {
  testing::TempSkill skill({{"index.js", "import './lib/a.js';"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  auto first = cache.read(skill.dir(), "index.js", Limits{});
  auto second = cache.read(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(SourceCache, FilesTheEntryDoesNotImportDoNotMatter) {
  testing::TempSkill skill({{"index.js", "import './lib/a.js';"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "A");
  skill.write("node_modules/pkg/index.js", "X");  // npm install beside the skill
  skill.write("notes.js", "N");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "A");
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(SourceCache, AnEditedFileIsReadAgain) {
  testing::TempSkill skill({{"index.js", "import './lib/a.js';"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "A");
  skill.write("lib/a.js", "AA");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "AA");
  skill.write("index.js", "import './lib/a.js'; ");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "import './lib/a.js'; ");
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(SourceCache, ImportsAddedRemovedAndAppearingTakeEffect) {
  testing::TempSkill skill({{"index.js", "export default 1;"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "<absent>");
  // An edit that adds imports: of a file that exists, and of one in a folder that does not yet.
  skill.write("index.js", "import './lib/a.js';\nimport './new/c.js';");
  auto edited = cache.read(skill.dir(), "index.js", Limits{});
  EXPECT_EQ(text_of(edited, "lib/a.js"), "A");
  ASSERT_TRUE(edited);
  EXPECT_EQ(edited->refused.at("new/c.js"), "does not exist in the skill folder");
  // The missing file appears (in a new folder), and an imported one is removed.
  skill.write("new/c.js", "C");
  std::filesystem::remove(skill.dir() / "lib/a.js");
  auto changed = cache.read(skill.dir(), "index.js", Limits{});
  EXPECT_EQ(text_of(changed, "new/c.js"), "C");
  ASSERT_TRUE(changed);
  EXPECT_EQ(changed->files.count("lib/a.js"), 0u);
  EXPECT_EQ(changed->refused.at("lib/a.js"), "does not exist in the skill folder");
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(SourceCache, AFolderSwappedForALinkIsRefused) {
  testing::TempSkill skill({{"index.js", "import './lib/a.js';"}, {"real/a.js", "A"}});
  std::filesystem::rename(skill.dir() / "real", skill.dir() / "lib");
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib/a.js"), "A");
  // The same file, reached through a link to its folder: its own stamp is unchanged.
  std::filesystem::rename(skill.dir() / "lib", skill.dir() / "real");
  skill.symlink("lib", "real");
  auto r = cache.read(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->files.count("lib/a.js"), 0u);
  EXPECT_NE(r->refused.at("lib").find("symbolic link to a folder"), std::string::npos);
}

TEST(SourceCache, AFileRenamedOverTheEntryTakesEffect) {
  testing::TempSkill skill({{"index.js", "I"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "I");
  // Written beside the folder and renamed over the entry: same size, same folder entries, new inode.
  skill.write("../next.js", "J");
  std::filesystem::rename(skill.dir() / "../next.js", skill.dir() / "index.js");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "J");
}

TEST(SourceCache, AFileSwappedForALinkOutOfTheFolderIsRefused) {
  testing::TempSkill skill({{"index.js", "import './lib.js';"}, {"lib.js", "L"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "lib.js"), "L");
  skill.write("../secret.js", "S");
  std::filesystem::remove(skill.dir() / "lib.js");
  skill.symlink("lib.js", skill.dir() / "../secret.js");
  auto r = cache.read(skill.dir(), "index.js", Limits{});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->files.count("lib.js"), 0u);
  EXPECT_EQ(r->refused.at("lib.js"), "leads outside the skill folder");
}

TEST(SourceCache, ASameSizeEditWithinTheRacyWindowIsReadAgain) {
  // Two writes of the same size within one tick of the file system clock leave equal stamps; the
  // default window makes a read of files that young never trusted.
  testing::TempSkill skill({{"index.js", "I1"}});
  SourceCache cache;
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "I1");
  skill.write("index.js", "I2");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "I2");
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(SourceCache, ErrorsAreNotCached) {
  testing::TempSkill skill({{"lib.js", "L"}});
  SourceCache cache = no_window();
  auto missing = cache.read(skill.dir(), "index.js", Limits{});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "entry file 'index.js' does not exist in the skill folder");
  skill.write("index.js", "I");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", Limits{}), "index.js"), "I");
}

TEST(SourceCache, TheLimitsArePartOfTheKey) {
  testing::TempSkill skill({{"index.js", "import './big.js';"}, {"big.js", std::string(300'000, ' ')}});
  SourceCache cache = no_window();
  Limits small;
  small.memory_bytes = Limits::kMinMemoryBytes;
  auto large = cache.read(skill.dir(), "index.js", Limits{});
  auto tiny = cache.read(skill.dir(), "index.js", small);
  ASSERT_TRUE(large && tiny);
  EXPECT_EQ(large->files.count("big.js"), 1u);
  EXPECT_EQ(tiny->refused.at("big.js"), "is too large (300000 bytes; limit is 262144 bytes)");
  // The stack limit too: how far a file parses, and so which imports are found, depends on it.
  Limits shallow;
  shallow.stack_bytes = Limits::kMinStackBytes;
  EXPECT_TRUE(cache.read(skill.dir(), "index.js", shallow));
  EXPECT_EQ(cache.hits(), 0u);
}

}  // namespace
}  // namespace skillbox::runner
