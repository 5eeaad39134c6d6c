// cli/skills_command.cpp — `skillbox skills list|rebind`: which skill folder owns which skill id in a
// data directory (docs/manifest.md "Identity", docs/cli.md "skillbox skills").
//
// Everything goes through the public binding API (bind_skill, rebind_skill, skill_bindings in
// skillbox/skillbox.h), the same code every invocation uses to check its folder.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "base/escape.h"
#include "base/skill_id.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "skillbox/skillbox.h"

namespace skillbox::cli {
namespace {

namespace fs = std::filesystem;

struct SkillsOptions {
  std::string data_dir;
  std::string dir;
  std::string id;
  bool json = false;
};

/// Prints "skillbox: skills NAME: MESSAGE" on stderr, escaped (paths and ids may hold anything).
void complain(std::string_view command, std::string_view text) {
  say("", "skills " + std::string(command) + ": " + base::escape_text(text));
}

int list_bindings(const SkillsOptions& o) {
  HostOptions host;
  host.data_dir = o.data_dir;
  auto bindings = skill_bindings(host);
  if (!bindings) {
    complain("list", bindings.error().message);
    return kExitInternal;
  }
  if (o.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const SkillBinding& b : *bindings) {
      nlohmann::ordered_json row = {{"id", b.id}};
      if (b.problem.empty()) {
        std::error_code ec;
        row["dir"] = b.dir.string();
        row["exists"] = fs::is_directory(b.dir, ec);
      } else {
        row["problem"] = b.problem;
      }
      out.push_back(std::move(row));
    }
    emit(stdout, dump_json(out, -1, /*ascii=*/true) + "\n");
    return 0;
  }
  for (const SkillBinding& b : *bindings) {
    std::string line = b.id + "  ";
    if (!b.problem.empty()) {
      line += "(" + b.problem + ")";
    } else {
      std::error_code ec;
      line += b.dir.string();
      if (!fs::is_directory(b.dir, ec)) line += "  (folder missing: rebind the id where the skill is now)";
    }
    emit(stdout, base::escape_text(line) + "\n");
  }
  return 0;
}

int rebind(const SkillsOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) {
    say(o.dir, "not a folder; pass the skill folder that should own the id");
    return kExitUsage;
  }
  std::string id = o.id;
  if (id.empty()) {
    auto skill = Skill::load(o.dir);
    if (!skill) {
      say(o.dir, load_problem(o.dir, skill.error().message) +
                     " (pass --id ID to bind an id without reading skill.json)");
      return kExitUsage;
    }
    id = skill->manifest().id;
  } else if (!base::is_valid_skill_id(id)) {
    complain("rebind", "--id: expected " + std::string(base::kSkillIdRule) + ", got \"" + id + "\"");
    return kExitUsage;
  }
  HostOptions host;
  host.data_dir = o.data_dir;
  std::string previous;
  if (auto bindings = skill_bindings(host)) {
    for (const SkillBinding& b : *bindings) {
      if (b.id == id) previous = b.problem.empty() ? b.dir.string() : "a damaged owner file";
    }
  }
  auto bound = rebind_skill(host, id, o.dir);
  if (!bound) {
    say(o.dir, bound.error().message);
    return kExitInternal;
  }
  std::string line = "skill id " + id + " now belongs to " + bound->dir.string();
  if (!previous.empty() && previous != bound->dir.string()) line += " (was " + previous + ")";
  emit(stdout, base::escape_text(line) + "\n");
  return 0;
}

}  // namespace

void add_skills_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<SkillsOptions>();
  CLI::App* skills = app.add_subcommand(
      "skills",
      "Show and change which skill folder owns each skill id (manifest.md \"Identity\" in the guides).");
  skills->require_subcommand(1);

  CLI::App* list = skills->add_subcommand("list", "Print each bound skill id and the folder that owns it");
  add_data_dir_option(*list, o->data_dir);
  list->add_flag("--json", o->json, "Print one JSON array of {id, dir, exists} (or {id, problem})");
  list->footer("Exit codes: 0 listed, 70 the data directory cannot be read.");
  list->callback([o, &status] { status.exit_code = list_bindings(*o); });

  CLI::App* re = skills->add_subcommand(
      "rebind",
      "Make DIR the owner of its skill id (its store, workspace and secrets); the old folder is refused");
  re->add_option("DIR", o->dir, "Skill folder that should own the id")->required()->type_name("");
  re->add_option("--id", o->id, "The id to bind (default: the id in DIR/skill.json)")->type_name("ID");
  add_data_dir_option(*re, o->data_dir);
  re->footer("Exit codes: 0 bound, 2 bad folder or id, 70 the data directory cannot be written.");
  re->callback([o, &status] { status.exit_code = rebind(*o); });
}

}  // namespace skillbox::cli
