// cli/options.h — options and conventions shared by several subcommands.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli11.h"
#include "skillbox/skillbox.h"

namespace skillbox::cli {

/// Exit code for bad command-line input (outcome `invalid`).
inline constexpr int kExitUsage = 2;
/// Exit code for a failure of skillbox itself (outcome `internal`).
inline constexpr int kExitInternal = 70;

/// For the footer of commands with limit flags.
inline constexpr const char* kLimitFlagsNote =
    "Limit flags only lower the skill's own limits (skill.json \"limits\"); a higher value is ignored.";

/// For the footer of commands with narrowing flags.
inline constexpr const char* kNarrowingFlagsNote =
    "--deny-net, --allow-http, --fs-mode and --deny-env only narrow what skill.json \"permissions\" grants.";

/// The limit flags, in the manifest's units. Unset flags leave the skill's limits alone.
struct LimitFlags {
  std::optional<uint64_t> memory_mb;
  std::optional<uint64_t> steps;
  std::optional<uint64_t> timeout_ms;
  std::optional<uint64_t> stack_kb;

  /// The same values as a LimitOverrides (bytes, steps, milliseconds).
  [[nodiscard]] LimitOverrides overrides() const;
};

/// Adds --memory-mb, --steps, --timeout-ms and --stack-kb to `command`, each checked to be an integer
/// within the host's range (Limits::kMin*/kMax*). The command's help must say that they only lower
/// the skill's limits (kLimitFlagsNote).
void add_limit_flags(CLI::App& command, LimitFlags& flags);

/// The per-run narrowing flags (Deno-style): they only take away from what skill.json grants.
struct NarrowingFlags {
  bool deny_net = false;
  std::vector<std::string> allow_http;
  std::string fs_mode;  // "" when not given
  bool deny_env = false;

  /// The same as a PolicyNarrowing (checked by add_narrowing_flags: fs_mode is a mode name).
  [[nodiscard]] PolicyNarrowing narrowing() const;
};

/// Adds --deny-net, --allow-http PREFIX (repeatable), --fs-mode MODE and --deny-env.
void add_narrowing_flags(CLI::App& command, NarrowingFlags& flags);

/// Adds --data-dir DIR (workspaces and the store; HostOptions::data_dir). Empty when not given, which
/// resolve_data_dir() turns into $SKILLBOX_HOME, else $XDG_DATA_HOME/skillbox, else
/// ~/.local/share/skillbox.
void add_data_dir_option(CLI::App& command, std::string& data_dir);

/// Adds --isolation MODE: "process" (the default: a sandboxed worker process per run, WorkerRunner)
/// or "inprocess" (InProcessRunner, the engine's limits only).
void add_isolation_option(CLI::App& command, std::string& isolation);

/// The runner `isolation` ("process" or "inprocess", checked by add_isolation_option) names.
[[nodiscard]] std::unique_ptr<Runner> make_runner(const std::string& isolation, HostOptions host);

/// "process isolation (seccomp, Landlock, rlimits)" or why it is unavailable, for `skillbox check`.
struct IsolationReport {
  bool available = false;
  std::string reason;
};
[[nodiscard]] IsolationReport isolation_report();

/// A CLI11 validator accepting decimal integers from `min` to `max`, with a message in the manifest's
/// style: "expected an integer from 1 to 4096, got \"lots\"".
[[nodiscard]] CLI::Validator integer_range(uint64_t min, uint64_t max);

}  // namespace skillbox::cli
