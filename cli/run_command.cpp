// cli/run_command.cpp — `skillbox run DIR [...]`: one invocation of a skill, reported.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/input.h"
#include "cli/interrupt.h"
#include "cli/options.h"
#include "cli/output.h"
#include "cli/report.h"
#include "skillbox/env_file.h"
#include "skillbox/json.h"

namespace skillbox::cli {
namespace {

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

int run_skill(const RunOptions& o) {
  Result<Skill> skill = load_skill(o.dir);  // an OpenHuman bundle too (--call "tool:NAME", docs/openhuman.md)
  if (!skill) return report_invalid(o, "InvalidSkill", load_problem(o.dir, skill.error().message));

  if (o.call.size() > kMaxExportNameBytes) {
    return report_invalid(
        o, "InvalidInput",
        "--call: export names are at most " + std::to_string(kMaxExportNameBytes) + " bytes");
  }

  std::string input = "null";
  std::string input_source = "--input";
  if (o.input) {
    if (o.input->size() > kMaxInputBytes) {
      return report_invalid(o, "InvalidInput", "--input: larger than 16 MiB; pass a smaller input");
    }
    input = *o.input;
  } else if (o.input_file) {
    Result<std::string> text = read_input_file(*o.input_file);
    if (!text) return report_invalid(o, "InvalidInput", text.error().message);
    input = std::move(*text);
    input_source = "--input-file";
  }
  if (const auto problem = json_syntax_error(input)) {
    return report_invalid(o, "InvalidInput",
                          input_source + ": not valid JSON at " + *problem +
                              "; pass one JSON value, quoted for the shell: --input '{\"name\": \"Ada\"}'");
  }

  const LimitOverrides overrides = o.limits.overrides();
  const EffectiveLimits effective = effective_limits(skill->manifest().limits, overrides);
  if (!o.json && !o.json_stream) write_err(override_notes(o.limits, skill->manifest().limits, o.dir));

  HostOptions host;
  host.data_dir = o.data_dir;
  if (o.env_file) {
    // Replaces the process environment for env.get (still filtered by permissions.env).
    auto values = load_env_file(*o.env_file);
    if (!values) return report_invalid(o, "InvalidInput", "--env-file: " + values.error().message);
    host.env = std::move(*values);
  }
  CancelToken cancel;
  // Before the runner: its threads must not take the signals.
  const InterruptWatch interrupts(cancel,
                                  message(o.dir, "cancelling the run (press Ctrl-C again to quit at once)"));
  // Process isolation (the worker wall) is the default; in-process only when asked for by name.
  const std::unique_ptr<Runner> runner = make_runner(o.isolation, std::move(host));
  Invocation invocation{.skill = *skill,
                        .export_name = o.call,
                        .input_json = std::move(input),
                        .overrides = overrides,
                        .narrowing = o.narrowing.narrowing(),
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
  return exit_code(result.outcome);
}

}  // namespace

void add_run_command(CLI::App& app, CommandStatus& status) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run =
      app.add_subcommand("run", "Run one export of a skill in a fresh sandbox and report the outcome.");
  run->add_option("DIR", o->dir, "Skill folder (the one that holds skill.json)")->required()->type_name("");
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
  add_data_dir_option(*run, o->data_dir);
  run->add_option("--env-file", o->env_file,
                  "Values for env.get from a dotenv file (KEY=VALUE lines) instead of the "
                  "process environment; the skill still sees only names in permissions.env")
      ->type_name("FILE");
  add_isolation_option(*run, o->isolation);
  run->footer(std::string(kLimitFlagsNote) + "\n" + kNarrowingFlagsNote +
              "\nOutput: the value (pretty JSON) on stdout; skill logs, the error, the outcome and the usage "
              "on stderr.\n"
              "Exit codes: 0 ok, 1 error (the skill threw), 2 invalid (bad skill, input or flags), 10 "
              "memory_limit,\n11 step_limit, 12 timeout, 13 stack_overflow, 20 crashed, 70 internal,\n130 "
              "cancelled (Ctrl-C).");
  run->callback([o, &status] { status.exit_code = run_skill(*o); });
}

}  // namespace skillbox::cli
