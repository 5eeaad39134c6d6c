// The shell completion scripts (`skillbox completion bash|zsh|fish`, installed by `cmake --install`)
// checked against the command they complete: every command and option that `--help` shows, found by
// walking the help of every command, must be offered where it belongs, and nothing else; each shell must
// accept its script; and completions driven the way the shell drives them (bash: COMP_WORDS, COMP_CWORD,
// then the completion function; fish: `complete -C`; zsh: the completion function with $words and
// $CURRENT, its completion builtins recording what they are given) give what a user expects at <TAB>.
// The packaging test checks that `cmake --install` installs these same scripts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capabilities/store/store_test_util.h"
#include "cli/help_walk.h"
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

using testing::help_tree;
using testing::HelpEntry;
using testing::split_words;

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

  testing::TempDir tmp_;
  fs::path script_;
};

using Words = std::vector<std::string>;

TEST_F(Completion, BashAcceptsTheScript) {
  const Exec syntax = run({"bash", "-n", script_.string()});
  EXPECT_EQ(syntax.exit_code, 0) << syntax.err;
  EXPECT_EQ(syntax.err, "");
  const Exec registered =
      run({"bash", "--norc", "-c", "source \"$1\" && complete -p skillbox", "bash", script_.string()});
  EXPECT_EQ(registered.out, "complete -F _skillbox skillbox\n") << registered.err;
}

TEST_F(Completion, OffersExactlyTheCommandsAndOptionsEveryHelpShows) {
  const auto tree = help_tree();
  ASSERT_FALSE(::testing::Test::HasFailure());
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

/// The fish and zsh scripts, with the candidates each shell gives for a command line.
class ShellCompletion : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* shell : {"zsh", "fish"}) {
      const Exec found = run({"sh", "-c", std::string("command -v ") + shell});
      ASSERT_EQ(found.exit_code, 0) << shell << " is not installed: scripts/setup.sh installs it";
      const Exec script = run({SKILLBOX_CLI_PATH, "completion", shell});
      ASSERT_EQ(script.exit_code, 0) << script.err;
      write_bytes(tmp_.path() / (std::string("skillbox.") + shell), script.out);
    }
  }
  fs::path script(const std::string& shell) const { return tmp_.path() / ("skillbox." + shell); }

  /// What fish offers for `line` (the cursor at its end): the candidates, without their descriptions.
  std::vector<std::string> fish(const std::string& line) {
    const Exec r = run({"fish", "--no-config", "-c", "source $argv[1]; and complete -C $argv[2]",
                        script("fish").string(), line});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << "completing: " << line;
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) out.push_back(l.substr(0, l.find('\t')));
    std::sort(out.begin(), out.end());
    return out;
  }

  /// What the zsh completion function hands to zsh's completion system for `words` (the last one under
  /// the cursor): the words it passes to _describe and compadd, unfiltered (zsh filters them by the
  /// prefix typed), or "_files" / "_files -/" when it asks for files or folders.
  std::vector<std::string> zsh(const std::vector<std::string>& words) {
    std::vector<std::string> args = {"zsh",
                                     "-f",
                                     "-c",
                                     "compdef() { :; }; "
                                     "_describe() { print -rl -- \"${(@)${(@P)4}%%:*}\"; }; "
                                     "compadd() { [[ $1 == -a ]] && print -rl -- \"${(@P)2}\"; }; "
                                     "_files() { print -r -- \"_files${*:+ $*}\"; }; "
                                     "_message() { :; }; compset() { :; }; "
                                     "source \"$1\" || exit 99; shift; words=(\"$@\"); CURRENT=$#; _skillbox",
                                     "zsh",
                                     script("zsh").string()};
    args.insert(args.end(), words.begin(), words.end());
    const Exec r = run(args);
    EXPECT_EQ(r.err, "") << "completing: " << ::testing::PrintToString(words);
    std::vector<std::string> out;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) out.push_back(l);
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::TempDir tmp_;
};

TEST_F(ShellCompletion, ZshAndFishAcceptTheirScripts) {
  const Exec zsh_syntax = run({"zsh", "-n", script("zsh").string()});
  EXPECT_EQ(zsh_syntax.exit_code, 0) << zsh_syntax.err;
  EXPECT_EQ(zsh_syntax.err, "");
  const Exec fish_syntax = run({"fish", "--no-config", "--no-execute", script("fish").string()});
  EXPECT_EQ(fish_syntax.exit_code, 0) << fish_syntax.err;
  EXPECT_EQ(fish_syntax.err, "");
  // The zsh script is an autoloadable completion function for the skillbox command.
  EXPECT_TRUE(read_bytes(script("zsh")).starts_with("#compdef skillbox\n"));
}

TEST_F(ShellCompletion, OfferExactlyTheCommandsAndOptionsEveryHelpShows) {
  const auto tree = help_tree();
  ASSERT_FALSE(::testing::Test::HasFailure());
  for (const auto& [path, entry] : tree) {
    Words words = {"skillbox"};
    for (const std::string& w : split_words(path)) words.push_back(w);
    const std::string line = path.empty() ? "skillbox " : "skillbox " + path + " ";
    if (!entry.commands.empty()) {
      words.push_back("");
      const std::vector<std::string> z = zsh(words);
      EXPECT_EQ(std::set<std::string>(z.begin(), z.end()), entry.commands)
          << "zsh: commands of '" << path << "'";
      const std::vector<std::string> f = fish(line);
      EXPECT_EQ(std::set<std::string>(f.begin(), f.end()), entry.commands)
          << "fish: commands of '" << path << "'";
      words.pop_back();
    }
    if (path == "help") continue;  // its words are command names
    words.push_back("-");
    const std::vector<std::string> z = zsh(words);
    EXPECT_EQ(std::set<std::string>(z.begin(), z.end()), entry.options) << "zsh: options of '" << path << "'";
    const std::vector<std::string> f = fish(line + "-");
    EXPECT_EQ(std::set<std::string>(f.begin(), f.end()), entry.options)
        << "fish: options of '" << path << "'";
  }
}

TEST_F(ShellCompletion, FishCompletesWhatAUserTypes) {
  EXPECT_EQ(fish("skillbox sto"), Words{"store"});
  EXPECT_EQ(fish("skillbox store im"), Words{"import"});
  EXPECT_EQ(fish("skillbox run --ti"), Words{"--timeout-ms"});
  EXPECT_EQ(fish("skillbox run --isolation "), (Words{"inprocess", "process"}));
  EXPECT_EQ(fish("skillbox run --fs-mode=r"), (Words{"--fs-mode=read", "--fs-mode=readwrite"}));
  EXPECT_EQ(fish("skillbox run --json --qu"), Words{"--quiet"});
  EXPECT_EQ(fish("skillbox store list --skill store --pre"), Words{"--prefix"});
  EXPECT_EQ(fish("skillbox help store ex"), Words{"export"});
  EXPECT_EQ(fish("skillbox store get --skill notes "), Words{}) << "a KEY is free text";
  // (fish falls back to matching descriptions: "comp" finds check's "compiles"; never `completion`.)
  const std::vector<std::string> comp = fish("skillbox comp");
  EXPECT_EQ(std::find(comp.begin(), comp.end(), "completion"), comp.end()) << "the hidden command is offered";
  const fs::path base = tmp_.path() / "t";
  fs::create_directories(base / "skill-a");
  write_bytes(base / "skill-notes.txt", "not a folder");
  EXPECT_EQ(fish("skillbox run " + (base / "sk").string()), Words{(base / "skill-a/").string()}) << "run DIR";
  EXPECT_EQ(fish("skillbox store import --skill notes " + (base / "skill-n").string()),
            Words{(base / "skill-notes.txt").string()})
      << "store import FILE";
}

TEST_F(ShellCompletion, ZshCompletesWhatAUserTypes) {
  EXPECT_EQ(zsh({"skillbox", "run", "--isolation", ""}), (Words{"inprocess", "process"}));
  EXPECT_EQ(zsh({"skillbox", "run", "--fs-mode=r"}), (Words{"none", "read", "readwrite", "write"}));
  EXPECT_EQ(zsh({"skillbox", "run", "--json", ""}), Words{"_files -/"}) << "run DIR after a flag";
  EXPECT_EQ(zsh({"skillbox", "run", "--data-dir", ""}), Words{"_files -/"});
  EXPECT_EQ(zsh({"skillbox", "run", "x", "--input-file", ""}), Words{"_files"});
  EXPECT_EQ(zsh({"skillbox", "store", "import", "--skill", "notes", ""}), Words{"_files"});
  EXPECT_EQ(zsh({"skillbox", "help", "store", ""}),
            (Words{"check", "delete", "export", "get", "import", "list", "set", "skills", "usage"}));
  EXPECT_EQ(zsh({"skillbox", "store", "get", "--skill", "notes", ""}), Words{}) << "a KEY is free text";
  // An option's value is never taken for a command, even when it is one's name or JSON.
  EXPECT_EQ(zsh({"skillbox", "run", "--input", "{\"a\": [1]}", "--qu"}), zsh({"skillbox", "run", "-"}));
  const std::vector<std::string> after_value = zsh({"skillbox", "store", "list", "--skill", "store", "-"});
  EXPECT_NE(std::find(after_value.begin(), after_value.end(), "--prefix"), after_value.end());
}

}  // namespace
}  // namespace skillbox
