// cli/mcp_command.cpp — `skillbox mcp SKILL_DIR...`: the skills as MCP tools over stdio (docs/mcp.md).
//
// The protocol is the MCP layer's (mcp/session.h); this file loads the skills, lists their tools, makes
// the runner and connects the session to stdin and stdout. stdout carries protocol messages and nothing
// else: every note of skillbox's own goes to stderr.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/scratch_dir.h"
#include "cli/commands.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output.h"
#include "mcp/session.h"
#include "mcp/stdio.h"
#include "mcp/tools.h"
#include "mcp/watch.h"
#include "skillbox/env_file.h"

namespace skillbox::cli {
namespace {

struct McpOptions {
  std::vector<std::string> dirs;
  std::string isolation = "process";
  std::string data_dir;
  LimitFlags limits;
  std::optional<std::string> env_file;
  std::optional<std::string> credentials;
  /// How often the skill folders are polled for changes, in milliseconds; 0: never.
  int64_t watch_ms = 1000;
  std::string tool_names = "prefixed";
};

/// Loads `dirs` and lists their tools as mcp::tools_of does, in a throwaway data directory (listing a
/// bundle runs its top-level code: serving changes no state before the first call, as `skillbox tools`).
/// Errors name the folder; warnings go to `warnings`.
Result<std::vector<mcp::Tool>> list_tools(const McpOptions& o, Runner& runner,
                                          std::vector<std::string>& warnings) {
  const std::vector<std::string>& dirs = o.dirs;
  std::vector<Skill> skills;
  for (const std::string& dir : dirs) {
    Result<Skill> skill = load_skill(dir);
    if (!skill) return Error{load_problem(dir, skill.error().message)};
    skills.push_back(std::move(*skill));
  }
  base::ScratchDir scratch("skillbox-mcp-");
  if (scratch.path().empty())
    return Error{"could not create a temporary data directory to list the tools in"};
  return mcp::tools_of(skills, runner, local_tenant("mcp-tools", scratch.path()), warnings,
                       o.tool_names == "bare" ? mcp::ToolNaming::bare : mcp::ToolNaming::prefixed);
}

/// A problem found before serving: said on stderr; exit code 2.
int refuse(std::string_view folder, const std::string& text) {
  say(folder, text);
  return kExitUsage;
}

int serve_mcp(const McpOptions& o) {
  std::vector<Skill> skills;
  for (const std::string& dir : o.dirs) {
    Result<Skill> skill = load_skill(dir);
    if (!skill) return refuse(dir, load_problem(dir, skill.error().message));
    skills.push_back(std::move(*skill));
  }
  HostOptions host;
  host.data_dir = o.data_dir;
  if (o.env_file) {
    auto values = load_env_file(*o.env_file);
    if (!values) return refuse("", "--env-file: " + values.error().message);
    host.env = std::move(*values);
  }
  if (o.credentials) {
    // The secrets stay on the host side: bundles see placeholders, and the http capability puts the
    // real values into requests to the hosts they are bound to (docs/openhuman.md "Secrets").
    auto creds = load_credentials_file(*o.credentials);
    if (!creds) return refuse("", "--credentials: " + creds.error().message);
    host.credentials = std::move(*creds);
  }
  if (o.isolation == "process") {
    if (Result<void> support = WorkerRunner::check_support(host); !support)
      return refuse("", "process isolation is unavailable here: " + support.error().message +
                            "; pass --isolation inprocess to run the skills behind the engine's limits only");
  }
  // Signals cancel the calls in progress and end the session (as Ctrl-C does for `skillbox run`).
  CancelToken stop;
  const InterruptWatch interrupts(stop, "skillbox: mcp: stopping (the calls in progress are cancelled)\n");
  const std::unique_ptr<Runner> runner = make_runner(o.isolation, host);

  std::vector<mcp::Tool> tools;
  {
    std::vector<std::string> warnings;
    Result<std::vector<mcp::Tool>> listed = list_tools(o, *runner, warnings);
    for (const std::string& w : warnings) say("", "mcp: warning: " + w);
    if (!listed) return refuse("", listed.error().message);
    tools = std::move(*listed);
  }
  say("", "mcp: serving " + std::to_string(tools.size()) + (tools.size() == 1 ? " tool" : " tools") +
              " from " + std::to_string(skills.size()) + (skills.size() == 1 ? " skill" : " skills") +
              " on stdin/stdout (" + o.isolation + " isolation)");

  mcp::LineWriter out(STDOUT_FILENO);
  mcp::Session session(
      mcp::SessionOptions{.tools = std::move(tools),
                          .runner = runner.get(),
                          .overrides = o.limits.overrides(),
                          .tenant = {},
                          .list_changed = o.watch_ms > 0},
      [&out](std::string text) { out.push(std::move(text)); },
      [](std::string text) { say("", "mcp: " + text); });
  // A skill folder that changes is listed again; the client hears of a new list, and a broken edit
  // keeps the last good tools (said on stderr and to the client as a warning log message).
  std::optional<mcp::FolderWatch> watch;
  if (o.watch_ms > 0) {
    std::vector<std::filesystem::path> dirs(o.dirs.begin(), o.dirs.end());
    watch.emplace(std::move(dirs), std::chrono::milliseconds(o.watch_ms), [&o, &runner, &session] {
      std::vector<std::string> warnings;
      Result<std::vector<mcp::Tool>> listed = list_tools(o, *runner, warnings);
      for (const std::string& w : warnings) say("", "mcp: warning: " + w);
      if (!listed) {
        const std::string text =
            "a skill folder changed, but its tools could not be listed, so the last good tools are still "
            "served: " +
            listed.error().message;
        say("", "mcp: " + text);
        session.log("warning", "skillbox", text);
        return;
      }
      const size_t count = listed->size();
      if (session.replace_tools(std::move(*listed)))
        say("", "mcp: the skills changed: serving " + std::to_string(count) +
                    (count == 1 ? " tool" : " tools") + " (notifications/tools/list_changed sent)");
    });
  }
  const mcp::InputEnd end = mcp::read_messages(STDIN_FILENO, session, stop);
  if (watch) watch->stop();
  // End of input is how a client ends a stdio session (MCP "Lifecycle", Shutdown): the calls in
  // progress finish and are answered first. A signal cancels them.
  session.close(end == mcp::InputEnd::eof ? mcp::Session::Close::drain : mcp::Session::Close::cancel);
  out.finish();
  if (end == mcp::InputEnd::error) {
    say("", "mcp: reading standard input failed");
    return kExitInternal;
  }
  return 0;
}

}  // namespace

void add_mcp_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<McpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "mcp", "Serve skills as MCP tools over stdin/stdout, for agents and IDEs (man skillbox-mcp).");
  cmd->add_option("SKILL_DIR", o->dirs,
                  "Skill folders (skill.json: one tool; an OpenHuman bundle with manifest.json: one tool per "
                  "tool it defines)")
      ->required()
      ->expected(1, -1)
      ->type_name("");
  add_isolation_option(*cmd, o->isolation);
  add_data_dir_option(*cmd, o->data_dir);
  add_limit_flags(*cmd, o->limits);
  cmd->add_option(
         "--env-file", o->env_file,
         "Values for env.get (and a bundle's platform.env) from a dotenv file; a skill still sees only "
         "the names its permissions.env grants")
      ->type_name("FILE");
  cmd->add_option("--credentials", o->credentials,
                  "The operator's credentials file for OpenHuman bundles (openhuman.md \"Secrets\" in the "
                  "guides); the bundle sees placeholders")
      ->type_name("FILE");
  cmd->add_option("--tool-names", o->tool_names,
                  "How a bundle's tools are named: prefixed, <skill-id>__<tool> (default), or bare, the "
                  "bundle's own names (for clients that call fixed names)")
      ->check(CLI::IsMember({"prefixed", "bare"}))
      ->type_name("prefixed|bare");
  cmd->add_option("--watch-ms", o->watch_ms,
                  "How often to look for changes in the skill folders, in ms; a change lists the tools again "
                  "and tells the client (notifications/tools/list_changed). 0: never (default 1000)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->type_name("N");
  cmd->footer(
      std::string(kLimitFlagsNote) +
      "\nSpeaks MCP (JSON-RPC 2.0, one message per line, revisions 2025-06-18 and 2025-11-25) on "
      "stdin and stdout;\nnotes go to stderr. Tools are named <skill-id> and <skill-id>__<tool>. Each "
      "call runs in a fresh sandbox.\nEnds at end of input (calls in progress finish first) or on "
      "SIGINT/SIGTERM (they are cancelled).\nExit codes: 0 ended, 2 a skill could not be loaded or "
      "listed, 70 reading stdin failed.");
  cmd->callback([o, &status] { status.exit_code = serve_mcp(*o); });
}

}  // namespace skillbox::cli
