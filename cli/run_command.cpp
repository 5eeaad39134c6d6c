// cli/run_command.cpp — `skillbox run DIR [...]`: one invocation of a skill, reported.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/file_skill.h"
#include "cli/input.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "skillbox/env_file.h"
#include "skillbox/json.h"

namespace skillbox::cli {
namespace {
namespace fs = std::filesystem;

struct RunOptions {
  std::string dir;
  std::string call;
  std::optional<std::string> input;
  std::optional<std::string> input_file;
  bool json = false;
  bool json_stream = false;  // NDJSON: one object per log line and event, then the result
  bool quiet = false;        // -q: no outcome and usage lines
  LimitFlags limits;
  NarrowingFlags narrowing;
  std::string data_dir;
  std::optional<std::string> env_file;
  std::string isolation = "process";
  bool watch = false;  // run again whenever a source file changes
};

/// Longest export name accepted; ES export names are identifiers or short strings.
constexpr size_t kMaxExportNameBytes = 256;

void write_out(const std::string& text) {
  emit(stdout, text);
}
void write_err(const std::string& text) {
  emit(stderr, text);
}

/// The last line of --json-stream: the --json object with "type": "result" first.
std::string result_line(const RunResult& r) {
  return to_json_stream_result(r) + "\n";
}

/// Milliseconds from `origin` to `at` on the monotonic clock, to the microsecond.
double ms_since(Timestamp origin, Timestamp at) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(at - origin).count();
  return static_cast<double>(us) / 1000.0;
}

/// Reports a failure found before any skill code ran (bad skill, bad input): in JSON mode as a run
/// result with outcome `invalid`, else as a message about the skill folder on stderr (the JSON message is
/// that message without "skillbox: DIR: "). Returns the exit code.
int report_invalid(const RunOptions& o, const std::string& error_name, const std::string& message) {
  if (o.json || o.json_stream) {
    RunResult r;
    r.outcome = Outcome::invalid;
    r.error = ErrorInfo{.name = error_name, .message = message, .stack = {}, .code = {}};
    write_out(o.json_stream ? result_line(r) : to_json(r) + "\n");
  } else {
    say(o.dir, message);
  }
  return exit_code(Outcome::invalid);
}

/// Tells a human when a flag asked for more than the skill's own limit (the skill's limit applies): one
/// message about `folder` per such flag.
std::string override_notes(const LimitFlags& flags, const Limits& manifest, std::string_view folder) {
  std::string out;
  const auto note = [&](const char* flag, const std::optional<uint64_t>& value, uint64_t asked, uint64_t have,
                        const std::string& have_text) {
    if (value && asked > have) {
      out += message(folder, "note: " + std::string(flag) + " " + std::to_string(*value) +
                                 " is above the skill's own limit of " + have_text +
                                 "; the lower limit applies");
    }
  };
  note("--memory-mb", flags.memory_mb, flags.memory_mb.value_or(0) * 1024 * 1024, manifest.memory_bytes,
       exact_bytes(manifest.memory_bytes));
  note("--steps", flags.steps, flags.steps.value_or(0), manifest.steps,
       std::to_string(manifest.steps) + " steps");
  note("--timeout-ms", flags.timeout_ms, flags.timeout_ms.value_or(0), manifest.timeout_ms,
       std::to_string(manifest.timeout_ms) + " ms");
  note("--stack-kb", flags.stack_kb, flags.stack_kb.value_or(0) * 1024, manifest.stack_bytes,
       exact_bytes(manifest.stack_bytes));
  return out;
}

/// The skill `o.dir` names: a folder (a skill.json or an OpenHuman bundle), or one JavaScript file run
/// with the command line's grants (cli/file_skill.h). The error is the message for stderr.
Result<Skill> skill_of(const RunOptions& o) {
  std::error_code ec;
  if (fs::is_regular_file(o.dir, ec)) {
    const std::string name = fs::path(o.dir).filename().string();
    if (name == "skill.json" || name == "manifest.json") {
      return Error{"this is the skill's " + name + "; pass the folder that holds it"};
    }
    return file_skill(o.dir, o.narrowing);
  }
  Result<Skill> skill = load_skill(o.dir);  // an OpenHuman bundle too (--call "tool:NAME", docs/openhuman.md)
  if (!skill) return Error{load_problem(o.dir, skill.error().message)};
  if (auto ts = typescript_entry_problem(skill->manifest().entry)) return Error{"skill.json: entry " + *ts};
  return skill;
}

/// The input JSON text --input or --input-file gives ("null" without either); the error is the message.
Result<std::string> input_of(const RunOptions& o) {
  std::string input = "null";
  std::string input_source = "--input";
  if (o.input) {
    if (o.input->size() > kMaxInputBytes) return Error{"--input: larger than 16 MiB; pass a smaller input"};
    input = *o.input;
  } else if (o.input_file) {
    Result<std::string> text = read_input_file(*o.input_file);
    if (!text) return text.error();
    input = std::move(*text);
    input_source = "--input-file";
  }
  if (const auto problem = json_syntax_error(input)) {
    return Error{input_source + ": not valid JSON at " + *problem +
                 "; pass one JSON value, quoted for the shell: --input '{\"name\": \"Ada\"}'"};
  }
  return input;
}

/// Prints what the run did: the --json object, the --json-stream result line, or (human mode) the logs
/// not yet printed live, the value on stdout and the report on stderr.
void report_run(const RunOptions& o, const RunResult& result, size_t streamed,
                const EffectiveLimits& effective) {
  if (o.json) {
    write_out(to_json(result) + "\n");
  } else if (o.json_stream) {
    write_out(result_line(result));
  } else {
    // Logs first (they happened first: printed live), then the value on stdout, then what ended the run.
    for (size_t i = streamed; i < result.logs.size(); ++i) write_err(log_line(result.logs[i]));
    write_out(run_result_value(result));
    if (!o.quiet) {
      write_err(run_result_report(result, effective, o.dir));
    } else if (result.error) {
      write_err(run_result_error(result, o.dir));
    }
  }
}

/// One invocation of `skill` with `input`, reported; returns the exit code.
int run_once(const RunOptions& o, const Skill& skill, const std::string& input, const HostOptions& host) {
  const LimitOverrides overrides = o.limits.overrides();
  const EffectiveLimits effective = effective_limits(skill.manifest().limits, overrides);
  if (!o.json && !o.json_stream) write_err(override_notes(o.limits, skill.manifest().limits, o.dir));
  CancelToken cancel;
  // Before the runner: its threads must not take the signals.
  const InterruptWatch interrupts(cancel,
                                  message(o.dir, "cancelling the run (press Ctrl-C again to quit at once)"));
  // Process isolation (the worker wall) is the default; in-process only when asked for by name.
  const std::unique_ptr<Runner> runner = make_runner(o.isolation, host);
  // A single file's grants are its manifest (cli/file_skill.h): there is nothing left to narrow.
  const bool single_file = !fs::is_directory(o.dir);
  Invocation invocation{.skill = skill,
                        .export_name = o.call,
                        .input_json = input,
                        .overrides = overrides,
                        .narrowing = single_file ? PolicyNarrowing{} : o.narrowing.narrowing(),
                        .cancel = cancel};
  // Live output: human mode prints each log line on stderr as the skill writes it; --json-stream
  // prints one NDJSON object per line and event on stdout, stamped with milliseconds since the start.
  size_t streamed = 0;  // log lines already printed (all of them, unless a runner streams fewer)
  const Timestamp origin = Timestamp::clock::now();
  if (o.json_stream) {
    invocation.observer.on_log = [&](const LogEntry& e, Timestamp at) {
      ++streamed;
      write_out(to_json_stream_log(e, ms_since(origin, at)) + "\n");
    };
    invocation.observer.on_event = [&](const RunEvent& ev, Timestamp at) {
      write_out(to_json_stream_event(ev, ms_since(origin, at)) + "\n");
    };
  } else if (!o.json) {
    invocation.observer.on_log = [&](const LogEntry& e, Timestamp /*at*/) {
      ++streamed;
      write_err(log_line(e));
    };
  }
  const RunResult result = checked_result(runner->run(invocation));
  report_run(o, result, streamed, effective);
  return exit_code(result.outcome);
}

/// Size and modification time of every file --watch looks at, by path.
using Snapshot = std::vector<std::pair<std::string, std::pair<int64_t, uintmax_t>>>;

/// Most files --watch looks at: a folder with more (a home directory, say) is watched in part.
constexpr size_t kMaxWatchedFiles = 10'000;

/// Whether --watch looks at a file: sources and JSON (the manifest, data a skill imports), not the logs
/// or output a user may write into the folder while watching.
bool watched(const fs::path& file) {
  static constexpr std::array<std::string_view, 8> kExtensions = {".js", ".mjs", ".cjs", ".json",
                                                                  ".ts", ".mts", ".cts", ".tsx"};
  const std::string ext = file.extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

/// The source files of the skill at `o.dir` (watched()): a folder's, below it, leaving out node_modules
/// and names that start with "."; for a single file, the ones beside it (what it can import).
Snapshot snapshot(const RunOptions& o) {
  Snapshot out;
  std::error_code ec;
  const bool folder = fs::is_directory(o.dir, ec);
  fs::path root = folder ? fs::path(o.dir) : fs::path(o.dir).parent_path();
  if (root.empty()) root = ".";  // a file named without a folder: the current one
  const auto take = [&](const fs::directory_entry& e) {
    std::error_code e2;
    if (!e.is_regular_file(e2) || !watched(e.path())) return;
    const auto when = e.last_write_time(e2).time_since_epoch().count();
    out.emplace_back(e.path().string(), std::make_pair(static_cast<int64_t>(when), e.file_size(e2)));
  };
  if (!folder) {
    for (fs::directory_iterator it(root, ec), end; !ec && it != end && out.size() < kMaxWatchedFiles;
         it.increment(ec))
      take(*it);
  } else {
    for (fs::recursive_directory_iterator it(root, ec), end;
         !ec && it != end && out.size() < kMaxWatchedFiles; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.starts_with(".") || name == "node_modules") {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      take(*it);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Waits until a source file of the skill changes and stays unchanged for a moment (an editor's save is
/// often several writes). False when Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) came first.
bool wait_for_change(const RunOptions& o) {
  using namespace std::chrono_literals;
  CancelToken stop;
  const InterruptWatch interrupts(stop, message(o.dir, "stopped watching"));
  const Snapshot before = snapshot(o);
  say(o.dir, "watching " + std::to_string(before.size()) + " files for changes (Ctrl-C to stop)");
  Snapshot now = before;
  while (now == before && !stop.cancelled()) {
    std::this_thread::sleep_for(200ms);
    now = snapshot(o);
  }
  for (Snapshot next = snapshot(o); next != now && !stop.cancelled(); next = snapshot(o)) {
    now = std::move(next);
    std::this_thread::sleep_for(100ms);
  }
  if (stop.cancelled()) return false;
  say(o.dir, "a file changed; running again");
  return true;
}

int run_skill(const RunOptions& o) {
  if (o.call.size() > kMaxExportNameBytes) {
    return report_invalid(
        o, "InvalidInput",
        "--call: export names are at most " + std::to_string(kMaxExportNameBytes) + " bytes");
  }
  Result<std::string> input = input_of(o);
  if (!input) return report_invalid(o, "InvalidInput", input.error().message);
  HostOptions host;
  host.data_dir = o.data_dir;
  if (o.env_file) {
    // Replaces the process environment for env.get (still filtered by permissions.env).
    auto values = load_env_file(*o.env_file);
    if (!values) return report_invalid(o, "InvalidInput", "--env-file: " + values.error().message);
    host.env = std::move(*values);
  }
  for (;;) {
    // Read again on every run of --watch: the manifest may have changed too.
    Result<Skill> skill = skill_of(o);
    if (skill) {
      if (auto note = stale_build_note(*skill)) say(o.dir, "note: " + *note);
    }
    const int code =
        skill ? run_once(o, *skill, *input, host) : report_invalid(o, "InvalidSkill", skill.error().message);
    if (!o.watch || code == exit_code(Outcome::cancelled)) return code;
    if (!wait_for_change(o)) return exit_code(Outcome::cancelled);
  }
}

}  // namespace

void add_run_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run =
      app.add_subcommand("run", "Run one export of a skill in a fresh sandbox and report the outcome.");
  run->add_option("DIR", o->dir,
                  "Skill folder (the one that holds skill.json), or one JavaScript file to run with the "
                  "grants of the command line")
      ->required()
      ->type_name("");
  run->add_option("--call", o->call, "Export to call (default: `default`, then `run`)")->type_name("NAME");
  CLI::Option* input =
      run->add_option("--input", o->input, "Input as JSON text, e.g. '{\"name\": \"Ada\"}' (default: null)")
          ->type_name("JSON");
  CLI::Option* input_file = run->add_option("--input-file", o->input_file,
                                            "Read the input JSON from FILE; '-' reads standard input")
                                ->type_name("FILE");
  input->excludes(input_file);
  input_file->excludes(input);
  CLI::Option* json = run->add_flag("--json", o->json,
                                    "Print one JSON object {outcome, value, error, logs, usage} on stdout");
  CLI::Option* json_stream = run->add_flag(
      "--json-stream", o->json_stream,
      "Print NDJSON on stdout while the skill runs: one object per log line and event (with t_ms, "
      "milliseconds since the start on a monotonic clock), then the result object (type \"result\")");
  json->excludes(json_stream);
  json_stream->excludes(json);
  run->add_flag("-q,--quiet", o->quiet,
                "Human mode: leave out the outcome and usage lines (the error stays)");
  add_limit_flags(*run, o->limits);
  add_narrowing_flags(*run, o->narrowing);
  run->get_option("--allow-http")
      ->description(
          "Only URLs under PREFIX for this run (an allow entry, e.g. https://api.example.com/v1/), and still "
          "only those permissions.http.allow grants; repeat for several. For a single FILE.js, which has no "
          "manifest to narrow, it grants them instead (every method; loopback when every PREFIX is "
          "loopback)");
  run->get_option("--fs-mode")
      ->description(
          "At most this workspace mode for this run: none, read, write or readwrite (the run gets what both "
          "this and permissions.fs.mode grant). For a single FILE.js it grants that mode");
  run->add_flag("--watch", o->watch,
                "Run again whenever a file of the skill changes (a single FILE.js: the files beside it); "
                "Ctrl-C stops");
  add_data_dir_option(*run, o->data_dir);
  run->add_option("--env-file", o->env_file,
                  "Values for env.get from a dotenv file (KEY=VALUE lines) instead of the "
                  "process environment; the skill still sees only names in permissions.env")
      ->type_name("FILE");
  add_isolation_option(*run, o->isolation);
  run->footer(
      std::string(kLimitFlagsNote) + "\n" + kNarrowingFlagsNote +
      "\nA single FILE.js runs with deny-all permissions plus what --allow-http and --fs-mode grant; "
      "no manifest.\nIts id is the file's name and a hash of its path (store and workspace are kept per "
      "file)." +
      "\nOutput: the value (pretty JSON) on stdout; skill logs, the error, the outcome and the usage "
      "on stderr.\n"
      "Exit codes: 0 ok, 1 error (the skill threw), 2 invalid (bad skill, input or flags), 10 "
      "memory_limit,\n11 step_limit, 12 timeout, 13 stack_overflow, 20 crashed, 70 internal,\n130 "
      "cancelled (Ctrl-C).");
  run->callback([o, &status] { status.exit_code = run_skill(*o); });
}

}  // namespace skillbox::cli
