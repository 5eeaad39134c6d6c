// cli/workspace_command.cpp — `skillbox workspace ls|cat|rm --skill ID`: an operator's look at the files a
// skill wrote, through WorkspaceFiles (skillbox/workspace.h), so every path rule is the skill's own.
#include <cstdio>
#include <memory>
#include <string>

#include "base/escape.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "skillbox/workspace.h"

namespace skillbox::cli {
namespace {

struct WorkspaceOptions {
  std::string data_dir;
  std::string skill;
  std::string path;
  bool recursive = false;
  bool json = false;
};

/// Prints "skillbox: workspace NAME: MESSAGE" on stderr (escaped: names are the skill's). Workspaces are
/// keyed by skill id, which the messages name; there is no skill folder to name.
int fail(std::string_view command, const std::string& text) {
  say("", "workspace " + std::string(command) + ": " + base::escape_text(text));
  return 1;
}

Result<WorkspaceFiles> open_workspace(const WorkspaceOptions& o) {
  HostOptions host;
  host.data_dir = o.data_dir;
  return WorkspaceFiles::open(resolve_data_dir(host), o.skill);
}

int run_ls(const WorkspaceOptions& o) {
  auto ws = open_workspace(o);
  if (!ws) return fail("ls", ws.error().message);
  auto entries = ws->list(o.path);
  if (!entries) return fail("ls", entries.error().message);
  std::string out;
  for (const WorkspaceEntry& e : *entries) {
    if (o.json) {
      const nlohmann::ordered_json line = {
          {"name", e.name}, {"type", e.directory ? "directory" : "file"}, {"size", e.size}};
      out += dump_json(line, -1, /*ascii=*/true) + "\n";
    } else {
      // Names are the skill's: escaped, so a name cannot move the cursor or fake another line.
      out += (e.directory ? std::string("dir ") : std::string("file")) + " " + std::to_string(e.size) + "\t" +
             base::escape_text(e.name) + (e.directory ? "/" : "") + "\n";
    }
  }
  emit(stdout, out);
  return 0;
}

int run_cat(const WorkspaceOptions& o) {
  auto ws = open_workspace(o);
  if (!ws) return fail("cat", ws.error().message);
  auto bytes = ws->read(o.path);
  if (!bytes) return fail("cat", bytes.error().message);
  // The bytes as they are: the operator asked for the file (pipe it through `less` or `xxd`).
  if (!bytes->empty() && std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size())
    return fail("cat", "could not write to standard output");
  return 0;
}

int run_rm(const WorkspaceOptions& o) {
  auto ws = open_workspace(o);
  if (!ws) return fail("rm", ws.error().message);
  if (auto done = ws->remove(o.path, o.recursive); !done) return fail("rm", done.error().message);
  return 0;
}

}  // namespace

void add_workspace_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<WorkspaceOptions>();
  CLI::App* ws = app.add_subcommand(
      "workspace", "List, print and remove the files a skill wrote in its workspace (fs.md in the guides).");
  ws->require_subcommand(1);
  ws->footer(
      "Paths are relative to the workspace and follow the rules of the skill's own fs calls: no '..' out of "
      "it, no symlinks.\nExit codes: 0 done, 1 refused or not found (the message says why), 2 bad command "
      "line.");
  auto common = [&](CLI::App* sub) {
    add_data_dir_option(*sub, o->data_dir);
    sub->add_option("--skill", o->skill, "Skill id whose workspace to use")->required()->type_name("ID");
  };
  auto run = [o, &status](int (*fn)(const WorkspaceOptions&)) {
    return [o, &status, fn] { status.exit_code = fn(*o); };
  };
  CLI::App* ls = ws->add_subcommand("ls", "List a folder of the workspace: type, size in bytes, name");
  common(ls);
  ls->add_option("PATH", o->path, "Folder inside the workspace (default: the workspace itself)")
      ->type_name("");
  ls->add_flag("--json", o->json, "One JSON object {name, type, size} per line");
  ls->callback(run(run_ls));
  CLI::App* cat = ws->add_subcommand("cat", "Print a file of the workspace, byte for byte");
  common(cat);
  cat->add_option("PATH", o->path, "File inside the workspace")->required()->type_name("");
  cat->callback(run(run_cat));
  CLI::App* rm = ws->add_subcommand("rm", "Remove a file or an empty folder of the workspace");
  common(rm);
  rm->add_option("PATH", o->path, "File or folder inside the workspace")->required()->type_name("");
  rm->add_flag("-r,--recursive", o->recursive, "Remove a folder and everything in it");
  rm->callback(run(run_rm));
}

}  // namespace skillbox::cli
