// The man pages (`skillbox man-pages DIR --doc-dir DOCS`, which `cmake --install` runs) checked against
// the command they document: one page per command, each listing every option and subcommand its --help
// shows, references to pages that exist, man rendering them without a warning; and no --help text naming
// a path of the source tree (an installed user has no docs/ folder). The packaging test checks that the
// installed pages' references (pages and guides) exist under the install prefix.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "cli/help_walk.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::CliExec;
using testing::help_tree;
using testing::read_bytes;
using testing::run_program;
using testing::split_words;

constexpr const char* kDocDir = "/opt/skillbox/share/doc/skillbox";

/// roff as a reader sees it: `\-` is `-`, font changes and `\&` are invisible.
std::string plain(const std::string& roff) {
  std::string out = std::regex_replace(roff, std::regex(R"(\\f[BIRP])"), "");
  out = std::regex_replace(out, std::regex(R"(\\&)"), "");
  return std::regex_replace(out, std::regex(R"(\\-)"), "-");
}

class ManPages : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() / "man1";
    const CliExec r = run_program({SKILLBOX_CLI_PATH, "man-pages", dir_.string(), "--doc-dir", kDocDir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& entry : fs::directory_iterator(dir_)) pages_.insert(entry.path().filename().string());
  }
  std::string page(const std::string& name) { return plain(read_bytes(dir_ / name)); }

  testing::TempDir tmp_;
  fs::path dir_;
  std::set<std::string> pages_;
};

TEST_F(ManPages, OnePerCommandWithEveryOptionAndSubcommandItsHelpShows) {
  const auto tree = help_tree();
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::set<std::string> expected = {"skillbox.1"};
  for (const auto& [path, entry] : tree) {
    const std::vector<std::string> words = split_words(path);
    if (words.empty() || words[0] == "help" || words[0] == "version") continue;
    const std::string name = "skillbox-" + words[0] + ".1";
    expected.insert(name);
    if (!pages_.count(name)) continue;
    const std::string text = page(name);
    // A subcommand is documented in its command's page, under its full name.
    if (words.size() > 1) {
      EXPECT_NE(text.find("skillbox " + path), std::string::npos) << name << " lacks " << path;
    }
    for (const std::string& option : entry.options)
      EXPECT_NE(text.find(option), std::string::npos)
          << name << " does not show " << option << " of '" << path << "'";
  }
  EXPECT_EQ(pages_, expected);
  for (const char* command : {"skillbox-run.1", "skillbox-check.1", "skillbox-store.1", "skillbox-test.1"})
    EXPECT_TRUE(pages_.count(command)) << command;
  // skillbox(1) lists every command and what --help has no room for.
  const std::string root = page("skillbox.1");
  for (const auto& [path, entry] : tree)
    if (split_words(path).size() == 1) {
      EXPECT_NE(root.find(path), std::string::npos) << path;
    }
  for (const char* section : {".SH EXAMPLES", ".SH ENVIRONMENT", "SKILLBOX_HOME", ".SH FILES", "_skillbox"})
    EXPECT_NE(root.find(section), std::string::npos) << section;
}

TEST_F(ManPages, SeeAlsoNamesPagesThatExistAndTheInstalledGuides) {
  const std::regex page_ref(R"(\b(skillbox(-[a-z]+)*)\(1\))");
  const std::regex doc_ref(std::string(kDocDir) + R"(/[A-Za-z0-9_./-]+)");
  for (const std::string& name : pages_) {
    const std::string text = page(name);
    int pages = 0, docs = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), page_ref); it != std::sregex_iterator();
         ++it) {
      ++pages;
      EXPECT_TRUE(pages_.count((*it)[1].str() + ".1"))
          << name << " names " << (*it)[0] << ", which is not a page";
    }
    for (auto it = std::sregex_iterator(text.begin(), text.end(), doc_ref); it != std::sregex_iterator();
         ++it) {
      ++docs;
      const std::string relative = it->str().substr(std::string(kDocDir).size() + 1);
      EXPECT_TRUE(fs::is_regular_file(fs::path(SKILLBOX_SOURCE_DIR) / relative))
          << name << " names " << it->str() << ", which the install does not put there";
    }
    EXPECT_GT(pages, 0) << name << " names no other page";
    EXPECT_GT(docs, 0) << name << " names no guide";
    EXPECT_EQ(text.find("docs/cli.md\""), std::string::npos);
  }
}

TEST_F(ManPages, ManRendersEveryPageWithoutAWarning) {
  const CliExec man = run_program({"sh", "-c", "command -v man"});
  ASSERT_EQ(man.exit_code, 0) << "man is not installed: scripts/setup.sh installs it";
  for (const std::string& name : pages_) {
    const CliExec r = run_program({"man", "--warnings", "-l", "-P", "cat", (dir_ / name).string()},
                                  {.cwd = {}, .env = {"MANWIDTH=80"}, .input = {}});
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.err, "") << name;
    EXPECT_NE(r.out.find("SYNOPSIS"), std::string::npos) << name << ":\n" << r.out;
  }
}

TEST(HelpText, NoHelpNamesAPathOfTheSourceTree) {
  // docs/, cli/, examples/ exist in a clone, not where skillbox is installed: --help names man pages.
  for (const auto& [path, entry] : help_tree()) {
    for (const char* repo_path : {"docs/", ".md\"", "scripts/", "tests/"})
      EXPECT_EQ(entry.text.find(repo_path), std::string::npos)
          << "skillbox " << path << " --help names " << repo_path << ":\n"
          << entry.text;
  }
  const CliExec root = run_program({SKILLBOX_CLI_PATH, "--help"});
  EXPECT_NE(root.out.find("man skillbox-COMMAND"), std::string::npos) << root.out;
}

}  // namespace
}  // namespace skillbox
