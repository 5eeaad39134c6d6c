// cli/commands.h — the subcommands of `skillbox`, one registration function each.
//
// main() builds the CLI::App and calls every add_*_command in kCommands order. Each function adds one
// subcommand with its options and a callback; the callback runs after parsing succeeded and stores the
// process exit code in `status`. To add a command: write `cli/<name>_command.cpp` with
// `void add_<name>_command(CLI::App&, CommandStatus&)`, declare it here, and list it in main.cpp.
#pragma once

#include "cli/cli11.h"

namespace skillbox::cli {

/// What the command that ran leaves for main() to return.
struct CommandStatus {
  int exit_code = 0;
};

/// `skillbox run DIR ...`: run one export of a skill and report its outcome (cli/run_command.cpp).
void add_run_command(CLI::App& app, CommandStatus& status);

/// `skillbox check DIR`: validate a skill and show its effective limits and permissions
/// (cli/check_command.cpp).
void add_check_command(CLI::App& app, CommandStatus& status);

/// `skillbox skills list|rebind`: show and change which skill folder owns each skill id
/// (cli/skills_command.cpp).
void add_skills_command(CLI::App& app, CommandStatus& status);

}  // namespace skillbox::cli
