// tests/support/cli_exec.h — runs the built `skillbox` binary as a user would, for the CLI tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace skillbox::testing {

struct CliExec {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

struct CliOptions {
  std::filesystem::path cwd;     // empty: the test's own
  std::vector<std::string> env;  // "NAME=value" entries added to (or replacing in) the environment
  std::string input;             // standard input
  int timeout_s = 120;           // then SIGKILL: a hang fails the test, not the run
};

/// Runs `argv` (argv[0] found on $PATH unless it holds a '/'); stdout and stderr go through files, so
/// no pipe can fill up and block it.
CliExec run_program(const std::vector<std::string>& argv, const CliOptions& options = {});

/// run_program with SKILLBOX_CLI_PATH and `args`.
CliExec run_cli(const std::vector<std::string>& args, const CliOptions& options = {});

}  // namespace skillbox::testing
