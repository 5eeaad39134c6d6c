// tests/cli/help_walk.h — every command `skillbox --help` reaches, with what its help lists: what the CLI
// tests compare the generated completion scripts and man pages against (a user's view of the command
// tree, read from --help, not from the CLI11 tree the generators walk).
#pragma once

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/cli_exec.h"

namespace skillbox::testing {

inline std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

/// What `skillbox PATH --help` lists: the subcommands and every spelling of every option, and the text.
struct HelpEntry {
  std::set<std::string> commands;
  std::set<std::string> options;
  std::string text;
};

/// Reads CLI11's help layout: "Options:" / "Subcommands:" headers, then entries indented by exactly two
/// spaces (wrapped descriptions are indented further). An option entry starts "-h,--help" or "--x N".
inline HelpEntry parse_help(const std::string& text) {
  HelpEntry e;
  e.text = text;
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

/// Every command path `--help` reaches ("" is skillbox itself), with what its help lists, parents first.
inline std::vector<std::pair<std::string, HelpEntry>> help_tree() {
  std::vector<std::pair<std::string, HelpEntry>> tree;
  std::vector<std::string> queue = {""};
  while (!queue.empty()) {
    const std::string path = queue.front();
    queue.erase(queue.begin());
    std::vector<std::string> args = {SKILLBOX_CLI_PATH};
    for (const std::string& w : split_words(path)) args.push_back(w);
    args.push_back("--help");
    const CliExec r = run_program(args);
    EXPECT_EQ(r.exit_code, 0) << path << ": " << r.err;
    const HelpEntry entry = parse_help(r.out);
    EXPECT_FALSE(entry.options.empty()) << "no options parsed from the help of '" << path << "':\n" << r.out;
    for (const std::string& sub : entry.commands) {
      // `help` takes command names as its arguments; its own --help is the root's.
      if (path.empty() && sub == "help") continue;
      queue.push_back(path.empty() ? sub : path + " " + sub);
    }
    tree.emplace_back(path, entry);
  }
  return tree;
}

}  // namespace skillbox::testing
