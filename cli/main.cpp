// cli/main.cpp — the `skillbox` command: parses the command line and runs one subcommand.
//
// Subcommands live in their own files and register through cli/commands.h. This file owns what is
// common to all of them: --help, --version, and turning a bad command line into exit code 2 with a
// message that says what to do.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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
    skillbox::cli::add_run_command,    skillbox::cli::add_test_command,
    skillbox::cli::add_check_command,  skillbox::cli::add_init_command,
    skillbox::cli::add_store_command,  skillbox::cli::add_workspace_command,
    skillbox::cli::add_skills_command, skillbox::cli::add_bundle_commands,
    skillbox::cli::add_serve_command,  skillbox::cli::add_mcp_command,
    skillbox::cli::add_db_command,
};

std::string version_text() {
  return std::string("skillbox ") + skillbox::kVersion + "\nengine " + skillbox::kEngineVersion;
}

/// Edit distance with adjacent transpositions counted as one edit ("stroe" is 1 from "store"), for
/// did-you-mean. Names are short: quadratic is fine.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

/// " (did you mean \"check\"?)" when one of `names` is close to `word` (a third of its length, at
/// least 1 edit, at most 3), else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  const size_t allowed = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& name : names) {
    const size_t d = edit_distance(word, name);
    if (d < best_distance) {  // the first of equally close names, in the order commands list them
      best_distance = d;
      best = name;
    }
  }
  return best.empty() ? "" : " (did you mean \"" + best + "\"?)";
}

/// The visible subcommands of `app` (a hidden one, such as `completion`, has no group).
std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* c) { return !c->get_group().empty(); }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
  }
  return names;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// The deepest subcommand the command line selected (`app` itself when none), e.g. `store` for
/// `skillbox store frob`.
const CLI::App* selected_command(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

/// "skillbox store": the command path of `command`.
std::string command_path(const CLI::App* command) {
  std::string out;
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent())
    out = at->get_name() + (out.empty() ? "" : " " + out);
  return out;
}

/// The option `arg` ("--data-dir", "-o", "--data-dir=X") of `command`, of a command above it or of one
/// below it (CLI11 reports a missing subcommand before it has seen where an option belongs: in
/// "skillbox skills --data-dir D", --data-dir is an option of `skills list`); null when none has it.
const CLI::Option* find_option(const CLI::App* command, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent())
    if (const CLI::Option* option = at->get_option_no_throw(name)) return option;
  std::vector<const CLI::App*> below = command->get_subcommands([](const CLI::App*) { return true; });
  while (!below.empty()) {
    const CLI::App* at = below.back();
    below.pop_back();
    if (const CLI::Option* option = at->get_option_no_throw(name)) return option;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      below.push_back(sub);
  }
  return nullptr;
}

/// The first argument after the words of `command`'s path that is neither an option nor an option's
/// value: what the user typed where a subcommand of `command` belongs ("" when nothing was).
/// "skillbox store --data-dir D lsit" gives "lsit", never "D".
std::string word_after(const CLI::App* command, int argc, char** argv) {
  std::vector<const CLI::App*> path;
  for (const CLI::App* at = command; at != nullptr; at = at->get_parent()) path.push_back(at);
  std::reverse(path.begin(), path.end());  // the root first
  size_t words = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) {
      const CLI::App* scope = path[std::min(words, path.size() - 1)];
      const CLI::Option* option = find_option(scope, arg);
      const bool takes_value = option != nullptr && option->get_items_expected_max() > 0;
      if (takes_value && arg.find('=') == std::string::npos) ++i;
      continue;
    }
    if (++words == path.size()) return arg;
  }
  return {};
}

/// Rewords CLI11's messages in skillbox's style (lower case, says what to do, suggests the name meant).
std::string reword(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  std::string message = e.what();
  const CLI::App* command = selected_command(app);
  if (message == "A subcommand is required") {
    const std::vector<std::string> names = subcommand_names(*command);
    const std::string word = word_after(command, argc, argv);
    const std::string what = command == &app ? "command" : command->get_name() + " command";
    if (!word.empty()) {
      return "unknown " + what + " \"" + word + "\"" + did_you_mean(word, names) + "; the " + what +
             "s are " + join_names(names);
    }
    if (argc > 1 && command == &app && argv[1][0] == '-') {
      return "unknown option \"" + std::string(argv[1]) + "\"; give a command first: " + join_names(names);
    }
    return "a " + what + " is required: " + join_names(names);
  }
  const std::string not_expected = "The following argument was not expected: ";
  if (message.starts_with(not_expected)) {
    const std::string word = message.substr(not_expected.size());
    if (word.starts_with("-"))
      return "unknown option \"" + word + "\"" + did_you_mean(word, option_names(*command));
    return "unexpected argument \"" + word + "\"";
  }
  // Several at once: CLI11 lists them last-typed first. The first option the user typed is named (an
  // unknown option is the usual cause, and its value is then one of the unexpected words).
  const std::string not_expected_many = "The following arguments were not expected: ";
  if (message.starts_with(not_expected_many)) {
    std::vector<std::string> words;
    std::string rest = message.substr(not_expected_many.size());
    for (size_t at = 0; at <= rest.size();) {
      const size_t space = std::min(rest.find(' ', at), rest.size());
      if (space > at) words.push_back(rest.substr(at, space - at));
      at = space + 1;
    }
    for (auto it = words.rbegin(); it != words.rend(); ++it)
      if (it->starts_with("-"))
        return "unknown option \"" + *it + "\"" + did_you_mean(*it, option_names(*command));
    std::string list;
    for (auto it = words.rbegin(); it != words.rend(); ++it)
      list += (list.empty() ? "\"" : ", \"") + *it + "\"";
    return "unexpected arguments " + list;
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

/// Prints a command-line error and how to get help; returns exit code 2. A command that needs a
/// subcommand (`skillbox store`) prints its help as well, since that is what the user is looking for.
int usage_error(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* command = selected_command(app);
  const std::string path = command_path(command);
  std::string text = skillbox::cli::message("", reword(app, e, argc, argv));
  if (command != &app && std::string(e.what()) == "A subcommand is required") {
    text += "\n" + command->help(command_path(command->get_parent()));
  } else {
    text += "Run '" + path + " --help' for usage.\n";
  }
  skillbox::cli::emit(stderr, text);
  return skillbox::cli::kExitUsage;
}

/// `skillbox NOSUCHCOMMAND --help`: --help beside a word that is not a command is the same usage error as
/// without --help (exit 2, did-you-mean), not the help of the command above it. std::nullopt when the
/// words name a command whose help is shown.
std::optional<int> unknown_command_beside_help(const CLI::App& app, int argc, char** argv) {
  const CLI::App* command = selected_command(app);
  if (command->get_require_subcommand_min() == 0) return std::nullopt;
  const std::string word = word_after(command, argc, argv);
  if (word.empty()) return std::nullopt;
  for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; }))
    if (sub->check_name(word)) return std::nullopt;
  return usage_error(app, CLI::RequiredError("A subcommand"), argc, argv);
}

/// `skillbox help [COMMAND...]` and `skillbox version`: the words many users try first.
struct HelpCommands {
  bool help = false;
  std::vector<std::string> topic;
  bool version = false;
};

void add_help_commands(CLI::App& app, HelpCommands& h) {
  CLI::App* help =
      app.add_subcommand("help", "Show the help of skillbox or of a command: skillbox help store get");
  // Every word after `help` is the topic, never a command of skillbox's to run.
  help->prefix_command();
  help->callback([&h, help] {
    h.help = true;
    h.topic = help->remaining();
  });
  app.add_subcommand("version", "Print the skillbox and engine versions")->callback([&h] {
    h.version = true;
  });
}

/// Prints the help `h.topic` names; exit 0, or 2 with did-you-mean for a name that is not a command.
int show_help(const CLI::App& app, const HelpCommands& h) {
  const CLI::App* at = &app;
  for (const std::string& word : h.topic) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == word) next = sub;
    if (next == nullptr) {
      const std::vector<std::string> names = subcommand_names(*at);
      skillbox::cli::say("", "help: no command \"" + skillbox::base::escape_text(word) + "\" in '" +
                                 command_path(at) + "'" + did_you_mean(word, names) + "; the commands are " +
                                 join_names(names));
      return skillbox::cli::kExitUsage;
    }
    at = next;
  }
  // app.help() would show the help of the command that ran, `help` itself: format `at` directly.
  skillbox::cli::emit(stdout,
                      at->get_formatter()->make_help(at, command_path(at), CLI::AppFormatMode::Normal));
  return 0;
}

int run_main(int argc, char** argv) {
  // A closed stdout (`skillbox run ... | head -0`) should end in a write error, not a silent SIGPIPE.
  (void)std::signal(SIGPIPE, SIG_IGN);

  CLI::App app("skillbox runs untrusted JavaScript skills in a fresh, limited QuickJS sandbox.", "skillbox");
  app.set_version_flag("--version", version_text(), "Print the skillbox and engine versions and exit");
  app.require_subcommand(1);
  app.footer(
      "Run 'skillbox COMMAND --help' or 'man skillbox-COMMAND' for a command's options; 'man skillbox' for "
      "the\n"
      "environment, the files and the guides installed with skillbox.\n"
      "Exit codes: 0 ok, 1 error, 2 invalid, 10 memory_limit, 11 step_limit, 12 timeout, 13 stack_overflow,\n"
      "20 crashed, 70 internal, 130 cancelled.");

  CommandStatus status;
  for (AddCommand add : kCommands) add(app, status);
  HelpCommands help;
  add_help_commands(app, help);
  // Hidden from --help; when it runs, it generates the completion script from the whole tree above.
  skillbox::cli::add_completion_command(app, status);
  skillbox::cli::add_man_command(app, status);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    if (std::optional<int> refused = unknown_command_beside_help(app, argc, argv)) return *refused;
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    if (std::optional<int> refused = unknown_command_beside_help(app, argc, argv)) return *refused;
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e, argc, argv);
  }
  if (help.help) return show_help(app, help);
  if (help.version) {
    skillbox::cli::emit(stdout, version_text() + "\n");
    return 0;
  }
  return status.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  int code = skillbox::cli::kExitInternal;
  try {
    code = run_main(argc, argv);
  } catch (const std::exception& e) {
    skillbox::cli::say("", std::string("internal error: ") + e.what());
    return skillbox::cli::kExitInternal;
  } catch (...) {
    skillbox::cli::say("", "internal error");
    return skillbox::cli::kExitInternal;
  }
  // A result that could not be written completely must not look like a success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    skillbox::cli::say("", "cannot write to standard output");
    return skillbox::cli::kExitInternal;
  }
  return code;
}
