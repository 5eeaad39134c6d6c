// The runner's source cache: an unchanged skill is served from memory, and every change a user can make
// to the folder (edit, add, remove, rename over, swap for a link) takes effect on the next read.
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
  testing::TempSkill skill({{"index.js", "I"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  auto first = cache.read(skill.dir(), "index.js", 1 << 20);
  auto second = cache.read(skill.dir(), "index.js", 1 << 20);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(SourceCache, AnEditedFileIsReadAgain) {
  testing::TempSkill skill({{"index.js", "I"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib/a.js"), "A");
  skill.write("lib/a.js", "AA");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib/a.js"), "AA");
  skill.write("index.js", "II");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "II");
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(SourceCache, AddedAndRemovedModuleFilesTakeEffect) {
  testing::TempSkill skill({{"index.js", "I"}, {"lib/a.js", "A"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib/b.js"), "<absent>");
  skill.write("lib/b.js", "B");  // in a folder below the skill folder
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib/b.js"), "B");
  std::filesystem::remove(skill.dir() / "lib/a.js");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib/a.js"), "<absent>");
  skill.write("new/c.js", "C");  // in a new folder
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "new/c.js"), "C");
}

TEST(SourceCache, AFileRenamedOverTheEntryTakesEffect) {
  testing::TempSkill skill({{"index.js", "I"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "I");
  // Written beside the folder and renamed over the entry: same size, same folder entries, new inode.
  skill.write("../next.js", "J");
  std::filesystem::rename(skill.dir() / "../next.js", skill.dir() / "index.js");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "J");
}

TEST(SourceCache, AFileSwappedForALinkOutOfTheFolderIsRefused) {
  testing::TempSkill skill({{"index.js", "I"}, {"lib.js", "L"}});
  SourceCache cache = no_window();
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "lib.js"), "L");
  skill.write("../secret.js", "S");
  std::filesystem::remove(skill.dir() / "lib.js");
  skill.symlink("lib.js", skill.dir() / "../secret.js");
  auto r = cache.read(skill.dir(), "index.js", 1 << 20);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->files.count("lib.js"), 0u);
  EXPECT_EQ(r->refused.at("lib.js"), "leads outside the skill folder");
}

TEST(SourceCache, ASameSizeEditWithinTheRacyWindowIsReadAgain) {
  // Two writes of the same size within one tick of the file system clock leave equal stamps; the
  // default window makes a read of files that young never trusted.
  testing::TempSkill skill({{"index.js", "I1"}});
  SourceCache cache;
  ASSERT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "I1");
  skill.write("index.js", "I2");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "I2");
  EXPECT_EQ(cache.hits(), 0u);
}

TEST(SourceCache, ErrorsAreNotCached) {
  testing::TempSkill skill({{"lib.js", "L"}});
  SourceCache cache = no_window();
  auto missing = cache.read(skill.dir(), "index.js", 1 << 20);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "entry file 'index.js' does not exist in the skill folder");
  skill.write("index.js", "I");
  EXPECT_EQ(text_of(cache.read(skill.dir(), "index.js", 1 << 20), "index.js"), "I");
}

TEST(SourceCache, TheCapIsPartOfTheKey) {
  testing::TempSkill skill({{"index.js", "I"}, {"big.js", std::string(2000, 'x')}});
  SourceCache cache = no_window();
  auto large = cache.read(skill.dir(), "index.js", 1 << 20);
  auto small = cache.read(skill.dir(), "index.js", 1000);
  ASSERT_TRUE(large && small);
  EXPECT_EQ(large->files.count("big.js"), 1u);
  EXPECT_EQ(small->refused.at("big.js"), "is too large (2000 bytes; limit is 1000 bytes)");
}

}  // namespace
}  // namespace skillbox::runner
