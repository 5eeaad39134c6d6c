// tests/mcp/mcp_client.h — the built `skillbox mcp` as a client sees it: a child process with pipes on
// stdin and stdout, one JSON-RPC message per line.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skillbox::testing {

class McpProcess {
 public:
  /// Starts SKILLBOX_CLI_PATH with `args` (after "mcp"), stderr into a file.
  explicit McpProcess(const std::vector<std::string>& args);
  /// Kills the process if it still runs.
  ~McpProcess();
  McpProcess(const McpProcess&) = delete;
  McpProcess& operator=(const McpProcess&) = delete;

  /// Writes `line` and a newline to its stdin.
  void send_line(const std::string& line);
  void send(const nlohmann::json& message) { send_line(message.dump()); }
  /// Sends a request and returns its response; the notifications that came before it are added to
  /// notifications(). A test failure (and a null value) when none comes within `timeout`.
  nlohmann::json request(const nlohmann::json& id, const std::string& method,
                         const nlohmann::json& params = nlohmann::json::object(),
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// initialize with `version`, then notifications/initialized. Returns the initialize result.
  nlohmann::json initialize(const std::string& version = "2025-11-25");

  /// The next message on stdout within `timeout` (each line must be one JSON object), or nullopt.
  std::optional<nlohmann::json> next(std::chrono::milliseconds timeout);
  /// Messages read until the response with `id` (that response last), or a failure after `timeout`.
  std::vector<nlohmann::json> until_response(const nlohmann::json& id,
                                             std::chrono::milliseconds timeout = std::chrono::seconds(30));

  /// Closes stdin (end of the session) and waits up to `timeout` for the exit; its exit code, or -1
  /// when it did not exit in time (then it is killed).
  int close_and_wait(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  /// Sends `signal` to the process.
  void kill(int signal) const;
  /// What it wrote on stderr so far.
  [[nodiscard]] std::string stderr_text() const;
  /// Every line it wrote on stdout that the test did not read yet, and each read line, in order.
  [[nodiscard]] const std::vector<std::string>& stdout_lines() const { return lines_; }
  std::vector<nlohmann::json> notifications;

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  std::vector<std::string> lines_;
  std::filesystem::path dir_;
};

}  // namespace skillbox::testing
