// cli/options.cpp — options shared by several subcommands.
#include "cli/options.h"

#include <limits>

namespace skillbox::cli {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024;
constexpr uint64_t kKiB = 1024;

}  // namespace

void add_narrowing_flags(CLI::App& command, NarrowingFlags& flags) {
  CLI::Option* deny = command.add_flag(
      "--deny-net", flags.deny_net, "No http request for this run, whatever permissions.http.allow grants");
  CLI::Option* allow =
      command
          .add_option(
              "--allow-http", flags.allow_http,
              "Only URLs under PREFIX for this run (an allow entry, e.g. https://api.example.com/v1/), "
              "and still only those permissions.http.allow grants; repeat for several")
          ->type_name("PREFIX")
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  deny->excludes(allow);
  allow->excludes(deny);
  command
      .add_option(
          "--fs-mode", flags.fs_mode,
          "At most this workspace mode for this run: none, read, write or readwrite (the run gets what "
          "both this and permissions.fs.mode grant)")
      ->check(CLI::IsMember({"none", "read", "write", "readwrite"}))
      ->type_name("MODE");
  command.add_flag("--deny-env", flags.deny_env, "env.get returns undefined for every name in this run");
}

PolicyNarrowing NarrowingFlags::narrowing() const {
  PolicyNarrowing n;
  n.deny_net = deny_net;
  n.allow_http = allow_http;
  if (fs_mode == "none") n.fs_mode = FsMode::none;
  if (fs_mode == "read") n.fs_mode = FsMode::read;
  if (fs_mode == "write") n.fs_mode = FsMode::write;
  if (fs_mode == "readwrite") n.fs_mode = FsMode::readwrite;
  n.deny_env = deny_env;
  return n;
}

void add_isolation_option(CLI::App& command, std::string& isolation) {
  command
      .add_option("--isolation", isolation,
                  "process (default): each run in a sandboxed worker process (seccomp, Landlock, rlimits); "
                  "inprocess: in this process, behind the engine's limits only")
      ->check(CLI::IsMember({"process", "inprocess"}))
      ->type_name("MODE");
}

std::unique_ptr<Runner> make_runner(const std::string& isolation, HostOptions host) {
  if (isolation == "inprocess") return std::make_unique<InProcessRunner>(std::move(host));
  return std::make_unique<WorkerRunner>(std::move(host));
}

IsolationReport isolation_report() {
  Result<void> support = WorkerRunner::check_support();
  if (support) return {true, "seccomp, Landlock and rlimits are available"};
  return {false, support.error().message};
}

CLI::Validator integer_range(uint64_t min, uint64_t max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& input) -> std::string {
        std::string failure = "expected an integer from " + range + ", got \"" + input + "\"";
        if (input.empty() || input.size() > 20) return failure;
        uint64_t value = 0;
        for (char c : input) {
          if (c < '0' || c > '9') return failure;
          const auto digit = static_cast<uint64_t>(c - '0');
          if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return failure;
          value = value * 10 + digit;
        }
        if (value < min || value > max) return failure;
        return {};
      },
      "");  // the range is in each option's description
}

LimitOverrides LimitFlags::overrides() const {
  LimitOverrides o;
  if (memory_mb) o.memory_bytes = *memory_mb * kMiB;
  o.steps = steps;
  o.timeout_ms = timeout_ms;
  if (stack_kb) o.stack_bytes = *stack_kb * kKiB;
  return o;
}

void add_data_dir_option(CLI::App& command, std::string& data_dir) {
  command
      .add_option("--data-dir", data_dir,
                  "Data folder for workspaces and the store (default: $SKILLBOX_HOME, else "
                  "$XDG_DATA_HOME/skillbox, else ~/.local/share/skillbox)")
      ->type_name("DIR");
}

void add_limit_flags(CLI::App& command, LimitFlags& flags) {
  const auto range = [](uint64_t min, uint64_t max) {
    return ", " + std::to_string(min) + " to " + std::to_string(max);
  };
  const uint64_t min_mb = (Limits::kMinMemoryBytes + kMiB - 1) / kMiB;
  command
      .add_option("--memory-mb", flags.memory_mb,
                  "Heap limit in MiB" + range(min_mb, Limits::kMaxMemoryBytes / kMiB) + " (limits.memory_mb)")
      ->check(integer_range(min_mb, Limits::kMaxMemoryBytes / kMiB))
      ->type_name("N");
  command.add_option("--steps", flags.steps, "Step budget" + range(1, Limits::kMaxSteps) + " (limits.steps)")
      ->check(integer_range(1, Limits::kMaxSteps))
      ->type_name("N");
  command
      .add_option("--timeout-ms", flags.timeout_ms,
                  "Wall-clock deadline in ms" + range(1, Limits::kMaxTimeoutMs) + " (limits.timeout_ms)")
      ->check(integer_range(1, Limits::kMaxTimeoutMs))
      ->type_name("N");
  command
      .add_option("--stack-kb", flags.stack_kb,
                  "JS stack limit in KiB" +
                      range(Limits::kMinStackBytes / kKiB, Limits::kMaxStackBytes / kKiB) +
                      " (limits.stack_kb)")
      ->check(integer_range(Limits::kMinStackBytes / kKiB, Limits::kMaxStackBytes / kKiB))
      ->type_name("N");
}

}  // namespace skillbox::cli
