// cli/command_tree.h — the visible part of skillbox's CLI11 command tree, as the generators of the shell
// completion scripts (cli/completion_command.cpp) and the man pages (cli/man_command.cpp) read it.
//
// One walk for every generator: a command or option added to the tree is completed and documented
// without a change to any of them. "Visible" is what --help shows: a command or option without a group
// (CLI11's way of hiding it, e.g. `completion`) is left out.
#pragma once

#include <string>
#include <vector>

#include "cli/cli11.h"

namespace skillbox::cli {

/// One command of the tree.
struct CommandNode {
  std::string path;  // "" for skillbox itself, "store import" for `skillbox store import`
  CLI::App* app = nullptr;
};

/// True when `command` is hidden from --help (it has no group).
bool is_hidden(const CLI::App* command);

/// The visible subcommands of `command`, in the order --help lists them.
std::vector<CLI::App*> visible_subcommands(CLI::App* command);

/// Every visible command under `root` (`root` itself first, path ""), parents before children, in the
/// order --help lists them.
std::vector<CommandNode> command_tree(CLI::App& root);

/// The visible options of `command` that are not positional, in declaration order (--help first).
std::vector<CLI::Option*> visible_options(CLI::App* command);

/// The positional arguments of `command`, in order.
std::vector<CLI::Option*> positionals(CLI::App* command);

/// Every spelling of `option`: the long names ("--json") first, then the short ones ("-q").
std::vector<std::string> option_spellings(const CLI::Option* option);

/// True when `option` takes a value (a flag expects no items; its type size is still 1 in CLI11 2.1).
bool takes_value(const CLI::Option* option);

/// What the value of an option or a positional argument completes to: "dir", "file", a choice list
/// "a|b|c" (from CLI::IsMember), or "none" (free text: a number, a key, a JSON value).
std::string value_kind(CLI::Option* option);

/// The words separated by single spaces.
std::string join_words(const std::vector<std::string>& words, const std::string& separator = " ");

}  // namespace skillbox::cli
