// cli/bundle_commands.cpp — `skillbox tools|call|hook DIR ...`: OpenHuman bundles (docs/openhuman.md).
//
// Each command is one invocation through the same runner as `skillbox run`, with the same limit
// flags, --data-dir, --env-file, --json and exit codes; the bundle's lifecycle (init, start, the call,
// stop) runs inside it. --credentials FILE gives the operator's credentials, which the bundle sees
// only as placeholders.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/json_text.h"
#include "base/scratch_dir.h"
#include "cli/commands.h"
#include "cli/input.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "skillbox/env_file.h"
#include "skillbox/json.h"

namespace skillbox::cli {
namespace {

enum class Kind { tools, call, hook };

struct BundleOptions {
  Kind kind = Kind::call;
  std::string dir;
  std::string name;
  std::optional<std::string> input;
  std::optional<std::string> sequence;
  bool json = false;
  LimitFlags limits;
  NarrowingFlags narrowing;
  std::string data_dir;
  std::optional<std::string> env_file;
  std::optional<std::string> credentials;
  std::vector<std::string> map_origin;
  std::string isolation = "process";
};

int report_invalid(const BundleOptions& o, const std::string& error_name, const std::string& message) {
  if (o.json) {
    RunResult r;
    r.outcome = Outcome::invalid;
    r.error = ErrorInfo{.name = error_name, .message = message, .stack = {}, .code = {}};
    emit(stdout, to_json(r) + "\n");
  } else {
    say(o.dir, message);
  }
  return exit_code(Outcome::invalid);
}

/// `o[key]` when it is a string, else "".
std::string text_field(const nlohmann::ordered_json& o, const char* key) {
  if (!o.is_object()) return {};
  const auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
}

/// The human form of `skillbox tools`: one tool per paragraph.
std::string tools_text(const std::string& value_json) {
  const auto tools = base::json_text::parse_ordered(value_json);
  if (!tools.is_array()) return base::escape_json_text(base::json_text::reformat(value_json)) + "\n";
  std::string out;
  for (const auto& t : tools) {
    out += base::escape_text(text_field(t, "name")) + "\n";
    if (const std::string d = text_field(t, "description"); !d.empty())
      out += "  " + base::escape_text(d) + "\n";
    if (t.contains("input_schema") && !t["input_schema"].is_null())
      out += "  input " + dump_json(t["input_schema"], -1, /*ascii=*/false) + "\n";
  }
  if (tools.empty()) out = "(the bundle defines no tools)\n";
  return out;
}

int run_bundle(const BundleOptions& o) {
  Result<Skill> skill = load_skill(o.dir);
  if (!skill) return report_invalid(o, "InvalidSkill", load_problem(o.dir, skill.error().message));
  if (skill->manifest().format != SkillFormat::openhuman)
    return report_invalid(
        o, "InvalidSkill",
        o.dir + " is a skillbox skill (skill.json without manifest.json); run it with 'skillbox run'");

  Invocation invocation{.skill = *skill,
                        .export_name = {},
                        .input_json = "null",
                        .overrides = o.limits.overrides(),
                        .narrowing = o.narrowing.narrowing()};
  if (o.kind == Kind::tools) {
    invocation.export_name = "tools";
  } else if (o.sequence) {
    Result<std::string> text = read_input_file(*o.sequence);
    if (!text) return report_invalid(o, "InvalidInput", "--sequence: " + text.error().message);
    if (const auto problem = json_syntax_error(*text))
      return report_invalid(o, "InvalidInput", "--sequence: not valid JSON at " + *problem);
    invocation.input_json = std::move(*text);
  } else {
    if (o.name.empty())
      return report_invalid(o, "InvalidInput",
                            std::string(o.kind == Kind::call ? "a tool name" : "a hook name") +
                                " is required (or --sequence FILE); 'skillbox tools DIR' lists the tools");
    invocation.export_name = (o.kind == Kind::call ? "tool:" : "hook:") + o.name;
    if (o.input) {
      if (o.input->size() > kMaxInputBytes)
        return report_invalid(o, "InvalidInput", "--input: larger than 16 MiB");
      if (const auto problem = json_syntax_error(*o.input))
        return report_invalid(
            o, "InvalidInput",
            "--input: not valid JSON at " + *problem + "; pass one JSON value, e.g. --input '{\"q\": 1}'");
      invocation.input_json = *o.input;
    } else {
      invocation.input_json = o.kind == Kind::call ? "{}" : "null";
    }
  }

  HostOptions host;
  host.data_dir = o.data_dir;
  // Listing the tools runs the bundle's top-level code, which may use its database, store or files:
  // in a throwaway data directory, so listing changes no state (no binding, no db.sqlite).
  std::optional<base::ScratchDir> scratch;
  if (o.kind == Kind::tools) {
    scratch.emplace("skillbox-bundle-");
    if (scratch->path().empty())
      return report_invalid(o, "InvalidInput",
                            "could not create a temporary data directory to list the tools");
    host.data_dir = scratch->path();
  }
  if (o.env_file) {
    auto values = load_env_file(*o.env_file);
    if (!values) return report_invalid(o, "InvalidInput", "--env-file: " + values.error().message);
    host.env = std::move(*values);
  }
  if (o.credentials) {
    auto creds = load_credentials_file(*o.credentials);
    if (!creds) return report_invalid(o, "InvalidInput", "--credentials: " + creds.error().message);
    host.credentials = std::move(*creds);
  }
  for (const std::string& m : o.map_origin) {
    auto mapping = parse_origin_mapping(m);
    if (!mapping) return report_invalid(o, "InvalidInput", "--map-origin: " + mapping.error().message);
    host.origin_map.push_back(std::move(*mapping));
  }
  // The operator named these targets on the command line: one written as a loopback address
  // (127.0.0.1:PORT, [::1]:PORT) is trusted for its mapping only, without allow_private_addresses.
  host.trust_loopback_origin_map_targets = !host.origin_map.empty();
  const std::unique_ptr<Runner> runner = make_runner(o.isolation, std::move(host));
  const RunResult result = checked_result(runner->run(invocation));
  if (o.json) {
    emit(stdout, to_json(result) + "\n");
  } else {
    emit(stderr, run_result_logs(result));
    for (const Event& e : result.events)
      emit(stderr, "[event] " + base::escape_text(e.type) + " " + base::escape_text(e.data_json) + "\n");
    if (o.kind == Kind::tools && result.outcome == Outcome::ok) {
      emit(stdout, tools_text(result.value_json));
    } else {
      emit(stdout, run_result_value(result));
    }
    // A listing that worked is just the list; the outcome and usage lines are for runs and failures.
    if (o.kind != Kind::tools || result.outcome != Outcome::ok)
      emit(stderr, run_result_report(result, effective_limits(skill->manifest().limits, invocation.overrides),
                                     o.dir));
  }
  return exit_code(result.outcome);
}

void add_common(CLI::App& cmd, BundleOptions& o) {
  cmd.add_option("DIR", o.dir, "Bundle folder (the one that holds manifest.json and index.js)")
      ->required()
      ->type_name("");
  cmd.add_flag("--json", o.json,
               "Print one JSON object {outcome, value, error, logs, events, usage} on stdout");
  add_limit_flags(cmd, o.limits);
  add_narrowing_flags(cmd, o.narrowing);
  add_data_dir_option(cmd, o.data_dir);
  add_isolation_option(cmd, o.isolation);
  cmd.add_option("--env-file", o.env_file,
                 "Values for platform.env from a dotenv file; the bundle still sees only names in "
                 "permissions.env of the skill.json beside manifest.json")
      ->type_name("FILE");
  cmd.add_option("--credentials", o.credentials,
                 "The operator's credentials file (openhuman.md \"Secrets\" in the guides); the bundle sees "
                 "placeholders")
      ->type_name("FILE");
  cmd.add_option("--map-origin", o.map_origin,
                 "Send requests for origin FROM to origin TO (tests against a local server); policy is "
                 "checked on the original URL; a TO on 127.0.0.1 or [::1] needs no "
                 "allow_private_addresses. Repeatable")
      ->type_name("FROM=TO");
  cmd.footer(
      std::string(kLimitFlagsNote) +
      "\nPermissions come from a skill.json beside manifest.json (only \"limits\" and \"permissions\"); "
      "manifest.json grants nothing.\nExit codes: 0 ok, 1 error, 2 invalid, 10 memory_limit, 11 "
      "step_limit, 12 timeout, 13 stack_overflow, 20 crashed, 70 internal.");
}

constexpr const char* kHooks[] = {"init",
                                  "start",
                                  "stop",
                                  "onCronTrigger",
                                  "onSetupStart",
                                  "onSetupSubmit",
                                  "onSetupCancel",
                                  "onListOptions",
                                  "onSetOption",
                                  "onSessionStart",
                                  "onSessionEnd",
                                  "onRpc",
                                  "onOAuthComplete",
                                  "onOAuthRevoked",
                                  "onAuthRevoked",
                                  "onDisconnect",
                                  "onSync",
                                  "onPing",
                                  "onError"};

/// Evaluates the bundle once (no hook runs) to list its tools. Null with the reason when it fails.
nlohmann::ordered_json list_tools(const Skill& skill, std::string& why) {
  // The bundle's code is untrusted like any skill's: behind the worker wall where it is available, and
  // in a throwaway data directory, so `check` changes no state (no binding, no db.sqlite).
  base::ScratchDir scratch("skillbox-bundle-");
  if (scratch.path().empty()) {
    why = "could not create a temporary data directory to evaluate the bundle in";
    return nullptr;
  }
  HostOptions host;
  host.data_dir = scratch.path();
  const std::unique_ptr<Runner> runner =
      make_runner(isolation_report().available ? "process" : "inprocess", std::move(host));
  const RunResult r =
      runner->run(Invocation{.skill = skill, .export_name = "tools", .input_json = "null", .overrides = {}});
  if (r.outcome != Outcome::ok) {
    why = std::string(to_string(r.outcome)) + (r.error ? ": " + r.error->message : "");
    return nullptr;
  }
  // A tree of the worker's text, so its nesting is bounded (base/json_text.h).
  nlohmann::ordered_json tools = base::json_text::parse_ordered(r.value_json);
  if (tools.is_discarded()) {
    why = "the tool list is not JSON text nested at most " + std::to_string(base::json_text::kMaxDepth) +
          " levels deep";
    return nullptr;
  }
  return tools;
}

/// Which hook names the bundle's source mentions (a hint: the hooks are found at run time).
std::vector<std::string> mentioned_hooks(const Skill& skill) {
  std::vector<std::string> out;
  std::FILE* f = std::fopen((skill.dir() / skill.manifest().entry).c_str(), "rb");
  if (f == nullptr) return out;
  std::string text;
  char buf[65536];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (64u << 20)) text.append(buf, n);
  std::fclose(f);
  for (const char* h : kHooks)
    if (text.find(h) != std::string::npos) out.emplace_back(h);
  return out;
}

}  // namespace

nlohmann::ordered_json bundle_report_json(const Skill& skill) {
  const BundleManifest& b = *skill.manifest().bundle;
  nlohmann::ordered_json out;
  out["format"] = "openhuman";
  out["description"] = b.description;
  std::string why;
  out["tools"] = list_tools(skill, why);
  if (!why.empty()) out["tools_error"] = why;
  out["hooks_mentioned"] = mentioned_hooks(skill);
  out["env_requested"] = b.env;
  nlohmann::ordered_json modes = nlohmann::ordered_json::array();
  for (const BundleSetupMode& m : b.setup_modes)
    modes.push_back({{"type", m.type},
                     {"label", m.label},
                     {"provider", m.provider},
                     {"scopes", m.scopes},
                     {"apiBaseUrl", m.api_base_url},
                     {"fields", m.field_names}});
  out["setup"] = {{"required", b.setup_required}, {"label", b.setup_label}, {"modes", modes}};
  out["ignored_keys"] = b.unknown_keys;
  out["grants"] =
      b.has_grants ? "skill.json beside manifest.json" : "none (no skill.json beside manifest.json)";
  return out;
}

std::string bundle_report(const Skill& skill) {
  const BundleManifest& b = *skill.manifest().bundle;
  const Policy& p = skill.manifest().permissions;
  const auto esc = [](const std::string& s) { return base::escape_text(s); };
  std::string out = "\nOpenHuman bundle (manifest.json)\n";
  if (!b.description.empty()) out += "  description  " + esc(b.description) + "\n";
  out += "  granted by   " +
         std::string(b.has_grants
                         ? "skill.json beside manifest.json"
                         : "nothing: no skill.json beside manifest.json, so every permission is denied") +
         "\n";
  out += "  db           quota " + exact_bytes(p.db.quota_bytes) + " (DATA/skills/" + skill.manifest().id +
         "/db.sqlite)\n";
  std::string why;
  const auto tools = list_tools(skill, why);
  if (!why.empty()) {
    out += "  tools        could not be listed: " + esc(why) + "\n";
  } else {
    out += "  tools        " + std::to_string(tools.size()) + "\n";
    for (const auto& t : tools)
      out += "    " + esc(text_field(t, "name")) + "  " + esc(text_field(t, "description")) + "\n";
  }
  std::string hooks;
  for (const std::string& h : mentioned_hooks(skill)) hooks += (hooks.empty() ? "" : ", ") + h;
  out += "  hooks        " + (hooks.empty() ? std::string("(none mentioned)") : hooks) + "\n";
  std::string env;
  for (const std::string& e : b.env) {
    const bool granted = std::find(p.env.begin(), p.env.end(), e) != p.env.end();
    env += (env.empty() ? "" : ", ") + e + (granted ? " (granted)" : " (not granted)");
  }
  out += "  env asked    " + (env.empty() ? std::string("none") : env) + "\n";
  for (const BundleSetupMode& m : b.setup_modes) {
    out += "  setup mode   " + esc(m.type) + (m.label.empty() ? "" : " \"" + esc(m.label) + "\"");
    if (!m.api_base_url.empty()) out += ", apiBaseUrl " + esc(m.api_base_url);
    if (!m.field_names.empty()) {
      std::string f;
      for (const std::string& n : m.field_names) f += (f.empty() ? "" : ", ") + esc(n);
      out += ", fields " + f;
    }
    out += "\n";
  }
  for (const std::string& k : b.unknown_keys)
    out += "  note         manifest.json: " + esc(k) + ": unknown key, ignored (as OpenHuman did)\n";
  return out;
}

void add_bundle_commands(CLI::App& app, CommandStatus& status) {
  auto tools = std::make_shared<BundleOptions>();
  tools->kind = Kind::tools;
  CLI::App* t =
      app.add_subcommand("tools", "List the tools of an OpenHuman bundle: name, description, input schema.");
  add_common(*t, *tools);
  t->callback([tools, &status] { status.exit_code = run_bundle(*tools); });

  auto call = std::make_shared<BundleOptions>();
  call->kind = Kind::call;
  CLI::App* c =
      app.add_subcommand("call", "Run one tool of an OpenHuman bundle (init, start, the tool, stop).");
  add_common(*c, *call);
  c->add_option("TOOL", call->name, "Tool name (see 'skillbox tools DIR')")->type_name("");
  CLI::Option* input =
      c->add_option("--input", call->input, "The tool's arguments as JSON (default {})")->type_name("JSON");
  CLI::Option* seq =
      c->add_option("--sequence", call->sequence,
                    "Run several calls in one runtime: a JSON array of {\"tool\"|\"hook\": NAME, "
                    "\"args\": ...} from FILE ('-' reads standard input)")
          ->type_name("FILE");
  input->excludes(seq);
  c->callback([call, &status] { status.exit_code = run_bundle(*call); });

  auto hook = std::make_shared<BundleOptions>();
  hook->kind = Kind::hook;
  CLI::App* h =
      app.add_subcommand("hook", "Run one hook of an OpenHuman bundle (onRpc, onSync, onSetupSubmit, ...).");
  add_common(*h, *hook);
  h->add_option("NAME", hook->name, "Hook name, e.g. onSync")->required()->type_name("");
  h->add_option("--input", hook->input, "The hook's argument as JSON (default null)")->type_name("JSON");
  h->callback([hook, &status] { status.exit_code = run_bundle(*hook); });
}

}  // namespace skillbox::cli
