// Tests of Skill::load: the skill folder, its skill.json and its entry file on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "skillbox/skillbox.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;

class SkillLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "skillbox-load-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    dir_ = root_ / "skill";
    fs::create_directory(dir_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
  }
  void write_manifest(const std::string& entry = "index.js") {
    write(dir_ / "skill.json", R"({"id": "demo", "entry": ")" + entry + R"("})");
  }
  std::string load_error(const fs::path& dir) {
    Result<Skill> s = Skill::load(dir);
    return s.ok() ? "(loaded)" : s.error().message;
  }

  fs::path root_;
  fs::path dir_;
};

TEST_F(SkillLoad, LoadsAValidSkillWithACanonicalFolder) {
  write_manifest("src/main.js");
  write(dir_ / "src/main.js", "export default () => 1;");
  Result<Skill> s = Skill::load(root_ / "skill" / "." / "src" / "..");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->dir(), fs::canonical(dir_));
  EXPECT_EQ(s->manifest().id, "demo");
  EXPECT_EQ(s->manifest().entry, "src/main.js");
}

TEST_F(SkillLoad, AMissingFolderIsNamed) {
  const fs::path missing = root_ / "nope";
  EXPECT_EQ(load_error(missing), "cannot load skill \"" + missing.string() + "\": no such folder");
}

TEST_F(SkillLoad, AFileIsNotASkillFolder) {
  write(root_ / "file.txt", "x");
  EXPECT_EQ(load_error(root_ / "file.txt"), "cannot load skill \"" + (root_ / "file.txt").string() +
                                                "\": not a folder; pass the folder that holds skill.json");
}

TEST_F(SkillLoad, AFolderWithoutSkillJsonSaysWhatIsMissing) {
  EXPECT_EQ(load_error(dir_),
            "cannot load skill \"" + dir_.string() +
                "\": no skill.json in the folder; every skill needs one (see docs/manifest.md)");
}

TEST_F(SkillLoad, ManifestErrorsAreReportedAsParseManifestDoes) {
  write(dir_ / "skill.json", R"({"id": "demo", "entry": "index.js", "limits": {"memory_mb": "lots"}})");
  write(dir_ / "index.js", "");
  EXPECT_EQ(load_error(dir_),
            "skill.json: limits.memory_mb: expected an integer from 1 to 4096, got \"lots\"");
}

TEST_F(SkillLoad, AMissingEntryFileIsNamed) {
  write_manifest("main.js");
  EXPECT_EQ(load_error(dir_),
            "skill.json: entry: file \"main.js\" not found in the skill folder; create it or fix the path");
}

TEST_F(SkillLoad, AnEntryThatIsAFolderIsRefused) {
  write_manifest("lib");
  fs::create_directory(dir_ / "lib");
  EXPECT_EQ(load_error(dir_), "skill.json: entry: \"lib\" is not a regular file");
}

TEST_F(SkillLoad, AnEntrySymlinkLeadingOutOfTheFolderIsRefused) {
  write(root_ / "outside.js", "export default () => 'outside';");
  write_manifest("index.js");
  fs::create_symlink(root_ / "outside.js", dir_ / "index.js");
  EXPECT_EQ(load_error(dir_),
            "skill.json: entry: \"index.js\" leads outside the skill folder (through a symbolic "
            "link); the entry must be a file of the skill");
  // A sibling folder whose name starts with the skill folder's is still outside.
  fs::remove(dir_ / "index.js");
  write(root_ / "skill2/x.js", "");
  fs::create_symlink(root_ / "skill2/x.js", dir_ / "index.js");
  EXPECT_NE(load_error(dir_).find("leads outside the skill folder"), std::string::npos);
}

TEST_F(SkillLoad, AnEntrySymlinkInsideTheFolderIsFine) {
  write_manifest("index.js");
  write(dir_ / "real/index.js", "export default () => 1;");
  fs::create_symlink("real/index.js", dir_ / "index.js");
  EXPECT_EQ(load_error(dir_), "(loaded)");
}

TEST_F(SkillLoad, ASkillJsonSymlinkLeadingOutIsRefused) {
  write(root_ / "other.json", R"({"id": "demo", "entry": "index.js"})");
  write(dir_ / "index.js", "");
  fs::create_symlink(root_ / "other.json", dir_ / "skill.json");
  EXPECT_EQ(load_error(dir_), "cannot load skill \"" + dir_.string() +
                                  "\": skill.json is a symbolic link that leads outside the skill folder");
}

TEST_F(SkillLoad, AFifoAsSkillJsonDoesNotHang) {
  ASSERT_EQ(::mkfifo((dir_ / "skill.json").c_str(), 0600), 0);
  EXPECT_EQ(load_error(dir_), "cannot load skill \"" + dir_.string() + "\": skill.json: not a regular file");
}

TEST_F(SkillLoad, AHugeSkillJsonIsRefusedWithoutReadingItAll) {
  write(dir_ / "skill.json", std::string(size_t{10} * 1024 * 1024, ' '));
  EXPECT_EQ(load_error(dir_),
            "skill.json: larger than 65536 bytes; a manifest is a small JSON object (see docs/manifest.md)");
  write_manifest();
  write(dir_ / "index.js", "");
  EXPECT_EQ(load_error(dir_), "(loaded)");
}

}  // namespace
}  // namespace skillbox
