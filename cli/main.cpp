// cli/main.cpp — the `skillbox` command: parses the command line and runs one subcommand.
//
// Subcommands live in their own files and register through cli/commands.h. This file owns what is
// common to all of them: --help, --version, and turning a bad command line into exit code 2 with a
// message that says what to do.
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include "base/escape.h"
#include "cli/cli11.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/store_command.h"
#include "skillbox/version.h"

namespace {

using skillbox::cli::CommandStatus;

using AddCommand = void (*)(CLI::App&, CommandStatus&);
/// Every subcommand, in the order `skillbox --help` lists them.
constexpr AddCommand kCommands[] = {
    skillbox::cli::add_run_command,
    skillbox::cli::add_check_command,
    skillbox::cli::add_store_command,
};

std::string version_text() {
  return std::string("skillbox ") + skillbox::kVersion + "\nengine " + skillbox::kEngineVersion;
}

/// Rewords CLI11's messages in skillbox's style (lower case, says what to do).
std::string reword(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string message = e.what();
  if (message == "A subcommand is required") {
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (argc > 1 && argv[1][0] != '-')
      return "unknown command \"" + std::string(argv[1]) + "\"; the commands are " + names;
    if (argc > 1) return "unknown option \"" + std::string(argv[1]) + "\"; give a command first: " + names;
    return "a command is required: " + names;
  }
  const std::string at_most = ": At Most 1 required but received ";
  if (const size_t at = message.find(at_most); at != std::string::npos) {
    return message.substr(0, at) + ": given more than once; give it once";
  }
  if (message.size() > 1 && message[0] >= 'A' && message[0] <= 'Z' && message[1] >= 'a' &&
      message[1] <= 'z') {
    message[0] = static_cast<char>(message[0] - 'A' + 'a');
  }
  return message;
}

/// Prints a command-line error and how to get help; returns exit code 2.
int usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string help = "skillbox --help";
  const auto selected = app.get_subcommands();
  if (!selected.empty()) help = "skillbox " + selected.front()->get_name() + " --help";
  skillbox::cli::emit(stderr, "skillbox: " + skillbox::base::escape_text(reword(app, e, argc, argv)) +
                                  "\nRun '" + help + "' for usage.\n");
  return skillbox::cli::kExitUsage;
}

int run_main(int argc, char** argv) {
  // A closed stdout (`skillbox run ... | head -0`) should end in a write error, not a silent SIGPIPE.
  (void)std::signal(SIGPIPE, SIG_IGN);

  CLI::App app("skillbox runs untrusted JavaScript skills in a fresh, limited QuickJS sandbox.", "skillbox");
  app.set_version_flag("--version", version_text(), "Print the skillbox and engine versions and exit");
  app.require_subcommand(1);
  app.footer(
      "Run 'skillbox COMMAND --help' for a command's options. Docs: docs/cli.md, docs/manifest.md.\n"
      "Exit codes: 0 ok, 1 error, 2 invalid, 10 memory_limit, 11 step_limit, 12 timeout, 13 stack_overflow,\n"
      "20 crashed, 70 internal, 130 cancelled.");

  CommandStatus status;
  for (AddCommand add : kCommands) add(app, status);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e, argc, argv);
  }
  return status.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  int code = skillbox::cli::kExitInternal;
  try {
    code = run_main(argc, argv);
  } catch (const std::exception& e) {
    skillbox::cli::emit(stderr, "skillbox: internal error: " + skillbox::base::escape_text(e.what()) + "\n");
    return skillbox::cli::kExitInternal;
  } catch (...) {
    skillbox::cli::emit(stderr, "skillbox: internal error\n");
    return skillbox::cli::kExitInternal;
  }
  // A result that could not be written completely must not look like a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    skillbox::cli::emit(stderr, "skillbox: cannot write to standard output\n");
    return skillbox::cli::kExitInternal;
  }
  return code;
}
