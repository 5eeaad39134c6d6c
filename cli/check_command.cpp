// cli/check_command.cpp — `skillbox check DIR`: validate a skill and show what it may do.
#include <cstdio>
#include <memory>
#include <string>

#include "base/escape.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"

namespace skillbox::cli {
namespace {

struct CheckOptions {
  std::string dir;
  bool json = false;
};

int check_skill(const CheckOptions& o) {
  Result<Skill> skill = load_skill(o.dir);
  if (o.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["valid"] = skill.ok();
    if (skill) {
      out["dir"] = skill->dir().string();
      out["manifest"] = manifest_json(skill->manifest());
      if (skill->manifest().bundle) out["bundle"] = bundle_report_json(*skill);
      const IsolationReport isolation = isolation_report();
      out["isolation"] = {{"mode", isolation.available ? "process" : "unavailable"},
                          {"reason", isolation.reason}};
    } else {
      out["error"] = skill.error().message;
    }
    emit(stdout, dump_json(out, 2, /*ascii=*/true) + "\n");
  } else if (skill) {
    emit(stdout, skill_report(*skill));
    if (skill->manifest().bundle) emit(stdout, bundle_report(*skill));
    const IsolationReport isolation = isolation_report();
    emit(stdout, isolation.available
                     ? "\nisolation  process (the default of run): " + isolation.reason + "\n"
                     : "\nisolation  unavailable, so run fails unless given --isolation=inprocess: " +
                           base::escape_text(isolation.reason) + "\n");
  } else {
    emit(stderr, base::escape_text(skill.error().message, /*keep_newlines=*/true) + "\n");
  }
  return skill ? 0 : exit_code(Outcome::invalid);
}

}  // namespace

void add_check_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* check =
      app.add_subcommand("check", "Validate a skill and show its effective limits and permissions.");
  check->add_option("DIR", o->dir, "Skill folder (the one that holds skill.json)")->required()->type_name("");
  check->add_flag(
      "--json", o->json,
      "Print {valid, dir, manifest} or {valid, error} as JSON; manifest is a complete skill.json");
  check->footer("Exit codes: 0 the skill is valid, 2 it is not (every problem is listed, one per line).");
  check->callback([o, &status] { status.exit_code = check_skill(*o); });
}

}  // namespace skillbox::cli
