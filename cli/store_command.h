// cli/store_command.h — `skillbox store ...`: operators' access to the per-skill store.
#pragma once

#include "cli/commands.h"

namespace skillbox::cli {

/// Adds `store` with the subcommands list, get, set, delete, export, import, usage, skills and check
/// (docs/store.md "Operators"). Exit codes: 0 done; 1 no such key, or a quota would be exceeded;
/// 2 bad input; 70 the database is damaged, from a newer skillbox, busy or unwritable.
void add_store_command(CLI::App& app, CommandStatus& status);

}  // namespace skillbox::cli
