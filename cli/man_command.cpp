// cli/man_command.cpp — `skillbox man-pages DIR --doc-dir DOCS`: the man pages skillbox(1) and one
// skillbox-COMMAND(1) per command, generated from the CLI11 command tree itself.
//
// Like the completion scripts (cli/completion_command.cpp), no page is written by hand: each command's
// page holds what its --help shows (synopsis, description, arguments, options, footer), and those of its
// subcommands, so a command added to kCommands gets a page without a change here. skillbox(1) adds what
// --help has no room for (examples, environment, files). `cmake --install` runs this command with the
// installed documentation folder (share/doc/skillbox under the prefix), so every page's SEE ALSO names
// files that exist; tests/cli/man_pages_test.cpp and tests/packaging/consumer_test.cmake check them.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/command_tree.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "skillbox/version.h"

namespace skillbox::cli {
namespace {

/// `text` as roff input: backslashes and minus signs escaped (so `--json` renders as typed and can be
/// copied), and a line that would start with a control character (`.` or `'`) made literal.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

/// A help text (a description or a footer, wrapped by hand for a terminal) as roff paragraphs: a blank
/// line starts a new paragraph; other lines are filled together.
std::string paragraphs(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    if (line.find_first_not_of(' ') == std::string::npos) {
      if (!out.empty() && !out.ends_with(".PP\n")) out += ".PP\n";
    } else {
      out += roff(line.substr(line.find_first_not_of(' '))) + "\n";
    }
    at = end + 1;
  }
  return out;
}

/// "skillbox-store" for the command path "store": the page name.
std::string page_name(const std::string& path) {
  std::string name = "skillbox";
  for (char c : (path.empty() ? "" : " " + path)) name += c == ' ' ? '-' : c;
  return name;
}

/// The synopsis CLI11 prints after "Usage: ", for `command` spelled `full_name`.
std::string synopsis(CLI::App* command, const std::string& full_name) {
  std::string usage = CLI::Formatter().make_usage(command, full_name);
  if (const size_t colon = usage.find(": "); colon != std::string::npos) usage = usage.substr(colon + 2);
  while (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage;
}

/// The roff of one option or positional argument: its spellings in bold, its value in italics, then its
/// description.
std::string option_item(CLI::Option* option) {
  std::string head;
  if (option->nonpositional()) {
    for (const std::string& spelling : option_spellings(option))
      head += (head.empty() ? "" : ", ") + ("\\fB" + roff(spelling) + "\\fR");
    if (takes_value(option)) {
      std::string type = option->get_type_name();
      if (type.empty()) type = "VALUE";
      head += " \\fI" + roff(type) + "\\fR";
      if (option->get_items_expected_max() > 1) head += " ...";
    }
  } else {
    head = "\\fI" + roff(option->get_name(/*positional=*/true)) + "\\fR";
  }
  std::string description = option->get_description();
  if (const std::string choices = value_kind(option); choices.find('|') != std::string::npos) {
    std::string listed = choices;
    for (char& c : listed)
      if (c == '|') c = ',';
    if (description.find(listed) == std::string::npos && description.find(choices) == std::string::npos)
      description += " (one of: " + listed + ")";
  }
  return ".TP\n" + head + "\n" + paragraphs(description);
}

/// The arguments and options of `command` as roff, under subsection headings when `heading` is .SS.
std::string arguments_and_options(CLI::App* command, const std::string& heading) {
  std::string out;
  const std::vector<CLI::Option*> args = positionals(command);
  if (!args.empty()) {
    out += heading + " ARGUMENTS\n";
    for (CLI::Option* a : args) out += option_item(a);
  }
  const std::vector<CLI::Option*> options = visible_options(command);
  if (!options.empty()) {
    out += heading + " OPTIONS\n";
    for (CLI::Option* o : options) out += option_item(o);
  }
  return out;
}

/// The guides (files of the installed documentation folder, laid out as in the source tree) that say more
/// about a command; docs/cli.md for a command not listed.
std::vector<std::string> guides_of(const std::string& command) {
  static const std::map<std::string, std::vector<std::string>> kGuides = {
      {"",
       {"README.md", "docs/cli.md", "docs/manifest.md", "docs/limits.md", "docs/store.md",
        "docs/isolation.md", "docs/embedding.md"}},
      {"run",
       {"docs/cli.md", "docs/manifest.md", "docs/limits.md", "docs/isolation.md", "docs/env.md",
        "docs/http.md", "docs/fs.md"}},
      {"test", {"docs/cli.md", "docs/manifest.md", "docs/fs.md", "docs/http.md"}},
      {"check", {"docs/cli.md", "docs/manifest.md", "docs/limits.md"}},
      {"init", {"docs/cli.md", "docs/manifest.md"}},
      {"store", {"docs/store.md", "docs/cli.md"}},
      {"workspace", {"docs/fs.md", "docs/cli.md"}},
      {"skills", {"docs/manifest.md", "docs/cli.md"}},
      {"tools", {"docs/openhuman.md", "docs/cli.md"}},
      {"call", {"docs/openhuman.md", "docs/cli.md"}},
      {"hook", {"docs/openhuman.md", "docs/cli.md"}},
      {"serve", {"docs/server.md", "docs/cli.md"}},
      {"mcp", {"docs/mcp.md", "docs/cli.md"}},
  };
  const auto it = kGuides.find(command);
  return it != kGuides.end() ? it->second : std::vector<std::string>{"docs/cli.md"};
}

/// The SEE ALSO section: the other pages, then the guides in `doc_dir`.
std::string see_also(const std::string& self, const std::vector<std::string>& pages,
                     const std::string& doc_dir, const std::vector<std::string>& guides) {
  std::string refs;
  for (const std::string& page : pages)
    if (page != self) refs += (refs.empty() ? "" : ",\n") + ("\\fB" + roff(page) + "\\fR(1)");
  std::string out = ".SH SEE ALSO\n" + refs + "\n.PP\nThe guides installed with skillbox, in\n\\fI" +
                    roff(doc_dir) + "\\fR:\n";
  for (const std::string& guide : guides) out += ".br\n\\fI" + roff(doc_dir + "/" + guide) + "\\fR\n";
  return out;
}

/// What skillbox(1) says that --help has no room for.
constexpr const char* kRootDescription = R"(.PP
A skill is a folder with a
.I skill.json
manifest and JavaScript code. Every invocation gets a new QuickJS runtime with the limits
(heap, steps, stack, wall\-clock time) and the host API (workspace files, HTTP, store, environment)
its manifest grants, by default inside a worker process locked down with seccomp, Landlock and
rlimits. Nothing outlives the invocation but what it wrote to its workspace and store.
.PP
Each command has its own page,
.BR skillbox\-run (1)
for
.BR "skillbox run" ,
and its own options:
.B skillbox help
.I COMMAND
(or
.B skillbox
.I COMMAND
.BR \-\-help )
shows them, e.g.
.BR "skillbox help store import" .
)";

constexpr const char* kRootSections = R"(.SH EXAMPLES
.nf
skillbox init my\-skill
skillbox check my\-skill
skillbox run my\-skill \-\-input '{"name": "Ada"}'
skillbox run my\-skill \-\-json \-\-timeout\-ms 500 \-\-deny\-net
skillbox test my\-skill
skillbox store export \-\-skill notes \-o notes.jsonl
skillbox store import \-\-skill\-dir ./notes notes.jsonl
.fi
.SH ENVIRONMENT
.TP
.B SKILLBOX_HOME
The data directory: workspaces, the store, skill bindings. \fB\-\-data\-dir\fR overrides it.
.TP
.B XDG_DATA_HOME
Without \fBSKILLBOX_HOME\fR, the data directory is \fI$XDG_DATA_HOME/skillbox\fR, else
\fI~/.local/share/skillbox\fR.
.SH FILES
.TP
.I DATA/store.sqlite
The per\-skill store of every skill (SQLite).
.TP
.I DATA/skills/ID/workspace/
The workspace of skill \fIID\fR (the files it wrote).
.TP
.I DATA/bindings/ID
Which skill folder owns the id \fIID\fR (\fBskillbox skills list\fR).
.TP
.I share/bash\-completion/completions/skillbox
Bash completion, loaded by bash\-completion; without it:
.B source <(skillbox completion bash)
.TP
.I share/zsh/site\-functions/_skillbox
Zsh completion, loaded by compinit when the folder is on \fI$fpath\fR; or:
.B source <(skillbox completion zsh)
.TP
.I share/fish/vendor_completions.d/skillbox.fish
Fish completion, loaded by fish; or:
.B skillbox completion fish | source
)";

/// The page of `node` (a command under the root, or the root itself when its path is "").
std::string page(const CommandNode& node, const std::vector<std::string>& pages, const std::string& doc_dir) {
  const bool root = node.path.empty();
  const std::string name = page_name(node.path);
  const std::string full = root ? "skillbox" : "skillbox " + node.path;
  std::string upper;
  for (char c : name) upper += c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
  std::string out;
  out +=
      ".\\\" Generated by `skillbox man-pages` from the command's own option tree: regenerate it, do "
      "not edit it.\n";
  out += ".TH " + roff(upper) + " 1 \"\" \"skillbox " + roff(kVersion) + "\" \"User Commands\"\n";
  out += ".nh\n.ad l\n";  // no hyphenation or justification: option names and paths stay whole
  std::string summary = node.app->get_description();
  summary = summary.substr(0, summary.find('\n'));
  if (summary.ends_with(".")) summary.pop_back();
  if (root) summary = "run untrusted JavaScript skills in a limited QuickJS sandbox";
  if (!summary.empty() && summary[0] >= 'A' && summary[0] <= 'Z' &&
      !(summary.size() > 1 && summary[1] >= 'A' && summary[1] <= 'Z'))
    summary[0] = static_cast<char>(summary[0] - 'A' + 'a');
  out += ".SH NAME\n" + roff(name) + " \\- " + roff(summary) + "\n";
  out += ".SH SYNOPSIS\n.B " + roff(synopsis(node.app, full)) + "\n";
  out += ".SH DESCRIPTION\n" + paragraphs(node.app->get_description());
  if (root) out += kRootDescription;
  out += arguments_and_options(node.app, ".SH");
  const std::vector<CLI::App*> subs = visible_subcommands(node.app);
  if (!subs.empty()) {
    out += ".SH COMMANDS\n";
    if (root) {
      for (CLI::App* sub : subs) {
        const std::string sub_page = page_name(sub->get_name());
        bool has_page = false;
        for (const std::string& p : pages) has_page = has_page || p == sub_page;
        out += ".TP\n" +
               (has_page ? "\\fB" + roff(sub_page) + "\\fR(1)"
                         : "\\fBskillbox " + roff(sub->get_name()) + "\\fR") +
               "\n" + paragraphs(sub->get_description());
      }
    } else {
      // Subcommands are documented in their parent's page: `man skillbox-store` shows `store import`.
      std::vector<CommandNode> below;
      for (CLI::App* sub : subs) below.push_back({node.path + " " + sub->get_name(), sub});
      for (size_t i = 0; i < below.size(); ++i) {
        const CommandNode at = below[i];  // a copy: the loop below appends to `below`
        out += ".SS \"" + roff("skillbox " + at.path) + "\"\n.B " +
               roff(synopsis(at.app, "skillbox " + at.path)) + "\n.PP\n" +
               paragraphs(at.app->get_description());
        std::string options = arguments_and_options(at.app, ".PP\n.I");
        out += options;
        // CLI11 gives a subcommand its parent's footer too: shown once, in NOTES.
        const std::string footer = at.app->get_footer();
        if (!footer.empty() && footer != at.app->get_parent()->get_footer())
          out += ".PP\n" + paragraphs(footer);
        for (CLI::App* sub : visible_subcommands(at.app))
          below.push_back({at.path + " " + sub->get_name(), sub});
      }
    }
  }
  if (!node.app->get_footer().empty()) out += ".SH NOTES\n" + paragraphs(node.app->get_footer());
  if (root) out += kRootSections;
  out += see_also(name, pages, doc_dir, guides_of(node.path));
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> man_pages(CLI::App& root, const std::string& doc_dir) {
  // skillbox(1), then one page per command under the root but `help` and `version` (skillbox(1) shows
  // both); a command's subcommands are in its page.
  std::vector<CommandNode> nodes = {{"", &root}};
  for (CLI::App* sub : visible_subcommands(&root))
    if (sub->get_name() != "help" && sub->get_name() != "version") nodes.push_back({sub->get_name(), sub});
  std::vector<std::string> names;
  for (const CommandNode& node : nodes) names.push_back(page_name(node.path));
  std::vector<std::pair<std::string, std::string>> out;
  for (const CommandNode& node : nodes)
    out.emplace_back(page_name(node.path) + ".1", page(node, names, doc_dir));
  return out;
}

void add_man_command(CLI::App& app, CommandStatus& status) {
  // Hidden (no group): `cmake --install` runs it (cmake/SkillboxInstallGenerated.cmake).
  struct Options {
    std::string dir;
    std::string doc_dir;
  };
  auto o = std::make_shared<Options>();
  CLI::App* man =
      app.add_subcommand("man-pages", "Write the man pages of skillbox and its commands")->group("");
  man->add_option("DIR", o->dir, "Folder to write skillbox.1 and skillbox-COMMAND.1 into")->required();
  man->add_option("--doc-dir", o->doc_dir, "Where the guides (README.md, ...) are installed")->required();
  man->callback([&app, &status, o] {
    std::error_code ec;
    std::filesystem::create_directories(o->dir, ec);
    for (const auto& [file, text] : man_pages(app, o->doc_dir)) {
      const std::filesystem::path path = std::filesystem::path(o->dir) / file;
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << text;
      out.close();
      if (!out) {
        say("", "man-pages: cannot write " + path.string() + ": " + std::strerror(errno));
        status.exit_code = kExitInternal;
        return;
      }
    }
    status.exit_code = 0;
  });
}

}  // namespace skillbox::cli
