// cli/check_command.cpp — `skillbox check DIR`: validate a skill and show what it may do.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/escape.h"
#include "cli/commands.h"
#include "cli/file_skill.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"

namespace skillbox::cli {
namespace {

struct CheckOptions {
  std::string dir;
  bool json = false;
};

/// Loopback, private, link-local and other non-public hosts, which the http capability refuses
/// unless permissions.http.allow_private_addresses is set (docs/http.md): an allow entry naming one is
/// dead weight, or a sign the author expects it to work. Names are judged by their text only
/// ("localhost", "*.localhost", ".local", ".internal"); addresses by their value.
bool private_host(const std::string& host) {
  if (host == "localhost" || host.ends_with(".localhost") || host.ends_with(".local") ||
      host.ends_with(".internal") || host.ends_with(".lan") || host.ends_with(".home.arpa"))
    return true;
  if (host.starts_with("[")) {
    const std::string a = host.substr(1, host.size() - 2);
    return a == "::1" || a == "::" || a.starts_with("fc") || a.starts_with("fd") || a.starts_with("fe8") ||
           a.starts_with("fe9") || a.starts_with("fea") || a.starts_with("feb") || a.starts_with("::ffff:");
  }
  unsigned b[4] = {0, 0, 0, 0};
  char tail = 0;
  if (std::sscanf(host.c_str(), "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &tail) != 4) return false;
  return b[0] == 127 || b[0] == 10 || b[0] == 0 || (b[0] == 172 && b[1] >= 16 && b[1] <= 31) ||
         (b[0] == 192 && b[1] == 168) || (b[0] == 169 && b[1] == 254) ||
         (b[0] == 100 && b[1] >= 64 && b[1] <= 127);
}

std::vector<std::string> warnings_of(const Skill& skill) {
  std::vector<std::string> out;
  const HttpPolicy& http = skill.manifest().permissions.http;
  if (!http.allow_private_addresses) {
    for (const HttpAllowEntry& e : http.allow.entries()) {
      if (!private_host(e.host)) continue;
      out.push_back("skill.json: permissions.http.allow: " + e.text +
                    " names a loopback or private host, which "
                    "is refused at connect time unless permissions.http.allow_private_addresses is true; set "
                    "it (only if the skill must reach this network) or remove the entry");
    }
  }
  return out;
}

/// Each export a declared MCP tool names must be one the entry module has (a classic script's exports
/// are known only when it runs: a call of a missing one fails then).
void tool_export_problems(const Manifest& m, CodeCheck& code) {
  for (size_t i = 0; i < m.tools.size(); ++i) {
    const std::string& name = m.tools[i].export_name;
    if (std::find(code.exports.begin(), code.exports.end(), name) != code.exports.end()) continue;
    code.problems.push_back({"skill.json", 0,
                             "tools[" + std::to_string(i) + "].export: the entry module has no export \"" +
                                 name + "\"; export it, or name one it has (" +
                                 (code.exports.empty() ? std::string("it exports nothing")
                                                       : "its exports: " +
                                                             [&] {
                                                               std::string all;
                                                               for (const std::string& e : code.exports)
                                                                 all += (all.empty() ? "" : ", ") + e;
                                                               return all;
                                                             }()) +
                                 ")"});
  }
}

std::string where(const CodeProblem& p) {
  return p.line > 0 ? p.file + ":" + std::to_string(p.line) : p.file;
}

int check_skill(const CheckOptions& o) {
  Result<Skill> skill = load_skill(o.dir);
  CodeCheck code;
  std::vector<CodeProblem>& problems = code.problems;
  std::vector<std::string> warnings;
  std::string ts_note;
  if (skill) {
    const std::string& entry = skill->manifest().entry;
    if (auto ts = typescript_entry_problem(entry)) {
      ts_note = "skill.json: entry " + *ts;
      problems.push_back({entry, 0, ts_note});
    } else {
      code = check_code(*skill);
      if (code.problems.empty() && code.entry_is_module) tool_export_problems(skill->manifest(), code);
    }
    warnings = warnings_of(*skill);
  }
  const bool valid = skill.ok() && problems.empty();
  if (o.json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    out["valid"] = valid;
    if (skill) {
      out["dir"] = skill->dir().string();
      out["manifest"] = manifest_json(skill->manifest());
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const CodeProblem& p : problems)
        list.push_back({{"file", p.file}, {"line", p.line}, {"message", p.message}});
      out["problems"] = std::move(list);
      // A module's export names; null for a classic script (its exports are known only when it runs).
      out["exports"] = code.entry_is_module && problems.empty() ? nlohmann::ordered_json(code.exports)
                                                                : nlohmann::ordered_json(nullptr);
      out["warnings"] = warnings;
      if (!problems.empty()) out["error"] = where(problems.front()) + ": " + problems.front().message;
      if (skill->manifest().bundle) out["bundle"] = bundle_report_json(*skill);
      const IsolationReport isolation = isolation_report();
      out["isolation"] = {{"mode", isolation.available ? "process" : "unavailable"},
                          {"reason", isolation.reason}};
    } else {
      out["error"] = load_problem(o.dir, skill.error().message);
    }
    emit(stdout, dump_json(out, 2, /*ascii=*/true) + "\n");
  } else if (!skill) {
    say(o.dir, load_problem(o.dir, skill.error().message));
  } else if (!problems.empty()) {
    for (const CodeProblem& p : problems) {
      const std::string text = p.message == ts_note ? p.message : where(p) + ": " + p.message;
      say(o.dir, base::escape_text(text));  // one line each: a compiler message may hold anything
    }
    say(o.dir, "invalid: the skill's code does not compile or load; fix the problems above");
  } else {
    emit(stdout, skill_report(*skill, &code));
    if (skill->manifest().bundle) emit(stdout, bundle_report(*skill));
    const IsolationReport isolation = isolation_report();
    emit(stdout, isolation.available
                     ? "\nisolation  process (the default of run): " + isolation.reason + "\n"
                     : "\nisolation  unavailable, so run fails unless given --isolation=inprocess: " +
                           base::escape_text(isolation.reason) + "\n");
  }
  if (!o.json)
    for (const std::string& w : warnings) say(o.dir, "warning: " + base::escape_text(w));
  return valid ? 0 : exit_code(Outcome::invalid);
}

}  // namespace

void add_check_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* check = app.add_subcommand(
      "check",
      "Validate a skill: its manifest, and that its code compiles and its imports resolve (nothing runs); "
      "list its exports.");
  check->add_option("DIR", o->dir, "Skill folder (the one that holds skill.json)")->required()->type_name("");
  check->add_flag(
      "--json", o->json,
      "Print {valid, dir, manifest, problems, exports, warnings} or {valid, error} as JSON; manifest is a "
      "complete skill.json");
  check->footer("Exit codes: 0 the skill is valid, 2 it is not (every problem is listed, one per line).");
  check->callback([o, &status] { status.exit_code = check_skill(*o); });
}

}  // namespace skillbox::cli
