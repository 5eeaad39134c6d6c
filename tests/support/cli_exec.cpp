// tests/support/cli_exec.cpp — see cli_exec.h.
#include "support/cli_exec.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace skillbox::testing {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

CliExec run_cli(const std::vector<std::string>& args, const CliOptions& options) {
  std::vector<std::string> argv = {SKILLBOX_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, options);
}

CliExec run_program(const std::vector<std::string>& args, const CliOptions& options) {
  std::string pattern = (std::filesystem::temp_directory_path() / "skillbox-cli-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  const std::filesystem::path tmp = pattern;
  {
    std::ofstream in(tmp / "stdin", std::ios::binary);
    in << options.input;
  }
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = options.env;
  const std::filesystem::path in_path = tmp / "stdin", out_path = tmp / "stdout", err_path = tmp / "stderr";

  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open(in_path.c_str(), O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    // The forked child has one thread: nothing else reads the environment while putenv writes it.
    for (std::string& e : env_storage) ::putenv(e.data());  // NOLINT(concurrency-mt-unsafe)
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_s);
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CliExec r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  std::error_code ec;
  std::filesystem::remove_all(tmp, ec);
  return r;
}

}  // namespace skillbox::testing
