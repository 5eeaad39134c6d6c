// cli/command_tree.cpp — the walk of the visible command tree shared by the completion and man page
// generators (cli/command_tree.h).
#include "cli/command_tree.h"

namespace skillbox::cli {

bool is_hidden(const CLI::App* command) {
  return command->get_group().empty();
}

std::vector<CLI::App*> visible_subcommands(CLI::App* command) {
  return command->get_subcommands([](CLI::App* c) { return !is_hidden(c); });
}

std::vector<CommandNode> command_tree(CLI::App& root) {
  std::vector<CommandNode> nodes = {{"", &root}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const CommandNode at = nodes[i];
    for (CLI::App* sub : visible_subcommands(at.app))
      nodes.push_back({at.path.empty() ? sub->get_name() : at.path + " " + sub->get_name(), sub});
  }
  return nodes;
}

std::vector<CLI::Option*> visible_options(CLI::App* command) {
  std::vector<CLI::Option*> out;
  for (CLI::Option* option : command->get_options())
    if (!option->get_group().empty() && option->nonpositional()) out.push_back(option);
  return out;
}

std::vector<CLI::Option*> positionals(CLI::App* command) {
  std::vector<CLI::Option*> out;
  for (CLI::Option* option : command->get_options())
    if (!option->get_group().empty() && !option->nonpositional()) out.push_back(option);
  return out;
}

std::vector<std::string> option_spellings(const CLI::Option* option) {
  std::vector<std::string> spellings;
  for (const std::string& n : option->get_lnames()) spellings.push_back("--" + n);
  for (const std::string& n : option->get_snames()) spellings.push_back("-" + n);
  return spellings;
}

bool takes_value(const CLI::Option* option) {
  return option->get_items_expected_max() > 0;
}

std::string value_kind(CLI::Option* option) {
  const std::string name = option->get_name(/*positional=*/true);
  const std::string type = option->get_type_name();
  if (name == "DIR" || type == "DIR") return "dir";
  if (name == "FILE" || type == "FILE") return "file";
  // CLI::IsMember describes itself as "{a,b,c}".
  for (int i = 0;; ++i) {
    CLI::Validator* validator = nullptr;
    try {
      validator = option->get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    std::string description = validator->get_description();
    if (description.size() > 2 && description.front() == '{' && description.back() == '}') {
      std::string choices = description.substr(1, description.size() - 2);
      for (char& c : choices)
        if (c == ',') c = '|';
      return choices;
    }
  }
  return "none";
}

std::string join_words(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

}  // namespace skillbox::cli
