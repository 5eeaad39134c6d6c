// cli/commands.h — the subcommands of `skillbox`, one registration function each.
//
// main() builds the CLI::App and calls every add_*_command in kCommands order. Each function adds one
// subcommand with its options and a callback; the callback runs after parsing succeeded and stores the
// process exit code in `status`. To add a command: write `cli/<name>_command.cpp` with
// `void add_<name>_command(CLI::App&, CommandStatus&)`, declare it here, and list it in main.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli11.h"
#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// What the command that ran leaves for main() to return.
struct CommandStatus {
  int exit_code = 0;
};

/// `skillbox run DIR ...`: run one export of a skill and report its outcome (cli/run_command.cpp).
void add_run_command(CLI::App& app, CommandStatus& status);

/// `skillbox test DIR`: run the tests of a skill's skill.test.json (cli/test_command.cpp).
void add_test_command(CLI::App& app, CommandStatus& status);

/// `skillbox init DIR [--ts]`: scaffold a new skill folder (cli/init_command.cpp).
void add_init_command(CLI::App& app, CommandStatus& status);

/// `skillbox check DIR`: validate a skill and show its effective limits and permissions
/// (cli/check_command.cpp).
void add_check_command(CLI::App& app, CommandStatus& status);

/// `skillbox tools|call|hook DIR ...`: OpenHuman bundles (cli/bundle_commands.cpp).
void add_bundle_commands(CLI::App& app, CommandStatus& status);

/// `skillbox check`'s description of what is particular to an OpenHuman bundle: the detected format,
/// tools (the bundle is evaluated, under its limits, to list them), hooks, requested env names, setup
/// modes, ignored manifest keys and what the operator granted (cli/bundle_commands.cpp). Text or JSON.
std::string bundle_report(const Skill& skill);
nlohmann::ordered_json bundle_report_json(const Skill& skill);

/// `skillbox skills list|rebind`: show and change which skill folder owns each skill id
/// (cli/skills_command.cpp).
void add_skills_command(CLI::App& app, CommandStatus& status);
/// `skillbox workspace ls|cat|rm --skill ID`: the files a skill wrote (cli/workspace_command.cpp).
void add_workspace_command(CLI::App& app, CommandStatus& status);

/// `skillbox db migrate --database URL`: the PostgreSQL schema (cli/db_command.cpp, docs/scale-out.md).
void add_db_command(CLI::App& app, CommandStatus& status);

/// `skillbox serve [SKILLS_DIR] [--config FILE] ...`: the HTTP API (cli/serve_command.cpp, docs/server.md).
void add_serve_command(CLI::App& app, CommandStatus& status);

/// `skillbox mcp SKILL_DIR...`: the skills as MCP tools over stdio (cli/mcp_command.cpp, docs/mcp.md).
void add_mcp_command(CLI::App& app, CommandStatus& status);

/// `skillbox completion bash|zsh|fish`: prints the shell's completion script (cli/completion_command.cpp).
/// Hidden from --help and from the command lists of error messages; added after every other command.
void add_completion_command(CLI::App& app, CommandStatus& status);
/// The bash, zsh and fish completion scripts of `root`'s visible commands and options, generated from
/// the tree (cli/command_tree.h).
std::string bash_completion_script(CLI::App& root);
std::string zsh_completion_script(CLI::App& root);
std::string fish_completion_script(CLI::App& root);

/// `skillbox man-pages DIR [--doc-dir DIR]`: writes the man pages skillbox.1 and skillbox-COMMAND.1
/// (cli/man_command.cpp). Hidden like `completion`; `cmake --install` runs it.
void add_man_command(CLI::App& app, CommandStatus& status);
/// The man pages of `root`'s visible commands: file name ("skillbox-run.1") and roff text. `doc_dir`
/// is where the guides (README.md, cli.md, ...) are installed, named in every page's SEE ALSO.
std::vector<std::pair<std::string, std::string>> man_pages(CLI::App& root, const std::string& doc_dir);

}  // namespace skillbox::cli
