// The bash completion script (`skillbox completion bash`, installed as
// share/bash-completion/completions/skillbox) checked against the command it completes: every command and
// option that `--help` shows, found by walking the help of every command, must be offered where it
// belongs, and nothing else; bash must accept the script; and completions driven the way bash drives
// them (COMP_WORDS, COMP_CWORD, then the completion function) give what a user expects at <TAB>.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "support/cli_exec.h"

namespace skillbox {
namespace {

namespace fs = std::filesystem;
using testing::read_bytes;
using testing::write_bytes;

using Exec = testing::CliExec;

Exec run(const std::vector<std::string>& argv) {
  return testing::run_program(argv);
}

std::vector<std::string> split_words(const std::string& path) {
  std::vector<std::string> words;
  std::istringstream in(path);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// What `skillbox PATH --help` lists: the subcommands and every spelling of every option.
struct HelpEntry {
  std::set<std::string> commands;
  std::set<std::string> options;
};

/// Reads CLI11's help layout: "Options:" / "Subcommands:" headers, then entries indented by exactly two
/// spaces (wrapped descriptions are indented further). An option entry starts "-h,--help" or "--x N".
HelpEntry parse_help(const std::string& text) {
  HelpEntry e;
  std::string section;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ') {
      section = line;
      continue;
    }
    if (line.size() < 3 || line.compare(0, 2, "  ") != 0 || line[2] == ' ') continue;
    const std::string first = line.substr(2, line.find(' ', 2) - 2);
    if (section == "Subcommands:") {
      e.commands.insert(first);
    } else if (section == "Options:" && first.starts_with("-")) {
      std::istringstream names(first);
      for (std::string n; std::getline(names, n, ',');) e.options.insert(n);
    }
  }
  return e;
}

class Completion : public ::testing::Test {
 protected:
  void SetUp() override {
    const Exec script = run({SKILLBOX_CLI_PATH, "completion", "bash"});
    ASSERT_EQ(script.exit_code, 0) << script.err;
    script_ = tmp_.path() / "skillbox.bash";
    write_bytes(script_, script.out);
  }

  /// The candidates the completion function gives for `words` (the command line up to the cursor, the
  /// last word being the one under it), sorted.
  std::vector<std::string> complete(const std::vector<std::string>& words) {
    std::vector<std::string> args = {
        "bash",
        "--norc",
        "--noprofile",
        "-c",
        "source \"$1\" || exit 99; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
        "COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; _skillbox; "
        "for w in \"${COMPREPLY[@]}\"; do printf '%s\\n' \"$w\"; done",
        "bash",
        script_.string()};
    args.insert(args.end(), words.begin(), words.end());
    const Exec r = run(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << "completing: " << ::testing::PrintToString(words);
    std::vector<std::string> out = split_words(r.out);
    std::sort(out.begin(), out.end());
    return out;
  }

  /// Every command path `--help` reaches ("" is skillbox itself), with what its help lists.
  std::vector<std::pair<std::string, HelpEntry>> help_tree() {
    std::vector<std::pair<std::string, HelpEntry>> tree;
    std::vector<std::string> queue = {""};
    while (!queue.empty()) {
      const std::string path = queue.front();
      queue.erase(queue.begin());
      std::vector<std::string> args = {SKILLBOX_CLI_PATH};
      for (const std::string& w : split_words(path)) args.push_back(w);
      args.push_back("--help");
      const Exec r = run(args);
      EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
      const HelpEntry entry = parse_help(r.out);
      EXPECT_FALSE(entry.options.empty()) << "no options parsed from the help of '" << path << "':\n"
                                          << r.out;
      for (const std::string& sub : entry.commands) {
        // `help` takes command names as its arguments; its own --help is the root's.
        if (path.empty() && sub == "help") continue;
        queue.push_back(path.empty() ? sub : path + " " + sub);
      }
      tree.emplace_back(path, entry);
    }
    return tree;
  }

  testing::TempDir tmp_;
  fs::path script_;
};

using Words = std::vector<std::string>;

TEST_F(Completion, BashAcceptsTheScriptAndTheBuildInstallsTheSameOne) {
  const Exec syntax = run({"bash", "-n", script_.string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(syntax.err, "");
  // The file the build generated (and `cmake --install` installs) is what the command prints.
  EXPECT_EQ(read_bytes(SKILLBOX_COMPLETION_FILE), read_bytes(script_))
      << SKILLBOX_COMPLETION_FILE << " is stale: rebuild";
  const Exec registered =
      run({"bash", "--norc", "-c", "source \"$1\" && complete -p skillbox", "bash", script_.string()});
  EXPECT_EQ(registered.out, "complete -F _skillbox skillbox\n") << registered.err;
}

TEST_F(Completion, OffersExactlyTheCommandsAndOptionsEveryHelpShows) {
  const auto tree = help_tree();
  std::set<std::string> paths;
  for (const auto& [path, entry] : tree) paths.insert(path);
  for (const char* expected : {"", "run", "check", "store", "store list", "store get", "store set",
                               "store delete", "store export", "store import", "skills list", "skills rebind",
                               "workspace ls", "workspace cat", "workspace rm", "version"})
    EXPECT_TRUE(paths.count(expected)) << "the help walk did not reach '" << expected << "'";

  for (const auto& [path, entry] : tree) {
    Words words = {"skillbox"};
    for (const std::string& w : split_words(path)) words.push_back(w);
    if (!entry.commands.empty()) {
      words.push_back("");
      const std::vector<std::string> got = complete(words);
      EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), entry.commands)
          << "commands of '" << path << "'";
      words.pop_back();
    }
    if (path == "help") continue;  // its words are command names
    words.push_back("-");
    const std::vector<std::string> got = complete(words);
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), entry.options) << "options of '" << path << "'";
  }
}

TEST_F(Completion, CompletesWhatAUserTypes) {
  EXPECT_EQ(complete({"skillbox", "sto"}), Words{"store"});
  EXPECT_EQ(complete({"skillbox", "store", "im"}), Words{"import"});
  EXPECT_EQ(complete({"skillbox", "skills", "re"}), Words{"rebind"});
  EXPECT_EQ(complete({"skillbox", "workspace", ""}), (Words{"cat", "ls", "rm"}));
  EXPECT_EQ(complete({"skillbox", "run", "--ti"}), Words{"--timeout-ms"});
  EXPECT_EQ(complete({"skillbox", "store", "import", "--skill-d"}), Words{"--skill-dir"});
  EXPECT_EQ(complete({"skillbox", "--ver"}), Words{"--version"});
  EXPECT_EQ(complete({"skillbox", "run", "--isolation", ""}), (Words{"inprocess", "process"}));
  // bash splits --fs-mode=r into --fs-mode, =, r.
  EXPECT_EQ(complete({"skillbox", "run", "--fs-mode", "=", "r"}), (Words{"read", "readwrite"}));
  EXPECT_EQ(complete({"skillbox", "run", "--fs-mode", "="}), (Words{"none", "read", "readwrite", "write"}));
  // A flag takes no value: after it come the command's options again.
  EXPECT_EQ(complete({"skillbox", "run", "--json", "--qu"}), Words{"--quiet"});
  // After an option's value, options again; a value is never mistaken for a command.
  EXPECT_EQ(complete({"skillbox", "store", "list", "--skill", "store", "--pre"}), Words{"--prefix"});
  EXPECT_EQ(complete({"skillbox", "help", "store", "ex"}), Words{"export"});
  EXPECT_EQ(complete({"skillbox", "help", "st"}), Words{"store"});
  EXPECT_EQ(complete({"skillbox", "store", "get", "--skill", "notes", ""}), Words{}) << "a KEY is free text";
  EXPECT_EQ(complete({"skillbox", "comp"}), Words{}) << "the hidden completion command is not offered";
}

TEST_F(Completion, DirArgumentsCompleteToFoldersOnly) {
  const fs::path base = tmp_.path() / "t";
  fs::create_directories(base / "skill-a");
  fs::create_directories(base / "skill-b");
  write_bytes(base / "skill-notes.txt", "not a folder");
  const std::string prefix = (base / "sk").string();
  const Words folders = {(base / "skill-a").string(), (base / "skill-b").string()};
  EXPECT_EQ(complete({"skillbox", "run", prefix}), folders) << "run DIR";
  EXPECT_EQ(complete({"skillbox", "run", "--json", prefix}), folders) << "run DIR after a flag";
  EXPECT_EQ(complete({"skillbox", "check", prefix}), folders);
  EXPECT_EQ(complete({"skillbox", "skills", "rebind", prefix}), folders);
  EXPECT_EQ(complete({"skillbox", "run", "--data-dir", prefix}), folders);
  EXPECT_EQ(complete({"skillbox", "store", "set", "--skill-dir", prefix}), folders);
  EXPECT_EQ(complete({"skillbox", "run", "--data-dir", "=", prefix}), folders);
  // FILE arguments complete to files and folders.
  const Words all = {(base / "skill-a").string(), (base / "skill-b").string(),
                     (base / "skill-notes.txt").string()};
  EXPECT_EQ(complete({"skillbox", "store", "import", "--skill", "notes", prefix}), all);
  EXPECT_EQ(complete({"skillbox", "run", "x", "--input-file", prefix}), all);
}

}  // namespace
}  // namespace skillbox
