// tests/mcp/mcp_client.cpp — see mcp_client.h.
#include "mcp/mcp_client.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace skillbox::testing {

McpProcess::McpProcess(const std::vector<std::string>& args) {
  std::string pattern = (std::filesystem::temp_directory_path() / "skillbox-mcp-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  std::vector<std::string> storage = {SKILLBOX_CLI_PATH, "mcp"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  const std::string err_path = (dir_ / "stderr").string();
  pid_ = ::fork();
  if (pid_ == 0) {
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err < 0) ::_exit(126);
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::dup2(err, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  in_ = to_child[1];
  out_ = from_child[0];
  ::signal(SIGPIPE, SIG_IGN);
}

McpProcess::~McpProcess() {
  if (in_ >= 0) ::close(in_);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void McpProcess::send_line(const std::string& line) {
  const std::string text = line + "\n";
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0) << "writing to skillbox mcp failed";
    done += static_cast<size_t>(n);
  }
}

std::optional<nlohmann::json> McpProcess::next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      lines_.push_back(line);
      nlohmann::json m = nlohmann::json::parse(line, nullptr, false);
      EXPECT_TRUE(m.is_object()) << "stdout carried a line that is not a JSON-RPC message: " << line;
      EXPECT_EQ(m.value("jsonrpc", ""), "2.0") << line;
      return m;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{.fd = out_, .events = POLLIN, .revents = 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(out_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

std::vector<nlohmann::json> McpProcess::until_response(const nlohmann::json& id,
                                                       std::chrono::milliseconds timeout) {
  std::vector<nlohmann::json> out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    std::optional<nlohmann::json> m = next(std::max(left, std::chrono::milliseconds(1)));
    if (!m) {
      ADD_FAILURE() << "no response with id " << id.dump() << " in time; stderr:\n" << stderr_text();
      return out;
    }
    out.push_back(*m);
    if (m->contains("id") && (*m)["id"] == id && !m->contains("method")) return out;
  }
}

nlohmann::json McpProcess::request(const nlohmann::json& id, const std::string& method,
                                   const nlohmann::json& params, std::chrono::milliseconds timeout) {
  send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  std::vector<nlohmann::json> got = until_response(id, timeout);
  if (got.empty() || !got.back().contains("id") || got.back()["id"] != id) return nullptr;
  for (size_t i = 0; i + 1 < got.size(); ++i) notifications.push_back(got[i]);
  return got.back();
}

nlohmann::json McpProcess::initialize(const std::string& version) {
  nlohmann::json r = request(0, "initialize",
                             {{"protocolVersion", version},
                              {"capabilities", nlohmann::json::object()},
                              {"clientInfo", {{"name", "skillbox-tests"}, {"version", "1"}}}});
  send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  return r.is_object() && r.contains("result") ? r["result"] : nlohmann::json();
}

int McpProcess::close_and_wait(std::chrono::milliseconds timeout) {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      // What is left on stdout is still read by stdout_lines() checks.
      while (next(std::chrono::milliseconds(50))) {
      }
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

void McpProcess::kill(int signal) const {
  if (pid_ > 0) ::kill(pid_, signal);
}

std::string McpProcess::stderr_text() const {
  std::ifstream in(dir_ / "stderr", std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace skillbox::testing
