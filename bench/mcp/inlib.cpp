// bench/mcp/inlib.cpp — the in-library baseline of the MCP benchmark (bench/mcp/run.sh): one skill run
// through the public API as an embedder calls it, Skill::load once, then Runner::run per call.
//
//   bench_mcp_inlib in-process|worker SKILL_DIR ITERATIONS INPUT_JSON
//   bench_mcp_inlib stdio ITERATIONS COMMAND ARGS...
//
// The second form is a minimal MCP client in C++ (so that no client runtime's cost hides the server's):
// it starts COMMAND with pipes, initializes, then times `tools/call` of `echo` with {"n": i}, one
// request line out and lines read until the response, sequentially.
//
// Prints the wall-clock microseconds of each call, one per line; exit 1 when a call is not ok.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "skillbox/skillbox.h"

namespace {

/// One line from `fd` (without its newline), buffered in `buffer`; false at end of file.
bool read_line(int fd, std::string& buffer, std::string& line) {
  for (;;) {
    const size_t newline = buffer.find('\n');
    if (newline != std::string::npos) {
      line = buffer.substr(0, newline);
      buffer.erase(0, newline + 1);
      return true;
    }
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<size_t>(n));
  }
}

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

int stdio_client(int iterations, char** command) {
  int to_child[2];
  int from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) return 1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::execvp(command[0], command);
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  const int in = to_child[1];
  const int out = from_child[0];
  std::string buffer;
  std::string line;
  // Lines until the response whose id is `id` (notifications are skipped).
  const auto response = [&](int id) {
    const std::string tag = "\"id\":" + std::to_string(id);
    while (read_line(out, buffer, line)) {
      // The id as a whole value: followed by ',' or '}' (servers order the members differently).
      for (size_t at = line.find(tag); at != std::string::npos; at = line.find(tag, at + 1)) {
        const char next = at + tag.size() < line.size() ? line[at + tag.size()] : '\0';
        if (next == ',' || next == '}') return true;
      }
    }
    return false;
  };
  write_all(in, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
                R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})"
                "\n");
  if (!response(0)) return 1;
  write_all(in, R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                "\n");
  for (int i = 1; i <= iterations; ++i) {
    const std::string request = R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                                R"(,"method":"tools/call","params":{"name":"echo","arguments":{"n":)" +
                                std::to_string(i) + "}}}\n";
    const auto start = std::chrono::steady_clock::now();
    if (!write_all(in, request) || !response(i)) return 1;
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count();
    // The tool adds one: {"n": i + 1} as JSON text, escaped inside the result's text.
    if (line.find("\\\"n\\\":" + std::to_string(i + 1)) == std::string::npos) {
      std::fprintf(stderr, "call %d: unexpected response %s\n", i, line.c_str());
      return 1;
    }
    std::printf("%lld\n", static_cast<long long>(us));
  }
  ::close(in);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "stdio") return stdio_client(std::atoi(argv[2]), argv + 3);
  if (argc != 5) {
    std::fprintf(stderr, "usage: bench_mcp_inlib in-process|worker SKILL_DIR ITERATIONS INPUT_JSON\n");
    return 2;
  }
  const std::string mode = argv[1];
  skillbox::Result<skillbox::Skill> skill = skillbox::load_skill(argv[2]);
  if (!skill) {
    std::fprintf(stderr, "%s\n", skill.error().message.c_str());
    return 1;
  }
  const int iterations = std::atoi(argv[3]);
  skillbox::HostOptions host;
  host.worker_path = SKILLBOX_WORKER_PATH;
  std::unique_ptr<skillbox::Runner> runner;
  if (mode == "worker")
    runner = std::make_unique<skillbox::WorkerRunner>(host);
  else
    runner = std::make_unique<skillbox::InProcessRunner>(host);
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const skillbox::RunResult r = runner->run(
        skillbox::Invocation{.skill = *skill, .export_name = {}, .input_json = argv[4], .overrides = {}});
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start)
            .count();
    if (r.outcome != skillbox::Outcome::ok) {
      std::fprintf(stderr, "call %d: %s\n", i, r.error ? r.error->message.c_str() : "not ok");
      return 1;
    }
    std::printf("%lld\n", static_cast<long long>(us));
  }
  return 0;
}
